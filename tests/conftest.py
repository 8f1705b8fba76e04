from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

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
