"""Opening a store's journal with the design's options: ``pragmas`` mapped to the journal's
(busy_timeout to its lock timeout, synchronous to its durability), the key checked before any
file is touched, and a wrong or missing key reported as ``EncryptionKeyError``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ...errors import EncryptionKeyError, InvalidValue, NotAJournal
from ...journal import Journal
from ...units import SessionState
from .exceptions import EncryptionKeyFormatError, EncryptionUnavailableError

__all__ = ["open_journal"]

_PRAGMAS = {"busy_timeout", "synchronous", "foreign_keys"}
_SYNCHRONOUS = {"NORMAL": "process", "1": "process", "FULL": "fsync", "2": "fsync"}
_SYNCHRONOUS |= {"EXTRA": "fsync", "3": "fsync"}


def open_journal(
    db_path: str | os.PathLike[str],
    key: str | bytes | None,
    pragmas: Mapping[str, str],
    readonly: bool,
) -> Journal:
    """The journal of a store (created when missing, unless ``readonly``)."""
    timeout, durability = _pragmas(pragmas)
    if key is not None:
        _check_key(key)
    try:
        return Journal.open(
            db_path,
            SessionState,
            key=key,
            snapshot_every=1024,
            timeout=timeout,
            durability=durability,
            readonly=readonly,
            create=False if readonly else None,
        )
    except EncryptionKeyError:
        raise
    except NotAJournal as e:
        if key is None and "not a database" not in str(e):
            raise
        where = os.fspath(db_path)
        what = (
            f"{where}: this key does not decrypt it (a wrong key, a key given for a plain "
            "file, or not a journal at all)"
            if key is not None
            else f"{where} is encrypted, or not a journal: pass its encryption_key="
        )
        raise EncryptionKeyError(what, path=where) from None


def _pragmas(pragmas: Mapping[str, str]) -> tuple[float, str]:
    unknown = sorted(set(pragmas) - _PRAGMAS)
    if unknown:
        raise InvalidValue(
            f"pragmas {unknown} cannot be set; allowed: {', '.join(sorted(_PRAGMAS))} (the "
            "journal manages journal_mode and key)"
        )
    timeout = 30.0
    if "busy_timeout" in pragmas:
        try:
            timeout = int(pragmas["busy_timeout"]) / 1000
        except (TypeError, ValueError):
            raise InvalidValue("pragmas['busy_timeout'] is milliseconds, e.g. '5000'") from None
    durability = "process"
    if "synchronous" in pragmas:
        level = str(pragmas["synchronous"]).upper()
        if level not in _SYNCHRONOUS:
            raise InvalidValue(
                f"pragmas['synchronous'] is NORMAL or FULL here, not {pragmas['synchronous']!r} "
                "(never less than surviving kill -9)"
            )
        durability = _SYNCHRONOUS[level]
    return timeout, durability


def _check_key(key: Any) -> None:
    if isinstance(key, bytes):
        if len(key) != 32:
            raise EncryptionKeyFormatError("a raw key is exactly 32 bytes; pass a str passphrase")
    elif not isinstance(key, str) or not key:
        raise EncryptionKeyFormatError("a key is a non-empty passphrase (str) or 32 raw bytes")
    try:
        import sqlcipher3  # noqa: F401
    except ImportError:
        raise EncryptionUnavailableError(
            "encrypted stores need SQLCipher: pip install 'lithify-workbench[encryption]'"
        ) from None


DB_ENV = "STATEFORGE_DB"  # the StateForge commands' journal (``lithify sessions`` reads it too)
KEY_ENV = "STATEFORGE_KEY"  # the key of an encrypted one, for the stateforge command


def db_from_env() -> str | None:
    """The journal ``$STATEFORGE_DB`` names, if any."""
    return os.environ.get(DB_ENV) or None
