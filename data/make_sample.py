"""Write data/sample.db: a small journal with a fork, for `lithify verify` and the docs."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from workbench import Journal, State


@dataclass
class Notes(State):
    state_name = "lithify.sample/1"
    notes: list[str] = field(default_factory=list)

    def apply(self, delta: dict) -> None:
        self.notes.append(delta["note"])


def main(path: str) -> None:
    Path(path).unlink(missing_ok=True)
    with Journal.open(path, Notes) as j:
        root = j.root()
        for i in range(1, 6):
            text = root.effect(f"model:step-{i}", lambda i=i: f"step {i}: looked at file {i}")
            root.apply({"note": text})
        root.observe("notes", len(root.state().notes))
        fork = root.fork_at(4, params={"budget": 600})
        fork.apply({"note": "forked after step 2"})
        fork.observe("notes", len(fork.state().notes))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).with_name("sample.db")))
