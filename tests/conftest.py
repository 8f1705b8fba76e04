"""Fixtures every test file shares, the run's policies (what counts as slow, hypothesis's
settings) and ``wait_for``: how a test waits for something another thread or process does.

No test asserts on the wall clock or sleeps to let something happen: it waits for the state
it needs, with a deadline generous enough for a loaded machine (a deadline only turns a hang
into a failure that says what never happened). How fast things are is measured in
benchmarks/, never here.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import hypothesis  # noqa: F401 (imported at collection; see _collect_kernel_garbage)
import pytest
from pg_server import PgServer, find_bin_dir

from workbench import Journal, State

# jsonschema (under altair, nbformat and jupyter_server) imports rfc3987-syntax when it is
# installed, for its "iri" format checks, and that package builds 38 Lark parsers at import:
# 1.5-4 s of every test run on a 2-core machine. Nothing here validates IRIs, so the tests run
# without it (jsonschema then leaves the "iri" formats unchecked). Users pay it once per process
# in their first chart; not ours to change here.
sys.modules.setdefault("rfc3987_syntax", None)
# Each test's sweeps start their own pool workers (tests count imports and forks per worker);
# tests/test_pool.py's keep-warm tests turn the kept workers back on for themselves.
os.environ.setdefault("LITHIFY_POOL_KEEP_S", "0")

T = TypeVar("T")


def wait_for(
    predicate: Callable[[], T], *, what: str, timeout: float = 120.0, interval: float = 0.02
) -> T:
    """Poll ``predicate`` until it returns something truthy, and return that. After ``timeout``
    seconds fail the test, saying ``what`` never happened and what the predicate last gave."""
    deadline = time.monotonic() + timeout
    while True:
        got = predicate()
        if got:
            return got
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout:g} s for {what}; the last check gave {got!r}")
        time.sleep(interval)


async def wait_for_async(
    check: Callable[[], Awaitable[T]], *, what: str, timeout: float = 120.0, interval: float = 0.1
) -> T:
    """``wait_for`` in a coroutine (a test that talks to a server on its own event loop): awaits
    ``check()`` until it gives something truthy, sleeping without blocking the loop."""
    deadline = time.monotonic() + timeout
    while True:
        got = await check()
        if got:
            return got
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout:g} s for {what}; the last check gave {got!r}")
        await asyncio.sleep(interval)


def pytest_configure(config: pytest.Config) -> None:
    # Hypothesis's own clocks (a 200 ms deadline per example, the too-slow health check) fail a
    # correct test on a loaded machine: timing is not what these properties are about. Loaded
    # here, before the test modules' @settings are made, so they inherit it. (Not imported at
    # module level: worker processes import this file for Ctx.)
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "lithify", deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    if not config.getoption("hypothesis_profile", None):  # --hypothesis-profile wins
        settings.load_profile("lithify")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A test that needs the PostgreSQL server starts one: slow, like every test that starts a
    # server, so `-m "not slow"` stays pure SQLite. (tryfirst: before -m deselects by marker.)
    for item in items:
        callspec = getattr(item, "callspec", None)
        params = callspec.params.values() if callspec is not None else ()
        # a parameter "postgres" asks for the server through request.getfixturevalue("pg")
        if "pg" in getattr(item, "fixturenames", ()) or any(
            isinstance(v, str) and v.startswith("postgres") for v in params
        ):
            item.add_marker(pytest.mark.slow)


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
    no server binaries are installed). Every test that uses it is marked slow (see above)."""
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
