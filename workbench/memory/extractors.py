"""Two extraction providers for ``AutoExtractionEngine``.

``RuleProvider`` (``"rules"``) is deterministic, offline and fast, enough for tests and runs
without a model: capitalised word runs ("Ada Lovelace"), double-quoted and back-quoted names
("the \"ingest\" step", `query-builder.rs`), and "X is/was Y" sentences as relations.

``ModelProvider`` (``"model"``) asks an OpenAI-compatible chat model (any client with
``chat(key, system, user) -> str``, such as the auditor's ``OpenAIModel``) for the entities and
relations as JSON. It is not deterministic, so the engine journals each answer as an effect
under its key (the key's hash goes to the server as ``Idempotency-Key``): a rerun, or a run
resumed after a kill, reads the answer back and never asks twice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from itertools import accumulate
from typing import Any, Protocol

from ..errors import InvalidValue
from .extraction import EntityMention, Extraction, RelationCandidate
from .model import MAX_CONFIDENCE

# words that open sentences or stand alone capitalised without naming anything
_STOP = frozenset(
    "a an the this that these those it its he she we i they you my our your his her their "
    "in on at of for to from by with and or but if then when while after before as is was "
    "are were be been there here what which who whom whose where why how yes no not so "
    "also however mr mrs ms dr".split()
)
_WORD = re.compile(r"[^\W\d_][\w'’-]*", re.UNICODE)
_QUOTED = re.compile(r"\"([^\"\n]{1,120})\"|“([^”\n]{1,120})”")
_CODE = re.compile(r"`([^`\n]{1,120})`")
_COPULA = re.compile(
    r"\s+(is|was|are|were)\s+(?:(?:a|an|the)\s+)?([^.,;:!?\n\"`“”()]{1,80}?)"
    r"(?=\s+(?:and|but|which|who|because|since|when|while)\b|[.,;:!?\n\"`“”()]|$)"
)


class _Bytes:
    """Character offsets of a str to byte offsets of its UTF-8 encoding."""

    def __init__(self, text: str) -> None:
        self.ascii = text.isascii()
        self.offsets: list[int] = (
            [] if self.ascii else list(accumulate((len(c.encode()) for c in text), initial=0))
        )

    def __call__(self, i: int) -> int:
        return i if self.ascii else self.offsets[i]


class RuleProvider:
    """Deterministic extraction by patterns (see the module docstring)."""

    deterministic = True

    def __init__(self, name: str = "rules", kind: str = "entity") -> None:
        self.name = name
        self.kind = kind

    def extract(self, text: str, key: str = "") -> Extraction:
        at = _Bytes(text)
        # char start, end, kind, confidence, and where the text after it starts (past a quote)
        found: list[tuple[int, int, str, int, int]] = []
        taken: list[tuple[int, int]] = []

        def free(s: int, e: int) -> bool:
            return all(e <= a or s >= b for a, b in taken)

        for m in _CODE.finditer(text):
            found.append((m.start(1), m.end(1), "code", 9000, m.end()))
            taken.append((m.start(), m.end()))
        for m in _QUOTED.finditer(text):
            g = 1 if m.group(1) is not None else 2
            if free(m.start(), m.end()) and m.group(g).strip() == m.group(g):
                found.append((m.start(g), m.end(g), self.kind, 8000, m.end()))
                taken.append((m.start(), m.end()))
        run: list[re.Match[str]] = []

        def close() -> None:
            while run and run[0].group().lower() in _STOP:
                run.pop(0)  # "The Query Builder" names "Query Builder"
            if run:
                s, e = run[0].start(), run[-1].end()
                if free(s, e):
                    found.append((s, e, self.kind, 6000, e))
            run.clear()

        for w in _WORD.finditer(text):
            if w.group()[0].isupper():
                if run and text[run[-1].end() : w.start()] != " ":
                    close()
                run.append(w)
            else:
                close()
        close()
        found.sort()
        mentions: list[EntityMention] = []
        by_start: dict[int, EntityMention] = {}
        for i, (s, e, kind, conf, _) in enumerate(found):
            mention = EntityMention(f"m{i}", text[s:e], kind, (at(s), at(e)), confidence=conf)
            mentions.append(mention)
            by_start[s] = mention
        relations: list[RelationCandidate] = []
        for subj, (_, _, _, _, after) in zip(list(mentions), found, strict=True):
            tail = _COPULA.match(text, after)
            if tail is None:
                continue
            s, e = tail.start(2), tail.end(2)
            while e > s and text[e - 1] == " ":
                e -= 1
            obj = by_start.get(s)
            if obj is None:
                obj = EntityMention(
                    f"m{len(mentions)}", text[s:e], "concept", (at(s), at(e)), confidence=6000
                )
                mentions.append(obj)
                by_start[s] = obj
            assert subj.span is not None  # every rule mention has one
            relations.append(
                RelationCandidate(
                    subj.key,
                    "is" if tail.group(1) in ("is", "are") else "was",
                    obj.key,
                    confidence=6000,
                    span=(subj.span[0], at(e)),
                )
            )
        return Extraction(self.name, mentions, relations)


class ChatModel(Protocol):
    """A chat client: one completion for the call journaled under ``key``."""

    def chat(self, key: str, system: str, user: str) -> str: ...


SYSTEM_PROMPT = (
    "You extract a knowledge graph from the user's text. Reply with JSON only, no prose: "
    '{"entities": [{"key": "e1", "text": "<exact words from the text>", "kind": "person|'
    'organization|place|file|decision|concept|...", "id": "<stable id if the text gives one>", '
    '"confidence": 0.0-1.0}], "relations": [{"subject": "e1", "predicate": "<snake_case verb>", '
    '"object": "e2", "confidence": 0.0-1.0}]}. Each entity text must appear verbatim in the text.'
)


class ModelProvider:
    """Extraction by an OpenAI-compatible chat model (see the module docstring)."""

    deterministic = False

    def __init__(self, client: ChatModel, name: str = "model", prompt: str = SYSTEM_PROMPT) -> None:
        if not callable(getattr(client, "chat", None)):
            raise InvalidValue(
                "ModelProvider needs a chat client with chat(key, system, user) -> str, such "
                "as workbench.agents.auditor.OpenAIModel(base_url=...)"
            )
        self.client = client
        self.name = name
        self.prompt = prompt

    def extract(self, text: str, key: str) -> Extraction:
        reply = self.client.chat(key, self.prompt, text)
        return parse_reply(reply, text, self.name)


def parse_reply(reply: str, text: str, provider: str) -> Extraction:
    """The extraction a model's JSON reply describes; each entity's span is where its text
    first occurs in ``text`` (none when it does not occur verbatim)."""
    body = reply.strip()
    fence = re.match(r"^```(?:json)?\s*(.*?)\s*```$", body, re.S)
    if fence:
        body = fence.group(1)
    try:
        doc = json.loads(body)
    except ValueError:
        raise InvalidValue(
            f"the model's reply is not the JSON asked for: {reply[:200]!r}; nothing recorded"
        ) from None
    if not isinstance(doc, dict):
        raise InvalidValue(f"the model's reply is not a JSON object: {reply[:200]!r}")
    at = _Bytes(text)
    mentions: list[EntityMention] = []
    keys: dict[str, str] = {}
    for i, e in enumerate(_items(doc.get("entities"), "entities")):
        words = str(e.get("text") or "").strip()
        if not words:
            continue
        key = str(e.get("key") or f"e{i + 1}")
        where = text.find(words)
        span = (at(where), at(where + len(words))) if where >= 0 else None
        stable = e.get("id")
        mentions.append(
            EntityMention(
                key,
                words,
                str(e.get("kind") or "entity").strip() or "entity",
                span,
                id=str(stable).strip() if isinstance(stable, str) and stable.strip() else None,
                confidence=_basis_points(e.get("confidence")),
            )
        )
        keys[key] = key
        keys.setdefault(words, key)  # a relation may name an entity by its text
    relations = []
    for r in _items(doc.get("relations"), "relations"):
        s, o = keys.get(str(r.get("subject"))), keys.get(str(r.get("object")))
        pred = str(r.get("predicate") or "").strip()
        if s is None or o is None or not pred:
            continue  # a relation to something the model did not list: not evidence enough
        relations.append(
            RelationCandidate(s, pred, o, confidence=_basis_points(r.get("confidence")))
        )
    return Extraction(provider, mentions, relations)


def _items(value: Any, what: str) -> Sequence[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
        raise InvalidValue(f"the model's {what} are not a list of objects: {str(value)[:200]}")
    return value


def _basis_points(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return MAX_CONFIDENCE // 2  # the model did not say: middling
    v = float(value)
    if v > 1.0:  # already in percent or basis points
        v = v / 100.0 if v <= 100.0 else v / MAX_CONFIDENCE
    return max(0, min(MAX_CONFIDENCE, round(v * MAX_CONFIDENCE)))
