"""The auditor's model backends and tools, and the tracing that wraps every call.

``MockModel`` is deterministic (the demo and the tests); ``OpenAIModel`` speaks the OpenAI
``/v1/chat/completions`` protocol to any base URL and sends the effect key's hash as an
``Idempotency-Key`` header, so a server can deduplicate a call re-sent after a crash.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from typing import Any, Protocol

from ...errors import InvalidValue, WorkbenchError
from ...events import key_hash
from . import logic


class Model(Protocol):
    """What the auditor asks a model; ``key`` is the journal effect key of the call."""

    name: str

    def plan(self, path: str, text: str, key: str) -> list[str]: ...

    def analyze(self, path: str, text: str, counts: dict[str, int], key: str) -> str: ...

    def summarize(self, notes: list[str], budget: int, key: str) -> str: ...

    def report(self, notes: list[str], key: str) -> str: ...


class MockModel:
    """A deterministic model: the answers are functions of the inputs (see logic.mock_*)."""

    name = "mock"

    def plan(self, path: str, text: str, key: str) -> list[str]:
        return logic.mock_plan(path, text)

    def analyze(self, path: str, text: str, counts: dict[str, int], key: str) -> str:
        return logic.mock_analyze(path, text, counts)

    def summarize(self, notes: list[str], budget: int, key: str) -> str:
        return logic.mock_summarize(notes, budget)

    def report(self, notes: list[str], key: str) -> str:
        return logic.mock_report(notes)


class ModelError(WorkbenchError):
    """The model server failed or answered something unusable (``key``: the call's key)."""

    key: str | None = None


class OpenAIModel:
    """A client for any OpenAI-compatible server (urllib, no SDK): chat completions, and
    embeddings for the memory experiment's ``semantic`` retrieval. Every request carries its
    effect key's hash as ``Idempotency-Key``."""

    name = "openai"

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str = "gpt-4o-mini",
        timeout: float = 120.0,
    ) -> None:
        base = base_url or os.environ.get("LITHIFY_OPENAI_BASE_URL")
        if not base:
            raise InvalidValue(
                "the openai model needs a server: set LITHIFY_OPENAI_BASE_URL (e.g. "
                "http://127.0.0.1:8000) and LITHIFY_OPENAI_API_KEY"
            )
        base = base.rstrip("/")
        root = base if base.endswith("/v1") else base + "/v1"
        self.url = root + "/chat/completions"
        self.embeddings_url = root + "/embeddings"
        self.api_key = (
            api_key if api_key is not None else os.environ.get("LITHIFY_OPENAI_API_KEY", "")
        )
        self.model = model
        self.timeout = timeout

    def _post(self, url: str, key: str, payload: dict[str, Any]) -> Any:
        headers = {
            "Content-Type": "application/json",
            "Idempotency-Key": key_hash(key).hex(),
        }
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        body = json.dumps(payload).encode()
        req = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as e:
            with e:  # the error response holds the connection until closed
                detail = e.read().decode("utf-8", "replace")[:300]
            raise ModelError(
                f"model server answered HTTP {e.code} for {key}: {detail}", key=key
            ) from None
        except (urllib.error.URLError, TimeoutError, OSError) as e:
            raise ModelError(f"could not reach the model server at {url}: {e}", key=key) from None
        except ValueError:
            raise ModelError(f"the model server at {url} did not answer JSON", key=key) from None

    def chat(self, key: str, system: str, user: str) -> str:
        """One chat completion (temperature 0) for the call journaled under ``key``."""
        doc = self._post(
            self.url,
            key,
            {
                "model": self.model,
                "temperature": 0,
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
            },
        )
        try:
            return str(doc["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError):
            raise ModelError(
                f"unexpected chat completion for {key}: {str(doc)[:300]}", key=key
            ) from None

    def embed(self, key: str, texts: list[str]) -> list[list[float]]:
        """Embeddings of ``texts`` (``/v1/embeddings``), in order, for the call under ``key``."""
        doc = self._post(self.embeddings_url, key, {"model": self.model, "input": list(texts)})
        try:
            rows = sorted(doc["data"], key=lambda r: r["index"])
            vectors = [[float(x) for x in r["embedding"]] for r in rows]
        except (KeyError, IndexError, TypeError, ValueError):
            raise ModelError(
                f"unexpected embeddings for {key}: {str(doc)[:300]}", key=key
            ) from None
        if len(vectors) != len(texts):
            raise ModelError(
                f"the server embedded {len(vectors)} of {len(texts)} texts for {key}", key=key
            )
        return vectors

    def plan(self, path: str, text: str, key: str) -> list[str]:
        names = ", ".join(logic.CATEGORIES)
        answer = self.chat(
            key,
            f"You audit source files. Reply with the categories to check, from: {names}.",
            f"File {path} ({len(text)} characters):\n{text[:4000]}",
        )
        picked = [c for c in logic.CATEGORIES if c in answer.lower()]
        return picked or list(logic.CATEGORIES)

    def analyze(self, path: str, text: str, counts: dict[str, int], key: str) -> str:
        facts = "\n".join(logic.finding_line((path, c, n)) for c, n in counts.items() if n > 0)
        return self.chat(
            key,
            "Write a short audit note for the file. Keep every line starting with 'F: ' verbatim.",
            f"## {path}\nCounts:\n{facts or 'No findings.'}\n\nSource:\n{text[:6000]}",
        )

    def summarize(self, notes: list[str], budget: int, key: str) -> str:
        return self.chat(
            key,
            f"Compact these audit notes to at most {budget // 2} tokens, keeping the most severe "
            "'F: ' lines verbatim.",
            "\n".join(notes),
        )

    def report(self, notes: list[str], key: str) -> str:
        return self.chat(
            key, "Write the final audit report; list every 'F: ' line verbatim.", "\n".join(notes)
        )


def make_model(name: str, model_name: str | None = None) -> Model:
    """A model backend by name: "mock" or "openai"."""
    if name == "mock":
        return MockModel()
    if name == "openai":
        return OpenAIModel(
            model=model_name or os.environ.get("LITHIFY_OPENAI_MODEL", "gpt-4o-mini")
        )
    raise InvalidValue(f"unknown model {name!r}; choose mock or openai")


class Calls:
    """Every call the agent makes, traced as it is made (to ``trace`` or $AUDITOR_TRACE);
    model calls slowed by AUDITOR_SLOW_MS."""

    def __init__(
        self,
        model: Model,
        trace: str | os.PathLike[str] | None = None,
        slow_ms: float | None = None,
    ) -> None:
        self.model = model
        trace = trace or os.environ.get("AUDITOR_TRACE") or None
        self._fd = os.open(trace, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if trace else None
        env = os.environ.get("AUDITOR_SLOW_MS")
        self.slow = (slow_ms if slow_ms is not None else float(env) if env else 0.0) / 1000.0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _log(self, line: str) -> None:
        if self._fd is not None:
            os.write(self._fd, (line + "\n").encode("utf-8"))

    def _model(self, line: str) -> None:
        self._log(line)
        if self.slow:
            time.sleep(self.slow)

    def read(self, root: str, path: str) -> str:
        self._log(f"tool read {path}")
        return logic.read_text(root, path)

    def count(self, path: str, text: str, category: str) -> int:
        self._log(f"tool count {path} {category}")
        return logic.count(text, category)

    def plan(self, path: str, text: str, key: str) -> list[str]:
        self._model(f"model plan {path}")
        return self.model.plan(path, text, key)

    def analyze(self, path: str, text: str, counts: dict[str, int], key: str) -> str:
        self._model(f"model analyze {path}")
        return self.model.analyze(path, text, counts, key)

    def summarize(self, notes: list[str], budget: int, key: str) -> str:
        self._model(f"model summarize {len(notes)} notes to {budget}")
        return self.model.summarize(notes, budget, key)

    def report(self, notes: list[str], key: str) -> str:
        self._model(f"model report from {len(notes)} notes")
        return self.model.report(notes, key)
