"""Retrieval metrics and evaluation: Hit@K, Recall@K, nDCG@K and MRR, overall and per category.

    cases = [{"id": "q1", "category": "temporal", "relevant": ["d3"], "ranked": ["d7", "d3", "d1"]}]
    df = evaluate(cases, ks=[1, 5, 10])     # polars: one row overall, one per category
    record(df, branch)                      # the overall numbers as observations (matrix, charts)

Definitions (binary relevance, ``ranked`` deduplicated keeping the first occurrence):
Hit@K = 1 if any relevant id is in the top K; Recall@K = |relevant ∩ top K| / |relevant|;
nDCG@K = DCG@K / IDCG@K with DCG = Σ 1/log2(rank + 1) over relevant ids in the top K and
IDCG the same for a perfect ranking of min(K, |relevant|) ids; MRR = 1/rank of the first
relevant id (0 if none is ranked). Each is averaged over cases. Cases without relevant ids
(e.g. abstention questions) cannot be scored and are counted in ``skipped``.

Loaders read the public LoCoMo and LongMemEval files that users download themselves and
return the questions (with their relevant ids) and the documents to rank.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InvalidValue

if TYPE_CHECKING:
    import polars as pl

    from .branch import Branch


def _dedup(ids: Sequence[Any]) -> list[Any]:
    return list(dict.fromkeys(ids))


def case_metrics(
    relevant: Iterable[Any], ranked: Sequence[Any], ks: Sequence[int]
) -> dict[str, float]:
    """Hit@K, Recall@K, nDCG@K for each K, and MRR, for one case."""
    rel = set(relevant)
    if not rel:
        raise InvalidValue("a case needs at least one relevant id")
    order = _dedup(ranked)
    out: dict[str, float] = {}
    first = next((i for i, x in enumerate(order, 1) if x in rel), None)
    out["mrr"] = 1.0 / first if first else 0.0
    for k in ks:
        top = order[:k]
        hits = [i for i, x in enumerate(top, 1) if x in rel]
        out[f"hit@{k}"] = 1.0 if hits else 0.0
        out[f"recall@{k}"] = len(hits) / len(rel)
        dcg = sum(1.0 / math.log2(i + 1) for i in hits)
        idcg = sum(1.0 / math.log2(i + 1) for i in range(1, min(k, len(rel)) + 1))
        out[f"ndcg@{k}"] = dcg / idcg
    return out


def evaluate(cases: Iterable[Mapping[str, Any]], ks: Sequence[int] = (1, 5, 10)) -> pl.DataFrame:
    """Mean metrics over the cases: a row ``group="all"`` and one per category."""
    import polars as pl

    ks = list(ks)
    if not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise InvalidValue(f"ks must be positive ints, not {ks!r}")
    per: dict[str, list[dict[str, float]]] = {"all": []}
    skipped: dict[str, int] = {"all": 0}
    for i, case in enumerate(cases):
        if "relevant" not in case or "ranked" not in case:
            raise InvalidValue(f"case {case.get('id', i)!r} needs 'relevant' and 'ranked' lists")
        cat = case.get("category")
        groups = ["all"] + ([str(cat)] if cat is not None else [])
        for g in groups:
            per.setdefault(g, [])
            skipped.setdefault(g, 0)
        if not list(case["relevant"]):
            for g in groups:
                skipped[g] += 1
            continue
        m = case_metrics(case["relevant"], list(case["ranked"]), ks)
        for g in groups:
            per[g].append(m)
    names = ["mrr"] + [f"{m}@{k}" for k in ks for m in ("hit", "recall", "ndcg")]
    rows = []
    for g, ms in per.items():
        row: dict[str, Any] = {"group": g, "n": len(ms), "skipped": skipped[g]}
        for name in names:
            row[name] = sum(m[name] for m in ms) / len(ms) if ms else None
        rows.append(row)
    schema = {
        "group": pl.Utf8,
        "n": pl.Int64,
        "skipped": pl.Int64,
        **{n: pl.Float64 for n in names},
    }
    return pl.DataFrame(rows, schema=schema)


def record(
    results: pl.DataFrame, branch: Branch, prefix: str = "", per_category: bool = False
) -> int:
    """Observe the overall metrics (and optionally each category's, as ``metric/category``) on
    a branch, so evaluations flow into the matrix and charts; returns how many were written."""
    n = 0
    for row in results.iter_rows(named=True):
        if row["group"] != "all" and not per_category:
            continue
        suffix = "" if row["group"] == "all" else f"/{row['group']}"
        for name, value in row.items():
            if name in ("group", "skipped") or value is None:
                continue
            branch.observe(f"{prefix}{name}{suffix}", float(value))
            n += 1
    return n


# -- datasets ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """A question to answer by retrieval: which documents hold the evidence."""

    id: str
    question: str
    answer: Any
    relevant: list[str]
    category: str | None = None


@dataclass(frozen=True)
class Document:
    """A retrievable unit (a dialogue turn, a session)."""

    id: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Note:
    """A text derived from documents, citing them: a LoCoMo observation (``kind``
    "observation", about ``meta["speaker"]``) or session summary ("summary")."""

    id: str
    text: str
    cites: list[str]
    kind: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Unread:
    """Evidence a loader could not match to a document: where it was (a question's or a note's
    id), what it said, and why (``unreadable``: not an id; ``no such turn``: an id no turn of
    its conversation has)."""

    where: str
    value: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"where": self.where, "value": self.value, "reason": self.reason}


@dataclass(frozen=True)
class Dataset:
    """Questions, the documents that answer them, and what the loader had to make of the file:
    ``repaired`` evidence strings (several ids in one, or a misspelt id, read as turn ids) and
    the ``unread`` evidence it could not match to any document (left out of ``relevant``)."""

    name: str
    questions: list[Question]
    documents: list[Document]
    groups: dict[str, list[str]] = field(default_factory=dict)  # question id -> candidate doc ids
    notes: list[Note] = field(default_factory=list)  # derived texts citing documents
    repaired: int = 0
    unread: list[Unread] = field(default_factory=list)

    def evidence_report(self) -> dict[str, Any]:
        """What the loader repaired and could not read, as JSON (for receipts and the CLI)."""
        return {"repaired": self.repaired, "unread": [u.to_json() for u in self.unread]}

    def evidence_summary(self) -> str | None:
        """One line on the evidence the loader repaired or could not read (None: all read)."""
        if not self.repaired and not self.unread:
            return None
        parts = []
        if self.repaired:
            parts.append(f"{self.repaired} evidence strings split or corrected into turn ids")
        if self.unread:
            shown = ", ".join(f"{u.value!r} ({u.where}, {u.reason})" for u in self.unread[:5])
            more = f" and {len(self.unread) - 5} more" if len(self.unread) > 5 else ""
            parts.append(
                f"{len(self.unread)} evidence ids name no turn and were left out: {shown}{more}"
            )
        return "; ".join(parts)

    def cases(
        self, ranker: Callable[[Question, list[Document]], Sequence[str]]
    ) -> list[dict[str, Any]]:
        """Cases for ``evaluate``; ``ranker(question, candidates)`` ranks document ids."""
        by_id = {d.id: d for d in self.documents}
        out = []
        for q in self.questions:
            pool = [by_id[i] for i in self.groups.get(q.id, [])] or self.documents
            out.append(
                {
                    "id": q.id,
                    "category": q.category,
                    "relevant": q.relevant,
                    "ranked": list(ranker(q, pool)),
                }
            )
        return out


def _read_json(path: str | Path) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidValue(f"no file at {path}; download the dataset and pass its path") from None
    except ValueError as e:
        raise InvalidValue(f"{path} is not JSON: {e}") from None


LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}


_DIA_SPLIT = re.compile(r"[\s,;]+")
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")  # "D11:26", and the published file's "D:11:26"


def _dia_ids(value: Any, known: set[str]) -> tuple[list[str], int, list[tuple[str, str]]]:
    """The turn ids in evidence as the published file writes it: one id, a list of them, or
    several in one string separated by semicolons, commas or spaces ("D8:6; D9:17"), some
    misspelt ("D:11:26"). Returns the ids of turns in ``known`` (in order, once each), how many
    strings had to be split or corrected, and (piece, reason) for what names no turn."""
    items = value if isinstance(value, list) else [value]
    ids: list[str] = []
    repaired = 0
    unread: list[tuple[str, str]] = []
    for item in items:
        if not isinstance(item, str):
            unread.append((json.dumps(item), "unreadable"))
            continue
        pieces = [p for p in _DIA_SPLIT.split(item.strip()) if p]
        fixed = False
        for piece in pieces or [item]:
            shape = _DIA_ID.fullmatch(piece)
            turn = piece if piece in known or shape is None else f"D{shape[1]}:{shape[2]}"
            if turn in known:
                fixed = fixed or turn != piece
                if turn not in ids:
                    ids.append(turn)
            else:
                unread.append((piece, "unreadable" if shape is None else "no such turn"))
        if len(pieces) > 1 or fixed:
            repaired += 1
    return ids, repaired, unread


def load_locomo(path: str | Path) -> Dataset:
    """LoCoMo (``locomo10.json``): samples with a ``conversation`` of ``session_N`` turn lists
    (``dia_id``, ``speaker``, ``text``) and ``qa`` items (``question``, ``answer``, ``evidence``
    dia_ids, numeric ``category``). Documents are turns; a question ranks its own sample's.
    Notes: each session's ``observation`` per speaker (``[text, dia_id or dia_ids]``, citing
    the turns it names that exist) and its ``session_summary`` (citing the session's turns).
    Evidence written as several ids in one string, or misspelt, is read as the turn ids it
    names; what names no turn is left out and listed in the dataset's ``unread``."""
    data = _read_json(path)
    if not isinstance(data, list):
        raise InvalidValue(f"{path}: LoCoMo is a JSON list of samples")
    questions, documents, groups, notes = [], [], {}, []
    repaired = 0
    unread: list[Unread] = []
    for s_i, sample in enumerate(data):
        sid = str(sample.get("sample_id", s_i))
        conv = sample.get("conversation") or {}
        turn_ids = []
        sessions: dict[str, list[str]] = {}
        for key in sorted(
            (k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])
        ):
            for turn in conv[key] or []:
                tid = f"{sid}:{turn['dia_id']}"
                documents.append(
                    Document(
                        tid,
                        str(turn.get("text", "")),
                        {
                            "speaker": turn.get("speaker"),
                            "session": key,
                            "when": conv.get(f"{key}_date_time"),
                        },
                    )
                )
                turn_ids.append(tid)
                sessions.setdefault(key, []).append(tid)
        dia = {t[len(sid) + 1 :] for t in turn_ids}  # the sample's dia_ids
        observations = sample.get("observation") or {}
        for key in sorted(sessions, key=lambda k: int(k.split("_")[1])):
            per_speaker = observations.get(f"{key}_observation") or {}
            for speaker in sorted(per_speaker) if isinstance(per_speaker, dict) else []:
                for k, item in enumerate(per_speaker[speaker] or []):
                    if not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str):
                        continue
                    found, _, _ = _dia_ids(item[1], dia)
                    cites = [f"{sid}:{d}" for d in found]
                    if cites and item[0].strip():
                        notes.append(
                            Note(
                                f"{sid}:{key}:observation:{speaker}:{k}",
                                item[0],
                                cites,
                                "observation",
                                {"speaker": speaker, "session": key},
                            )
                        )
            summary = (sample.get("session_summary") or {}).get(f"{key}_summary")
            if isinstance(summary, str) and summary.strip():
                notes.append(
                    Note(
                        f"{sid}:{key}:summary", summary, sessions[key], "summary", {"session": key}
                    )
                )
        for q_i, qa in enumerate(sample.get("qa") or []):
            qid = f"{sid}:q{q_i}"
            cat = qa.get("category")
            found, fixed, missing = _dia_ids(qa.get("evidence") or [], dia)
            repaired += fixed
            unread += [Unread(qid, piece, why) for piece, why in missing]
            questions.append(
                Question(
                    qid,
                    str(qa.get("question", "")),
                    qa.get("answer", qa.get("adversarial_answer")),
                    [f"{sid}:{e}" for e in found],
                    LOCOMO_CATEGORIES.get(cat, None if cat is None else str(cat)),
                )
            )
            groups[qid] = turn_ids
    return Dataset("locomo", questions, documents, groups, notes, repaired, unread)


