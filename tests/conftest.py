from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pg_server import PgServer, find_bin_dir

from workbench import Journal, State


@dataclass
class Ctx(State):
    """A small state: a list of numbers and their running total."""

    state_name = "tests.ctx/1"
    items: list[int] = field(default_factory=list)
    total: int = 0

    def apply(self, delta: dict) -> None:
        self.items.append(delta["x"])
        self.total += delta["x"]


@pytest.fixture(params=["memory", "file"])
def journal(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Journal]:
    """The contract fixture: every test using it runs on an in-memory and an on-disk journal."""
    j = (
        Journal.in_memory(Ctx)
        if request.param == "memory"
        else Journal.open(tmp_path / "j.db", Ctx)
    )
    yield j
    j.close()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "run.db"


@pytest.fixture(scope="session")
def pg() -> Iterator[PgServer]:
    """A real PostgreSQL server for the whole test session (skipped, with the reason, only when
    no server binaries are installed)."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        pytest.skip("no PostgreSQL server binaries (apt-get install postgresql)")
    pytest.importorskip("psycopg")
    server = PgServer(bin_dir)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def pg_db(pg: PgServer) -> str:
    """A database of the session's server that tests share (each uses its own journal names)."""
    return pg.create_database("lithify_tests")
