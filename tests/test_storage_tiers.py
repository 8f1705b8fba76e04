"""The two tiers of the storage contract (``workbench.storage.base``): the methods a backend
must write (the abstract methods of the six roles) and the defaults ``Storage`` builds on them.

Three checks: the required methods stay few (at most 30); the role contracts pass on a backend
that writes only those and keeps every default (``OnlyRequired``, over SQLite and over
PostgreSQL), so each default is right, not just present; and the contract suite calls every
method of the contract, required or default, which every backend's test file then runs.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from storage_contract import (
    Backend,
    BranchCatalogContract,
    EffectIndexContract,
    EventLogContract,
    RoleContract,
    RunLogContract,
    SnapshotStoreContract,
    StoreCoreContract,
)

from workbench.storage import (
    BranchCatalog,
    EffectIndex,
    EventLog,
    RunLog,
    SnapshotStore,
    SQLiteStorage,
    Storage,
    StoreCore,
    open_storage,
)
from workbench.storage.postgres import PostgresStorage

ROLES = (StoreCore, EventLog, BranchCatalog, SnapshotStore, EffectIndex, RunLog)
ROLE_CONTRACTS = (
    StoreCoreContract,
    EventLogContract,
    BranchCatalogContract,
    SnapshotStoreContract,
    EffectIndexContract,
    RunLogContract,
)
MOST_REQUIRED = 30


def _is_method(value: object) -> bool:
    return inspect.isfunction(value) or isinstance(value, property)


def contract_methods() -> tuple[set[str], set[str]]:
    """(required, defaults): the public methods of ``Storage`` and its roles, split by whether
    they are abstract."""
    members = {
        name
        for cls in (Storage, *ROLES)
        for name, value in vars(cls).items()
        if not name.startswith("_") and _is_method(value)
    }
    required = set(Storage.__abstractmethods__)
    return required, members - required


REQUIRED, DEFAULTS = contract_methods()
# What a backend keeps besides methods (``meta``, ``lock``, ``intents``...): the roles' fields.
FIELDS = {name for role in ROLES for name in vars(role).get("__annotations__", {})}


def test_a_backend_writes_at_most_30_methods() -> None:
    assert len(REQUIRED) <= MOST_REQUIRED, sorted(REQUIRED)
    declared = [  # each required method is declared by one role, and only there
        name
        for role in ROLES
        for name, value in vars(role).items()
        if getattr(value, "__isabstractmethod__", False)
    ]
    assert sorted(declared) == sorted(REQUIRED)
    assert len(DEFAULTS) >= 25 and not REQUIRED & DEFAULTS
    for name in DEFAULTS:  # the docstring that tells a backend's author what it gets
        assert f"``{name}``" in (Storage.__doc__ or ""), name


def test_both_backends_are_storages_and_a_missing_primitive_is_refused() -> None:
    assert issubclass(SQLiteStorage, Storage) and issubclass(PostgresStorage, Storage)
    assert not SQLiteStorage.__abstractmethods__ and not PostgresStorage.__abstractmethods__

    class Partial(Storage):
        def close(self) -> None:
            pass

    with pytest.raises(TypeError, match="abstract"):
        Partial()  # type: ignore[abstract]


# -- a backend that writes only the required methods --------------------------------------------


def _forward(name: str) -> Any:
    if isinstance(getattr(Storage, name), property):
        return property(lambda self: getattr(self._inner, name))

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._inner, name)(*args, **kwargs)

    call.__name__ = name
    return call


class _Defaults(Storage):
    """Every default of ``Storage``; fields read through to the store it wraps, and nothing
    else (no optional role, nothing a backend adds)."""

    def __init__(self, inner: Storage) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name in FIELDS:
            return getattr(self._inner, name)
        raise AttributeError(name)


# The required methods forwarded to a real backend, every other method Storage's default: the
# contract on it checks the defaults themselves (the backends override most of them).
OnlyRequired: type[Storage] = types.new_class(
    "OnlyRequired", (_Defaults,), exec_body=lambda ns: ns.update({n: _forward(n) for n in REQUIRED})
)


class Primitives(Backend):
    """Opens a backend's store and hands out only its required methods (``OnlyRequired``)."""

    def __init__(self, open_inner: Callable[[Path, bool], Storage], persistent: bool) -> None:
        self.open_inner, self.persistent = open_inner, persistent

    def open(self, path: Path, readonly: bool = False) -> Storage:
        return OnlyRequired(self.open_inner(path, readonly))  # type: ignore[call-arg]


