"""Extraction with the model provider, resumable, for the crash test.

usage: python extractor.py JOURNAL BASE_URL DOCUMENTS
Each document is planned (the model's answer journaled as an effect) and applied; a rerun
skips what is done and reads journaled answers back instead of asking the model again.
"""

from __future__ import annotations

import sys

from workbench import Journal
from workbench.agents.auditor import OpenAIModel
from workbench.memory import AutoExtractionEngine, Memory, ModelProvider


def main() -> None:
    path, url, documents = sys.argv[1], sys.argv[2], int(sys.argv[3])
    engine = AutoExtractionEngine([ModelProvider(OpenAIModel(base_url=url, model="tiny"))])
    with Journal.open(path, Memory) as j:
        b = j.root()
        print("ready", flush=True)
        for i in range(documents):
            text = f"Ada Lovelace met Zoë Ångström on day {i}."
            plan = engine.plan(b, text, provider="model", locator=f"day/{i}", recorded_at=i)
            plan.apply(b)


if __name__ == "__main__":
    main()
