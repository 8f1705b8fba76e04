"""The storage contract (tests/storage_contract.py), role by role, on every SQLite variant we
ship: a file, a file at the fsync level, memory, and an encrypted file (``backend`` is each in
turn); then the IntentStore contract on each intent store. A new backend writes a file like this
one and passes the same classes unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Ctx
from storage_contract import (
    Backend,
    BranchCatalogContract,
    EffectIndexContract,
    EventLogContract,
    FullTextSearchContract,
    IntentStoreContract,
    ObservationReaderContract,
    RunLogContract,
    SnapshotStoreContract,
    StoreCoreContract,
)

from workbench import Journal
from workbench.errors import WorkbenchError
from workbench.matrix import LiveMatrix
from workbench.storage import IntentLog, IntentStore, Storage, TableIntents, open_storage

# A raw 32-byte key (given to SQLCipher as x'...'): used as is, where a passphrase costs a key
# derivation (SQLCipher 4's PBKDF2, ~0.35 s) at every open. The contract is about storage, not
# the KDF; passphrases are tested in test_encryption.py.
RAW_KEY = bytes(range(32))


class SQLiteFile(Backend):
    def __init__(self, durability: str) -> None:
        self.durability = durability

    def open(self, path: Path, readonly: bool = False) -> Storage:
        return open_storage(str(path), self.durability, readonly=readonly)


class SQLiteMemory(Backend):
    persistent = False

    def open(self, path: Path, readonly: bool = False) -> Storage:
        return open_storage(":memory:", "process")


class SQLiteEncrypted(Backend):
    def open(self, path: Path, readonly: bool = False) -> Storage:
        pytest.importorskip("sqlcipher3")
        return open_storage(str(path), "process", key=RAW_KEY, readonly=readonly)


BACKENDS = {
    "file": SQLiteFile("process"),
    "fsync": SQLiteFile("fsync"),
    "memory": SQLiteMemory(),
    "encrypted": SQLiteEncrypted(),
}


@pytest.fixture(params=list(BACKENDS))
def backend(request: pytest.FixtureRequest) -> Backend:
    return BACKENDS[request.param]


class TestStoreCore(StoreCoreContract):
    pass


class TestEventLog(EventLogContract):
    pass


class TestBranchCatalog(BranchCatalogContract):
    pass


class TestSnapshotStore(SnapshotStoreContract):
    pass


class TestEffectIndex(EffectIndexContract):
    pass


class TestRunLog(RunLogContract):
    pass


class TestFullTextSearch(FullTextSearchContract):
    pass


class TestObservationReader(ObservationReaderContract):
    pass


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
        intents = TableIntents(store)  # type: ignore[arg-type]
        closing = intents.close

        def close() -> None:  # the store goes with its intents
            closing()
            store.close()

        intents.close = close  # type: ignore[method-assign]
        return intents


# -- a backend without the optional roles --------------------------------------------------------


class WithoutOptionalRoles:
    """A backend that has every required role and neither optional one (a SQLite store with
    ``search``, ``observations`` and ``observations_frame`` hidden)."""

    HIDDEN = ("search", "observations", "observations_frame")

    def __init__(self, inner: Storage) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> object:
        if name in self.HIDDEN:
            raise AttributeError(name)
        return getattr(self._inner, name)


def test_a_backend_without_the_optional_roles_still_serves_the_matrix(tmp_path: Path) -> None:
    bare = WithoutOptionalRoles(open_storage(str(tmp_path / "bare.db"), "process"))
    j = Journal(bare, Ctx, 128, "process")  # type: ignore[arg-type]
    try:
        root = j.root()
        root.apply({"x": 1})
        root.observe("recall", 0.5)
        fork = root.fork_at(1, params={"budget": 2})
        fork.observe("recall", 0.75, step=3)
        wide = j.matrix(wide=True)
        assert sorted(zip(wide["branch"], wide["recall"], strict=True)) == [
            (0, 0.5),
            (fork.id, 0.75),
        ]
        live = LiveMatrix(j)
        assert sorted(live.frame["value"].to_list()) == [0.5, 0.75]
        root.observe("cost", 2.0)
        assert live.refresh() == 1
        with pytest.raises(WorkbenchError, match="no full-text search"):
            j.search("recall")
    finally:
        j.close()