def _sqlite(path: Path, readonly: bool) -> Storage:
    return open_storage(str(path), "process", readonly=readonly)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> Backend:
    if request.param == "sqlite":
        return Primitives(_sqlite, persistent=True)
    pg, db = request.getfixturevalue("pg"), request.getfixturevalue("pg_db")

    def postgres(path: Path, readonly: bool) -> Storage:
        name = "d_" + hashlib.blake2b(str(path).encode(), digest_size=8).hexdigest()
        return open_storage(pg.url(db, journal=name), "process", readonly=readonly)

    return Primitives(postgres, persistent=True)


class TestStoreCoreDefaults(StoreCoreContract):
    pass


class TestEventLogDefaults(EventLogContract):
    pass


class TestBranchCatalogDefaults(BranchCatalogContract):
    pass


class TestSnapshotStoreDefaults(SnapshotStoreContract):
    pass


class TestEffectIndexDefaults(EffectIndexContract):
    pass


class TestRunLogDefaults(RunLogContract):
    pass


def test_only_required_keeps_every_default_and_no_optional_role(tmp_path: Path) -> None:
    store = Primitives(_sqlite, persistent=True).open(tmp_path / "bare.db")
    try:
        for name in DEFAULTS:
            assert getattr(type(store), name) is getattr(Storage, name), name
        assert not hasattr(store, "search") and not hasattr(store, "observations")
    finally:
        store.close()


# -- every method of the contract is called by the contract suite -------------------------------


class Recording:
    """A store that notes the name of every attribute a test asks it for."""

    def __init__(self, inner: Storage, seen: set[str]) -> None:
        self._inner, self._seen = inner, seen

    def __getattr__(self, name: str) -> Any:
        self._seen.add(name)
        return getattr(self._inner, name)


class RecordingBackend(Backend):
    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.opened: list[Storage] = []

    def open(self, path: Path, readonly: bool = False) -> Storage:
        store = _sqlite(path, readonly)
        self.opened.append(store)
        return Recording(store, self.seen)  # type: ignore[return-value]


def role_tests() -> Iterator[tuple[type[RoleContract], str]]:
    for contract in ROLE_CONTRACTS:
        for name in sorted(dir(contract)):
            if name.startswith("test_"):
                yield contract, name


def test_the_contract_suite_calls_every_method_of_the_contract(tmp_path: Path) -> None:
    """Each test of the six role contracts runs once on a SQLite file that records what the
    test asks of it; every required and every default method must be among what was asked. A
    method added to the contract without a test fails here."""
    backend = RecordingBackend()
    for i, (contract, name) in enumerate(role_tests()):
        case = contract()
        case.backend = backend
        folder = tmp_path / str(i)
        folder.mkdir()
        test = getattr(case, name)
        given: dict[str, Any] = {}
        for param in inspect.signature(test).parameters:
            if param == "store":
                given[param] = case.open_store(folder / "contract.db")
            elif param == "tmp_path":
                given[param] = folder
            else:
                raise AssertionError(f"{contract.__name__}.{name} asks for fixture {param!r}")
        try:
            test(**given)
        except pytest.skip.Exception:
            pass
        finally:
            for store in backend.opened:
                store.close()
            backend.opened.clear()
    missing = (REQUIRED | DEFAULTS) - backend.seen
    assert not missing, f"no contract test calls {sorted(missing)}"


def test_every_backend_runs_every_role_contract() -> None:
    """What the suite calls, it calls on every backend: each backend's test file (SQLite's
    variants, PostgreSQL, the defaults alone) subclasses all six role contracts."""
    for module in ("test_storage_contract", "test_postgres", "test_storage_tiers"):
        tests = vars(importlib.import_module(module)).values()
        classes = [c for c in tests if inspect.isclass(c) and c.__name__.startswith("Test")]
        for contract in ROLE_CONTRACTS:
            assert any(issubclass(c, contract) for c in classes), (module, contract.__name__)
