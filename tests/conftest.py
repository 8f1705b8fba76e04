from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import hypothesis  # noqa: F401 (imported at collection; see _collect_kernel_garbage)
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


@pytest.fixture(autouse=True)
def _collect_kernel_garbage(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a slow test (kernels, servers, processes), collect its garbage now. Kernel clients
    leave zmq sockets and event loops to the collector; collected later, at a random moment,
    their finalizers' warnings run pytest code in the middle of whatever is running, and when
    that is pytest building an AST (rewriting a module it imports: hypothesis, a pytest plugin,
    is imported here at collection for that reason, not by its end-of-session summary) CPython
    3.11 fails with "AST constructor recursion depth mismatch"."""
    yield
    if request.node.get_closest_marker("slow") is not None:
        import gc

        gc.collect()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """The same, once more before the summary (whose plugins import modules pytest rewrites)."""
    import gc

    gc.collect()
