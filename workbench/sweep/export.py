"""A lithify study as an Optuna study in any Optuna storage (``sqlite:///optuna.db``, a
PostgreSQL URL, a journal file storage), so optuna-dashboard and every Optuna tool read it as
it is: its trials with their states, parameters and distributions, values, intermediate
values, constraints, user attributes (each trial's ``branch`` among them) and Optuna's own
attributes. The copy is a snapshot: exporting again after more trials writes a new study.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..errors import Conflict, InvalidValue
from ..storage import is_url
from .trials import Reader, spec_of, to_optuna

if TYPE_CHECKING:
    from ..journal import Journal


def export_study(
    journal: Journal, sweep_id: int, storage: str, name: str | None = None, replace: bool = False
) -> str:
    """Copy study ``sweep_id`` into the Optuna ``storage`` (a URL as ``optuna.create_study``
    takes it) under ``name`` (default ``lithify-sweep-ID``); returns the name. An existing study
    of that name is refused (``Conflict``) unless ``replace``."""
    import optuna

    spec = spec_of(journal, sweep_id)
    if not isinstance(storage, str) or not storage.strip():
        raise InvalidValue("storage is an Optuna storage URL, like sqlite:///optuna.db")
    study_name = name or spec.name
    source = to_optuna(spec, Reader(journal).trials(spec))
    source.set_user_attr(
        "lithify_journal", journal.path if is_url(journal.path) else os.path.abspath(journal.path)
    )
    source.set_user_attr("lithify_sweep", sweep_id)
    try:
        target = optuna.storages.get_storage(storage)
    except Exception as e:  # noqa: BLE001 (Optuna's and the driver's errors, said plainly)
        raise InvalidValue(
            f"Optuna cannot open the storage {storage!r} ({type(e).__name__}: {e}); give a URL "
            "like sqlite:///optuna.db"
        ) from None
    try:
        existing = target.get_study_id_from_name(study_name)
    except KeyError:
        existing = None
    if existing is not None:
        if not replace:
            raise Conflict(
                f"the storage already holds a study named {study_name!r}; give another name "
                "(--name) or replace it (--replace)",
                name=study_name,
            )
        target.delete_study(existing)
    copied = optuna.create_study(
        storage=target, study_name=study_name, directions=list(source.directions)
    )
    for key, value in source.user_attrs.items():
        copied.set_user_attr(key, value)
    for key, value in source._storage.get_study_system_attrs(source._study_id).items():
        target.set_study_system_attr(copied._study_id, key, value)
    copied.add_trials(source.get_trials(deepcopy=False))
    _close(target)
    return study_name


def _close(storage: Any) -> None:
    engine = getattr(storage, "engine", None)
    if engine is not None:
        engine.dispose()  # an RDB storage: release the file (SQLite) or the connections
