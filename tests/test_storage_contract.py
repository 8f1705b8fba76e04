"""The Storage and IntentStore contracts (tests/storage_contract.py) run on every backend and
intent store we ship; a new backend adds a subclass here and passes them unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from storage_contract import IntentStoreContract, StorageContract

from workbench.storage import IntentLog, IntentStore, Storage, TableIntents, open_storage


class TestSQLiteFile(StorageContract):
    def open_store(self, path: Path, readonly: bool = False) -> Storage:
        return open_storage(str(path), "process", readonly=readonly)


class TestSQLiteFsync(StorageContract):
    def open_store(self, path: Path, readonly: bool = False) -> Storage:
        return open_storage(str(path), "fsync", readonly=readonly)


class TestSQLiteMemory(StorageContract):
    persistent = False

    def open_store(self, path: Path, readonly: bool = False) -> Storage:
        return open_storage(":memory:", "process")


# A raw 32-byte key (given to SQLCipher as x'...'): used as is, where a passphrase costs a key
# derivation (SQLCipher 4's PBKDF2, ~0.35 s) at every open. The contract is about storage, not
# the KDF; passphrases are tested in test_encryption.py.
RAW_KEY = bytes(range(32))


class TestSQLiteEncrypted(StorageContract):
    def open_store(self, path: Path, readonly: bool = False) -> Storage:
        pytest.importorskip("sqlcipher3")
        return open_storage(str(path), "process", key=RAW_KEY, readonly=readonly)


class TestIntentLog(IntentStoreContract):
    def open_intents(self, tmp_path: Path) -> IntentStore:
        return IntentLog(str(tmp_path / "j.db"), "process")


class TestIntentLogInMemory(IntentStoreContract):
    def open_intents(self, tmp_path: Path) -> IntentStore:
        return IntentLog(":memory:", "process")


class TestTableIntents(IntentStoreContract):
    def open_intents(self, tmp_path: Path) -> IntentStore:
        pytest.importorskip("sqlcipher3")
        store = open_storage(str(tmp_path / "e.db"), "process", key=RAW_KEY)
        intents = TableIntents(store)
        closing = intents.close

        def close() -> None:  # the store goes with its intents
            closing()
            store.close()

        intents.close = close  # type: ignore[method-assign]
        return intents
