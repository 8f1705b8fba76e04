"""The auditor's model backends and tools, and the tracing that wraps every call.

``MockModel`` is deterministic (the demo and the tests); ``OpenAIModel`` speaks the OpenAI
``/v1/chat/completions`` protocol to any base URL and sends the effect key's hash as an
``Idempotency-Key`` header, so a server can deduplicate a call re-sent after a crash. Each call
has an async twin (``aplan``...): ``OpenAIModel``'s goes through one ``httpx.AsyncClient`` (a
pool of keep-alive connections), so forks waiting on the model wait together.
"""

from __future__ import annotations

import asyncio
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

    async def achat(self, call: str, *args: Any) -> Any:
        """A call by name, awaited (the mock answers at once)."""
        return getattr(self, call)(*args)


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
        self._client: Any = None  # httpx.AsyncClient, made on the first async call
        self._client_loop: Any = None  # the event loop it belongs to

    def _headers(self, key: str) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Idempotency-Key": key_hash(key).hex(),
        }
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _post(self, url: str, key: str, payload: dict[str, Any]) -> Any:
        headers = self._headers(key)
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

    async def _apost(self, url: str, key: str, payload: dict[str, Any]) -> Any:
        """``_post``, awaited, on this model's async client (one per event loop)."""
        import httpx

        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = httpx.AsyncClient(timeout=self.timeout)
            self._client_loop = loop
        try:
            resp = await self._client.post(url, json=payload, headers=self._headers(key))
        except httpx.HTTPError as e:
            raise ModelError(f"could not reach the model server at {url}: {e}", key=key) from None
        if resp.status_code >= 400:
            raise ModelError(
                f"model server answered HTTP {resp.status_code} for {key}: {resp.text[:300]}",
                key=key,
            )
        try:
            return resp.json()
        except ValueError:
            raise ModelError(f"the model server at {url} did not answer JSON", key=key) from None

    async def aclose(self) -> None:
        """Close the async client's connections."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def _chat_payload(self, system: str, user: str) -> dict[str, Any]:
        return {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
        }

    @staticmethod
    def _content(key: str, doc: Any) -> str:
        try:
            return str(doc["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError):
            raise ModelError(
                f"unexpected chat completion for {key}: {str(doc)[:300]}", key=key
            ) from None

    def chat(self, key: str, system: str, user: str) -> str:
        """One chat completion (temperature 0) for the call journaled under ``key``."""
        return self._content(key, self._post(self.url, key, self._chat_payload(system, user)))

    async def achat_completion(self, key: str, system: str, user: str) -> str:
        """``chat``, awaited."""
        doc = await self._apost(self.url, key, self._chat_payload(system, user))
        return self._content(key, doc)

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

    async def achat(self, call: str, *args: Any) -> Any:
        """A call by name (plan, analyze, summarize, report), awaited: the same prompts as the
        synchronous call, its chat completion on the async client."""
        waiting: dict[str, tuple[str, str]] = {}

        class Capture:  # records the prompts the synchronous call would send
            @staticmethod
            def chat(key: str, system: str, user: str) -> str:
                waiting[key] = (system, user)
                return ""

        prompt = getattr(OpenAIModel, call)
        key = str(args[-1])
        prompt(Capture, *args)
        answer = await self.achat_completion(key, *waiting[key])
        return prompt(_Answer(answer), *args)


class _Answer:
    """Stands in for the model in a call whose chat completion is already known: the call
    turns the answer into its result (``plan`` picks categories from it)."""

    def __init__(self, answer: str) -> None:
        self.answer = answer

    def chat(self, key: str, system: str, user: str) -> str:
        return self.answer


MODELS = ("mock", "openai")  # the backends make_model knows


def make_model(name: str, model_name: str | None = None) -> Model:
    """A model backend by name: "mock" or "openai" (``MODELS``)."""
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

    async def aclose(self) -> None:
        """``close``, and the model's async client's connections."""
        closing = getattr(self.model, "aclose", None)
        if closing is not None:
            await closing()
        self.close()

    async def _amodel(self, line: str) -> None:
        self._log(line)
        if self.slow:
            await asyncio.sleep(self.slow)  # the model's latency, waited without blocking

    async def _acall(self, call: str, *args: Any) -> Any:
        achat = getattr(self.model, "achat", None)
        if achat is not None:
            return await achat(call, *args)
        return await asyncio.to_thread(getattr(self.model, call), *args)

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

    async def aplan(self, path: str, text: str, key: str) -> list[str]:
        await self._amodel(f"model plan {path}")
        result: list[str] = await self._acall("plan", path, text, key)
        return result

    async def aanalyze(self, path: str, text: str, counts: dict[str, int], key: str) -> str:
        await self._amodel(f"model analyze {path}")
        return str(await self._acall("analyze", path, text, counts, key))

    async def asummarize(self, notes: list[str], budget: int, key: str) -> str:
        await self._amodel(f"model summarize {len(notes)} notes to {budget}")
        return str(await self._acall("summarize", notes, budget, key))

    async def areport(self, notes: list[str], key: str) -> str:
        await self._amodel(f"model report from {len(notes)} notes")
        return str(await self._acall("report", notes, key))
