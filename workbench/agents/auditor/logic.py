"""The auditor's pure parts: categories, file selection, tokens, findings, the mock model's
text, scoring, and the journaled state. No I/O beyond reading the tree being audited."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...context import Part
from ...errors import NotFound
from ...events import State

# name -> (needle, severity), in plan order
CATEGORIES: dict[str, tuple[str, int]] = {
    "unsafe": ("unsafe ", 6),
    "fixme": ("FIXME", 5),
    "panic": ("panic!(", 4),
    "todo": ("TODO", 3),
    "unwrap": (".unwrap()", 2),
    "expect": (".expect(", 1),
}
SKIP_DIRS = frozenset({".git", "target", "node_modules", ".venv", "__pycache__"})
EXTENSIONS = frozenset({"rs", "py", "go", "js", "ts", "c", "h", "cpp", "java", "toml", "md", "sh"})
MAX_BYTES = 200_000
DEFAULT_MAX_FILES = 80
DEFAULT_BUDGET = 3000

Finding = tuple[str, str, int]  # (path, category, count)
_FINDING = re.compile(r"^F: (.+) \| (\w+) \| (\d+)$")


def tokens(text: str) -> int:
    """Token estimate of a text: ceil(characters / 4)."""
    return math.ceil(len(text) / 4)


def context_size(notes: list[str]) -> int:
    """Tokens in the context: the sum over notes."""
    return sum(tokens(n) for n in notes)


def extension(name: str) -> str:
    """Text after the last dot; a leading dot alone is no extension."""
    return os.path.splitext(name)[1][1:]


def select_files(root: str | os.PathLike[str], max_files: int = DEFAULT_MAX_FILES) -> list[str]:
    """Relative posix paths of the files to audit, sorted, the first ``max_files``."""
    base = Path(root)
    if not base.is_dir():
        raise NotFound(f"{root} is not a directory; pass --repo with the source tree to audit")
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for name in filenames:
            if extension(name) not in EXTENSIONS:
                continue
            full = os.path.join(dirpath, name)
            try:
                if not os.path.isfile(full) or os.path.getsize(full) >= MAX_BYTES:
                    continue
            except OSError:
                continue
            found.append(Path(full).relative_to(base).as_posix())
    return sorted(found)[:max_files]


def read_text(root: str, path: str) -> str:
    """A file as UTF-8 text, undecodable bytes replaced, universal newlines."""
    with open(os.path.join(root, path), encoding="utf-8", errors="replace", newline=None) as f:
        return f.read()


def count(text: str, category: str) -> int:
    """Occurrences of a category's needle in a text."""
    return text.count(CATEGORIES[category][0])


def finding_line(f: Finding) -> str:
    return f"F: {f[0]} | {f[1]} | {f[2]}"


def findings_in(notes: list[str]) -> set[Finding]:
    """Every finding line in the notes, as a set."""
    out: set[Finding] = set()
    for note in notes:
        for line in note.split("\n"):
            m = _FINDING.match(line)
            if m and m.group(2) in CATEGORIES:
                out.add((m.group(1), m.group(2), int(m.group(3))))
    return out


# -- the mock model's answers ---------------------------------------------------------------


def mock_plan(path: str, text: str) -> list[str]:
    return list(CATEGORIES)


def mock_analyze(path: str, text: str, counts: dict[str, int]) -> str:
    lines = text.splitlines()
    out = [f"## {path}\n{len(lines)} lines, {len(text)} bytes.\n"]
    hits = [c for c in CATEGORIES if counts.get(c, 0) > 0]
    if not hits:
        out.append("No findings.\n")
    for cat in hits:
        out.append(finding_line((path, cat, counts[cat])) + "\n")
        needle = CATEGORIES[cat][0]
        shown = 0
        for n, line in enumerate(lines, 1):
            if needle in line:
                out.append(f"    L{n}: {line.strip()[:90]}\n")
                shown += 1
                if shown == 2:
                    break
    return "".join(out)