def load_longmemeval(path: str | Path) -> Dataset:
    """LongMemEval (``longmemeval_s.json`` / ``_m`` / ``_oracle``): items with ``question_id``,
    ``question_type``, ``question``, ``answer``, ``haystack_session_ids``,
    ``haystack_sessions`` (lists of ``role``/``content`` turns) and ``answer_session_ids``.
    Documents are sessions; a question ranks its own haystack. Abstention questions
    (``_abs`` ids) carry no evidence and are skipped by ``evaluate``."""
    data = _read_json(path)
    if not isinstance(data, list):
        raise InvalidValue(f"{path}: LongMemEval is a JSON list of questions")
    questions, documents, groups, seen = [], [], {}, set()
    for item in data:
        qid = str(item["question_id"])
        ids = [str(x) for x in item.get("haystack_session_ids") or []]
        sessions = item.get("haystack_sessions") or []
        for sid, turns in zip(ids, sessions, strict=True):
            if sid not in seen:
                seen.add(sid)
                text = "\n".join(f"{t.get('role', '')}: {t.get('content', '')}" for t in turns)
                documents.append(Document(sid, text, {"turns": len(turns)}))
        relevant = (
            [] if qid.endswith("_abs") else [str(x) for x in item.get("answer_session_ids") or []]
        )
        questions.append(
            Question(
                qid,
                str(item.get("question", "")),
                item.get("answer"),
                relevant,
                item.get("question_type"),
            )
        )
        groups[qid] = ids
    return Dataset("longmemeval", questions, documents, groups)


def lexical_ranker(question: Question, documents: list[Document]) -> list[str]:
    """A small baseline ranker: documents by how many of the question's words they contain."""
    words = set(re.findall(r"\w+", question.question.lower())) - {
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "is",
        "what",
        "did",
        "do",
        "when",
        "how",
        "who",
        "was",
    }
    scored = [(sum(w in d.text.lower() for w in words), -i, d.id) for i, d in enumerate(documents)]
    return [doc_id for _, _, doc_id in sorted(scored, reverse=True)]
