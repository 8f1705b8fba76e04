"""The fork of benchmarks/scale.py's sweep: half a second of waiting (a model call's worth),
20 events of which 5 observations. Async, so one worker process runs many at once."""

from __future__ import annotations

import asyncio

from workbench import Journal


async def fork(journal: str, branch: int, params: dict) -> None:
    with Journal.open(journal) as j:
        b = j.branch(branch)
        await asyncio.sleep(0.5)
        for i in range(15):
            b.apply({"step": i, "n": params["n"]})
        for m in range(5):
            b.observe(f"m{m}", float(params["n"] + m))