def mock_summarize(notes: list[str], budget: int) -> str:
    found = sorted(findings_in(notes), key=lambda f: (-CATEGORIES[f[1]][1], -f[2], f[0]))
    body = ""
    kept = 0
    for f in found:
        line = finding_line(f)
        if tokens(body) + tokens(line) + 1 > budget // 2:
            break
        body += line + "\n"
        kept += 1
    return (
        f"## compacted ({kept} of {len(found)} findings retained; {len(notes)} notes squashed)\n"
        + body
    )


def mock_report(notes: list[str]) -> str:
    found = sorted(findings_in(notes))
    return f"# Audit report\n\n{len(found)} findings.\n\n" + "".join(
        finding_line(f) + "\n" for f in found
    )


# -- scoring --------------------------------------------------------------------------------


def ground_truth(root: str, done: list[str]) -> set[Finding]:
    """Every (path, category, count) with count > 0 over the audited files."""
    truth: set[Finding] = set()
    for path in done:
        text = read_text(root, path)
        for cat in CATEGORIES:
            n = count(text, cat)
            if n > 0:
                truth.add((path, cat, n))
    return truth


def score(truth: set[Finding], report: str) -> tuple[float, float, int]:
    """(recall, precision, findings in the report); 1.0 where the denominator is empty."""
    reported = findings_in([report])
    hit = len(truth & reported)
    recall = hit / len(truth) if truth else 1.0
    precision = hit / len(reported) if reported else 1.0
    return recall, precision, len(reported)


# -- the journaled state --------------------------------------------------------------------


@dataclass
class AuditState(State):
    """What the auditor knows: the files left, the notes (its context) and its counters."""

    state_name = "lithify.auditor/1"
    root: str = ""
    budget: int = DEFAULT_BUDGET
    pending: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    report: str | None = None
    compactions: int = 0
    model_calls: int = 0
    tokens_in: int = 0

    def apply(self, delta: dict[str, Any]) -> None:
        kind = delta["type"]
        if kind == "start":
            self.root = delta["root"]
            self.budget = delta["budget"]
            self.pending = list(delta["pending"])
        elif kind == "budget":
            self.budget = delta["budget"]
        elif kind == "step":
            before = self.size()
            self.pending.remove(delta["path"])
            self.done.append(delta["path"])
            self.notes.append(delta["note"])
            self.model_calls += 2
            self.tokens_in += 2 * delta["tokens"] + before
        elif kind == "report":
            self.model_calls += 1
            self.tokens_in += self.size()
            self.report = delta["report"]
        else:
            raise ValueError(f"unknown auditor delta type {kind!r}")

    def _memo(self) -> tuple[list[Any], list[int]]:
        # Notes only grow between compactions (which make a new state), so each note's part
        # and running token total are computed once, not on every step. Not a field: it is
        # neither stored nor compared.
        notes = self.notes
        memo: tuple[list[str], list[Part], list[int]] | None = self.__dict__.get("_memo_notes")
        if memo is None or memo[0] is not notes or len(memo[1]) > len(notes):
            memo = self.__dict__["_memo_notes"] = (notes, [], [0])
        _, parts, totals = memo
        if len(parts) < len(notes):
            for i in range(len(parts), len(notes)):
                parts.append(Part(f"note[{i}]", notes[i]))
                totals.append(totals[-1] + tokens(notes[i]))
        return parts, totals

    def size(self) -> int:
        return self._memo()[1][-1]

    def context_parts(self) -> list[Any]:
        """The notes as renderable parts (what every model call sees)."""
        return list(self._memo()[0])

    def compacted(self, summary: str) -> AuditState:
        """The state after the model squashed the notes into ``summary``."""
        return AuditState(
            root=self.root,
            budget=self.budget,
            pending=list(self.pending),
            done=list(self.done),
            notes=[summary],
            report=self.report,
            compactions=self.compactions + 1,
            model_calls=self.model_calls + 1,
            tokens_in=self.tokens_in + self.size(),
        )
