"""Filter expressions over branches, parsed here and evaluated with polars (nothing is ever
evaluated as Python):

    budget >= 1000 and recall > 0.5
    status == failed
    sweep == 3 and retrieval in (lexical, fused)
    not recall == null
    notes contains "too slow"

A comparison names a column of ``matrix.branch_table`` (a parameter, a metric's last value, or
``branch``, ``branch_name`` (or ``name``), ``parent``, ``fork_seq``, ``depth``, ``sweep``,
``head``, ``status``, ``notes``, ``artifacts``), an operator (``== != < <= > >=``, ``in``,
``not in``, ``contains``: text holding the value, case-insensitive) and a value: a
number, a quoted string, a bare word (a string: ``failed``), ``true``, ``false`` or ``null``.
Comparisons combine with ``and``, ``or``, ``not`` and parentheses; a column whose name is not a
plain word is written in backticks. A missing value (a metric a branch never observed) makes its
comparison unknown, and unknown never selects a branch, as in SQL.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import InvalidValue

if TYPE_CHECKING:
    import polars as pl

    from .journal import Journal

Value = int | float | str | bool | None
OPERATORS = ("==", "!=", "<", "<=", ">", ">=")
KEYWORDS = ("and", "or", "not", "in", "true", "false", "null", "contains")
ALIASES = {"name": "branch_name", "id": "branch", "note": "notes"}

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![\w.])
    | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    | (?P<name>`[^`]+`)
    | (?P<op>==|!=|>=|<=|=|>|<|\(|\)|,)
    | (?P<word>[A-Za-z_][\w.\-:/]*)
    )""",
    re.X,
)
_PLAIN = re.compile(r"[A-Za-z_][\w.\-:/]*\Z")


# -- the tree --------------------------------------------------------------------------------


def _value_text(v: Value) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(v)


def _column_text(c: str) -> str:
    return c if _PLAIN.match(c) and c.lower() not in KEYWORDS else f"`{c}`"


@dataclass(frozen=True)
class Compare:
    """``column op value``."""

    column: str
    op: str
    value: Value

    def __str__(self) -> str:
        return f"{_column_text(self.column)} {self.op} {_value_text(self.value)}"


@dataclass(frozen=True)
class Within:
    """``column in (v, ...)``, or ``not in``."""

    column: str
    values: tuple[Value, ...]
    negate: bool = False

    def __str__(self) -> str:
        inside = ", ".join(_value_text(v) for v in self.values)
        return f"{_column_text(self.column)} {'not in' if self.negate else 'in'} ({inside})"


@dataclass(frozen=True)
class Both:
    left: Node
    right: Node

    def __str__(self) -> str:
        # "and" binds tighter than "or" and reads left to right: a right-hand "and" is grouped
        return f"{_grouped(self.left, Either)} and {_grouped(self.right, (Both, Either))}"


@dataclass(frozen=True)
class Either:
    left: Node
    right: Node

    def __str__(self) -> str:
        return f"{self.left} or {_grouped(self.right, Either)}"


@dataclass(frozen=True)
class Negation:
    inner: Node

    def __str__(self) -> str:
        return f"not {_grouped(self.inner, (Both, Either))}"


Node = Compare | Within | Both | Either | Negation


def _grouped(node: Node, loose: type | tuple[type, ...]) -> str:
    return f"({node})" if isinstance(node, loose) else str(node)


# -- parsing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Token:
    kind: str  # num, str, name, op, word, end
    text: str
    at: int  # character position, for messages


