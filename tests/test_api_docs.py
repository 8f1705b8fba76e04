"""The README's server-API table is the API: every route of ``handlers.ROUTES`` has its row,
and every row names a route (the table is what a client author reads)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_lists_every_route_and_only_routes():
    from workbench.server.handlers import ROUTES

    text = README.read_text()
    table = text[text.index("| route | method | returns |") :].split("\n\n", 1)[0]
    documented: set[tuple[str, str]] = set()
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        for route in re.findall(r"`([a-z][a-z0-9./]*)", cells[0]):
            for method in cells[1].split():
                documented.add((route, method))
    served = {(r.path, m) for r in ROUTES for m in r.methods.split()}
    assert served - documented == set(), "routes missing from the README's table"
    assert documented - served == set(), "the README's table names routes the server lacks"