def _tokens(text: str) -> list[_Token]:
    out, pos = [], 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            out.append(_Token("end", "", pos))
            return out
        m = _TOKEN.match(text, pos)
        if m is None or m.lastgroup is None:
            raise InvalidValue(
                f"filter: cannot read {text[pos : pos + 12]!r} (at character {pos + 1}); a "
                "filter reads like: budget >= 1000 and status == failed",
                position=pos,
            )
        start = m.start(m.lastgroup)
        out.append(_Token(m.lastgroup, m.group(m.lastgroup), start))
        pos = m.end()


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    @property
    def tok(self) -> _Token:
        return self.toks[self.i]

    def keyword(self, word: str) -> bool:
        t = self.tok
        if t.kind == "word" and t.text.lower() == word:
            self.i += 1
            return True
        return False

    def op(self, text: str) -> bool:
        if self.tok.kind == "op" and self.tok.text == text:
            self.i += 1
            return True
        return False

    def fail(self, wanted: str) -> InvalidValue:
        t = self.tok
        got = "the end" if t.kind == "end" else repr(t.text)
        return InvalidValue(
            f"filter: expected {wanted} at character {t.at + 1}, found {got} "
            f"(in {self.text.strip()!r})",
            position=t.at,
        )

    def parse(self) -> Node:
        if self.tok.kind == "end":
            raise InvalidValue(
                "filter: the expression is empty; write one like: recall > 0.5 and "
                "status == finished"
            )
        node = self.either()
        if self.tok.kind != "end":
            raise self.fail("and, or, or the end")
        return node

    def either(self) -> Node:
        node = self.both()
        while self.keyword("or"):
            node = Either(node, self.both())
        return node

    def both(self) -> Node:
        node = self.negation()
        while self.keyword("and"):
            node = Both(node, self.negation())
        return node

    def negation(self) -> Node:
        if self.keyword("not"):
            return Negation(self.negation())
        if self.op("("):
            node = self.either()
            if not self.op(")"):
                raise self.fail("')'")
            return node
        return self.comparison()

    def comparison(self) -> Node:
        t = self.tok
        if t.kind == "name":
            column = t.text[1:-1]
        elif t.kind == "word" and t.text.lower() not in KEYWORDS:
            column = t.text
        else:
            raise self.fail("a column name (a parameter, a metric, status, sweep, ...)")
        self.i += 1
        if self.keyword("not"):
            if not self.keyword("in"):
                raise self.fail("'in' after 'not'")
            return Within(column, self.listing(), negate=True)
        if self.keyword("in"):
            return Within(column, self.listing())
        if self.keyword("contains"):
            return Compare(column, "contains", self.value("contains"))
        if self.tok.kind != "op" or self.tok.text not in (*OPERATORS, "="):
            raise self.fail(f"an operator after {column!r} ({' '.join(OPERATORS)}, in, contains)")
        op = "==" if self.tok.text == "=" else self.tok.text
        self.i += 1
        return Compare(column, op, self.value(op))

    def listing(self) -> tuple[Value, ...]:
        if not self.op("("):
            raise self.fail("'(' and a list of values: in (a, b)")
        values = [self.value("in")]
        while self.op(","):
            values.append(self.value("in"))
        if not self.op(")"):
            raise self.fail("',' or ')'")
        return tuple(values)

    def value(self, after: str) -> Value:
        t = self.tok
        self.i += 1
        if t.kind == "num":
            number = float(t.text)
            is_int = re.fullmatch(r"[-+]?\d+", t.text) is not None
            return int(t.text) if is_int else number
        if t.kind == "str":
            return re.sub(r"\\(.)", r"\1", t.text[1:-1])
        if t.kind == "word":
            low = t.text.lower()
            if low in ("true", "false"):
                return low == "true"
            if low == "null":
                return None
            if low not in KEYWORDS:
                return t.text  # a bare word: a string (status == failed)
        self.i -= 1
        raise self.fail(f"a value after {after!r} (a number, a word, a quoted string, null)")


@dataclass(frozen=True)
class Filter:
    """A parsed filter expression; ``str()`` is its canonical text."""

    node: Node

    def __str__(self) -> str:
        return str(self.node)

    def columns(self) -> list[str]:
        """The columns it names, in order."""
        out: list[str] = []

        def walk(n: Node) -> None:
            if isinstance(n, (Compare, Within)):
                out.append(n.column)
            elif isinstance(n, Negation):
                walk(n.inner)
            else:
                walk(n.left)
                walk(n.right)

        walk(self.node)
        return list(dict.fromkeys(out))

    def expr(self, schema: dict[str, Any]) -> pl.Expr:
        """The polars expression over a frame of this schema (InvalidValue for a column it
        lacks or a value of the wrong kind)."""
        return _to_polars(self.node, schema)

    def apply(self, frame: pl.DataFrame) -> pl.DataFrame:
        """The rows of ``frame`` the filter selects."""
        return frame.filter(self.expr(dict(frame.schema)))


def parse(text: str) -> Filter:
    """A filter expression (InvalidValue saying where and what was expected)."""
    if not isinstance(text, str):
        raise InvalidValue(f"a filter is text, not {text!r}")
    return Filter(_Parser(text).parse())


# -- evaluation ------------------------------------------------------------------------------


def _column(name: str, schema: dict[str, Any]) -> str:
    if name in schema:
        return name
    if name in ALIASES and ALIASES[name] in schema:
        return ALIASES[name]
    near = difflib.get_close_matches(name, list(schema), n=1)
    hint = f" (did you mean {near[0]}?)" if near else ""
    shown = ", ".join(list(schema)[:40])
    raise InvalidValue(f"filter: no column {name!r}{hint}; the columns are {shown}", name=name)


def _literal(column: str, dtype: Any, value: Value, op: str) -> Any:
    """``value`` as the column's kind, or a message saying what to compare it with."""
    import polars as pl

    if value is None:
        return None
    if dtype == pl.Boolean:
        if isinstance(value, bool):
            return value
        raise InvalidValue(f"filter: {column} is true or false; compare it with true or false")
    if dtype.is_numeric():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        raise InvalidValue(
            f"filter: {column} holds numbers; compare it with a number, not {_value_text(value)}"
        )
    if dtype in (pl.Utf8, pl.Categorical, pl.Null):
        if isinstance(value, bool):
            return "true" if value else "false"
        return value if isinstance(value, str) else repr(value)
    raise InvalidValue(f"filter: {column} cannot be compared with {op}")


def _to_polars(node: Node, schema: dict[str, Any]) -> pl.Expr:
    import polars as pl

    if isinstance(node, Both):
        return _to_polars(node.left, schema) & _to_polars(node.right, schema)
    if isinstance(node, Either):
        return _to_polars(node.left, schema) | _to_polars(node.right, schema)
    if isinstance(node, Negation):
        return ~_to_polars(node.inner, schema)
    name = _column(node.column, schema)
    dtype = schema[name]
    col = pl.col(name)
    if isinstance(node, Within):
        vals = [_literal(name, dtype, v, "in") for v in node.values]
        present = [v for v in vals if v is not None]
        if dtype.is_numeric() and dtype != pl.Boolean:  # 3 in (3.0): one kind on both sides
            col, present = col.cast(pl.Float64), [float(v) for v in present]
        hit = col.is_in(present) if present else pl.lit(False)
        if None in vals:
            hit = hit | col.is_null()
        else:  # a missing value is not known to be in the list, nor not to be
            hit = pl.when(col.is_null()).then(pl.lit(None, dtype=pl.Boolean)).otherwise(hit)
        return ~hit if node.negate else hit
    if node.op == "contains":
        if dtype not in (pl.Utf8, pl.Categorical, pl.Null) or not isinstance(node.value, str):
            raise InvalidValue(
                f"filter: contains looks for text in a text column (notes, artifacts, status, "
                f"name, a text parameter), not {_value_text(node.value)} in {name}"
            )
        low = node.value.lower()
        return col.cast(pl.Utf8).str.to_lowercase().str.contains(low, literal=True)
    value = _literal(name, dtype, node.value, node.op)
    if value is None:
        if node.op == "==":
            return col.is_null()
        if node.op == "!=":
            return col.is_not_null()
        raise InvalidValue(f"filter: {node.op} null means nothing; use == null or != null")
    compared: pl.Expr = {
        "==": col == value,
        "!=": col != value,
        "<": col < value,
        "<=": col <= value,
        ">": col > value,
        ">=": col >= value,
    }[node.op]
    return compared


def select(
    journal: Journal,
    text: str,
    *,
    sweep: int | None = None,
    branches: Iterable[int] | None = None,
) -> list[int]:
    """The ids of the branches (of a sweep, or of those given) the filter selects."""
    from .matrix import branch_table

    f = parse(text)
    table = branch_table(journal, sweep=sweep, branches=branches).frame
    return f.apply(table)["branch"].to_list()


__all__ = ["Filter", "parse", "select"]
