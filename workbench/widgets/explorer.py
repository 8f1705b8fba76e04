"""``JournalExplorer``: the branch tree, a paged event table, the state at an event and its
diff (against the previous event, a seq, or any point of any branch), lookup by hash prefix
and full-text search; it follows the journal live (``follow``)."""

from __future__ import annotations

import difflib
import html
import json
import threading
from typing import Any

import ipywidgets as w
import traitlets

from ..errors import WorkbenchError
from ..events import BranchInfo, encode_state
from ..journal import Journal

MONO = "font-family: var(--jp-code-font-family, monospace); font-size: 12px;"


def branch_label(info: BranchInfo, depth: int, status: str) -> str:
    """One line of the branch tree."""
    params = " ".join(f"{k}={v}" for k, v in info.params.items())
    name = info.name or f"#{info.id}"
    where = "" if info.parent is None else f" @{info.fork_seq}"
    lead = f"{'  ' * depth}{'└ ' if depth else ''}"
    return f"{lead}{name}{where} {params} head {info.head} {status}".rstrip()


def pretty(value: Any, indent: str = "") -> str:
    """A value as readable text: JSON with sorted keys, but strings that hold newlines printed
    as their lines (a note, a prompt, a file reads as written)."""
    inner = indent + "  "
    if isinstance(value, str):
        if "\n" in value:
            return "|\n" + "\n".join(inner + line for line in value.split("\n"))
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(inner + pretty(v, inner) for v in value) + "\n" + indent + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = sorted(value.items(), key=lambda kv: str(kv[0]))
        body = ",\n".join(
            f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {pretty(v, inner)}" for k, v in items
        )
        return "{\n" + body + "\n" + indent + "}"
    return json.dumps(value, ensure_ascii=False, default=str)


def state_text(state: Any, limit: int = 20_000) -> str:
    """A state as readable, stable text (dataclasses and plain values alike; multi-line
    strings as lines)."""
    text = pretty(json.loads(json.dumps(encode_state(state), default=str)))
    return (
        text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"
    )


def state_diff(before: Any, after: Any, a_label: str, b_label: str) -> list[str]:
    """Unified diff lines between two states' JSON forms."""
    a = state_text(before, 10**9).splitlines()
    b = state_text(after, 10**9).splitlines()
    return list(difflib.unified_diff(a, b, a_label, b_label, lineterm="", n=1))


class JournalExplorer(w.VBox):
    """Browse a journal: pick a branch, page through its events (resolved through its
    ancestors), see the state at an event and its diff against another event."""

    selected_branch = traitlets.Int(0)
    selected_seq = traitlets.Int(0)

    def __init__(
        self, journal: Journal, page_size: int = 50, live: bool = False, **kw: Any
    ) -> None:
        self.journal = journal
        self._runs: tuple[tuple[int, str], ...] = ()
        self.page_size = page_size
        self.branch_list = w.Select(options=[], rows=8, layout=w.Layout(width="100%"))
        self.refresh_button = w.Button(
            description="Refresh", icon="refresh", layout=w.Layout(width="110px")
        )
        self.event_list = w.Select(options=[], rows=16, layout=w.Layout(width="100%"))
        self.prev_button = w.Button(description="◀", layout=w.Layout(width="44px"))
        self.next_button = w.Button(description="▶", layout=w.Layout(width="44px"))
        self.page = w.BoundedIntText(value=1, min=1, max=1, layout=w.Layout(width="90px"))
        self.page_info = w.HTML()
        self.compare_mode = w.ToggleButtons(
            options=["state", "diff vs previous", "diff vs seq", "diff vs point"], value="state"
        )
        self.compare_seq = w.BoundedIntText(value=0, min=0, max=0, layout=w.Layout(width="100px"))
        self.compare_ref = w.Text(
            placeholder="any point: other@14, main@40, a label",
            continuous_update=False,
            layout=w.Layout(width="260px"),
        )
        self.state_view = w.HTML(layout=w.Layout(max_height="420px", overflow="auto"))
        self.hash_box = w.Text(placeholder="hash prefix (8+ hex)", layout=w.Layout(width="220px"))
        self.find_button = w.Button(
            description="Find", icon="search", layout=w.Layout(width="80px")
        )
        self.search_box = w.Text(
            placeholder='search payloads: words, "a phrase", prefix*, AND/OR/NOT',
            continuous_update=False,  # Enter (or leaving the box) searches
            layout=w.Layout(width="360px"),
        )
        self.search_scope = w.Checkbox(value=False, description="this branch only", indent=False)
        self.search_button = w.Button(
            description="Search", icon="search", layout=w.Layout(width="90px")
        )
        self.search_results = w.Select(options=[], rows=6, layout=w.Layout(width="100%"))
        self.message = w.HTML()
        self._hits: list[tuple[int, int]] = []
        self._head = 0
        self._busy = False
        super().__init__(**kw)
        self.children = [
            w.HTML("<b>Branches</b>"),
            w.HBox([self.branch_list, self.refresh_button]),
            w.HBox(
                [
                    w.HTML("<b>Events</b>"),
                    self.prev_button,
                    self.page,
                    self.next_button,
                    self.page_info,
                    self.hash_box,
                    self.find_button,
                ]
            ),
            self.event_list,
            w.HBox([self.search_box, self.search_scope, self.search_button]),
            self.search_results,
            w.HBox([self.compare_mode, self.compare_seq, self.compare_ref]),
            self.state_view,
            self.message,
        ]
        self.branch_list.observe(self._on_branch, "value")
        self.event_list.observe(self._on_event, "value")
        self.page.observe(lambda _: self._load_page(), "value")
        self.prev_button.on_click(lambda _: self.go_page(self.page.value - 1))
        self.next_button.on_click(lambda _: self.go_page(self.page.value + 1))
        self.refresh_button.on_click(lambda _: self.refresh())
        self.find_button.on_click(lambda _: self.find(self.hash_box.value))
        self.search_button.on_click(lambda _: self.search(self.search_box.value))
        self.search_box.observe(self._on_search_text, "value")
        self.search_results.observe(self._on_hit, "value")
        self.compare_mode.observe(lambda _: self._show_state(), "value")
        self.compare_seq.observe(lambda _: self._show_state(), "value")
        self.compare_ref.observe(lambda _: self._show_state(), "value")
        self._cursor = journal.end()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.refresh()
        if live:
            self.follow()

    # -- live -----------------------------------------------------------------------------

    def poll(self) -> bool:
        """Fold in what other writers appended since the last look (new branches, heads and
        run statuses): the tree and the page are redrawn, the selection kept. Whether anything
        arrived."""
        events, self._cursor = self.journal.tail(self._cursor, limit=5000)
        runs = tuple((r.branch, r.status) for r in self.journal.runs())
        if not events and runs == self._runs:
            return False
        self.refresh()
        return True

    def follow(self, interval: float = 0.5) -> None:
        """Poll in a background thread every ``interval`` seconds (``unfollow`` stops)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()

        def loop() -> None:
            while not self._stop.wait(interval):
                try:
                    self.poll()
                except Exception as e:  # noqa: BLE001 (keep following; say what went wrong)
                    self._error(e)

        self._thread = threading.Thread(target=loop, name="lithify-explorer", daemon=True)
        self._thread.start()

    def unfollow(self) -> None:
        """Stop following the journal."""
        self._stop.set()

    # -- branches -------------------------------------------------------------------------

    def refresh(self) -> None:
        """Reload the branch tree (new forks, new heads) and the current page."""
        infos = self.journal.branches()
        run_rows = self.journal.runs()
        self._runs = tuple((r.branch, r.status) for r in run_rows)
        runs = {r.branch: r.status for r in run_rows}
        children: dict[int | None, list[BranchInfo]] = {}
        for info in infos:
            children.setdefault(info.parent, []).append(info)
        options: list[tuple[str, int]] = []

        def walk(parent: int | None, depth: int) -> None:
            for info in children.get(parent, []):
                options.append((branch_label(info, depth, runs.get(info.id, "")), info.id))
                walk(info.id, depth + 1)

        walk(None, 0)
        keep = (
            self.branch_list.value if self.branch_list.value is not None else self.selected_branch
        )
        self.branch_list.options = options
        ids = [v for _, v in options]
        self.branch_list.value = keep if keep in ids else (ids[0] if ids else None)
        self._load_page()

    def _on_branch(self, change: dict[str, Any]) -> None:
        if change["new"] is None:
            return
        self.selected_branch = change["new"]
        self._head = self.journal.info(self.selected_branch).head
        self.page.max = max(1, -(-self._head // self.page_size))
        if self.page.value != self.page.max:
            self.page.value = self.page.max  # start at the newest events
        else:
            self._load_page()

    # -- events ---------------------------------------------------------------------------

    def go_page(self, page: int) -> None:
        """Show page ``page`` (1-based) of the selected branch's events."""
        self.page.value = max(self.page.min, min(self.page.max, page))

    def _load_page(self) -> None:
        if self.branch_list.value is None:
            return
        b = self.journal.branch(self.selected_branch)
        self._head = b.head
        self.page.max = max(1, -(-self._head // self.page_size))
        lo = (self.page.value - 1) * self.page_size + 1
        hi = min(self._head, lo + self.page_size - 1)
        records = b.history(lo, hi) if hi >= lo else []
        options = [
            (f"{r.seq:>7}  {r.kind:<8}{r.hash[:12]}  b{r.branch:<3} {r.summary(90)}", r.seq)
            for r in records
        ]
        self._busy = True
        self.event_list.options = options
        self._busy = False
        self.page_info.value = f"<span style='{MONO}'>{lo}–{hi} of {self._head}</span>"
        self.compare_seq.max = self._head
        seqs = [s for _, s in options]
        if self.selected_seq in seqs:
            self.event_list.value = self.selected_seq
        elif seqs:
            self.event_list.value = seqs[-1]

    def _on_event(self, change: dict[str, Any]) -> None:
        if change["new"] is None or self._busy and change["new"] == self.selected_seq:
            return
        self.selected_seq = change["new"]
        self._show_state()

    def select(self, branch: int, seq: int) -> None:
        """Select an event: its branch, the page holding it, the event itself."""
        self.selected_seq = seq
        if self.branch_list.value != branch:
            self.branch_list.value = branch
        self.go_page((seq - 1) // self.page_size + 1 if seq > 0 else 1)
        self._load_page()
        if seq in [s for _, s in self.event_list.options]:
            self.event_list.value = seq
        self._show_state()

    def find(self, prefix: str) -> None:
        """Jump to the event whose hash starts with ``prefix`` (8+ hex characters)."""
        try:
            branch, seq = self.journal.lookup_hash(prefix.strip())
        except WorkbenchError as e:
            self._error(e)
            return
        self.message.value = f"found {prefix.strip()} at branch {branch}, seq {seq}"
        self.select(branch, seq)

    def search(self, text: str, limit: int = 50) -> None:
        """List the events whose payload matches ``text`` (full-text, best first), in the whole
        journal or, with "this branch only", in the selected branch's history; picking a hit
        selects its event."""
        scope = self.selected_branch if self.search_scope.value else None
        try:
            records = self.journal.search(text, branch=scope, limit=limit)
        except WorkbenchError as e:
            self._error(e)
            return
        self._hits = [(scope if scope is not None else r.branch, r.seq) for r in records]
        self.search_results.options = [
            (f"b{r.branch}@{r.seq:<6} {r.kind:<8} {r.summary(90)}", i)
            for i, r in enumerate(records)
        ]
        self.search_results.value = None
        where = f"branch {scope}'s history" if scope is not None else "the journal"
        self.message.value = html.escape(
            f"{len(records)} event(s) in {where} match {text.strip()!r}"
            + (f" (the best {limit})" if len(records) == limit else "")
        )

    def _on_search_text(self, change: dict[str, Any]) -> None:
        if change["new"].strip():
            self.search(change["new"])

    def _on_hit(self, change: dict[str, Any]) -> None:
        if change["new"] is not None and change["new"] < len(self._hits):
            self.select(*self._hits[change["new"]])

    def _error(self, e: Exception) -> None:
        self.message.value = (
            f"<span style='color:var(--jp-error-color1,#c00)'>{html.escape(str(e))}</span>"
        )

    # -- state ----------------------------------------------------------------------------

    def _show_state(self) -> None:
        b = self.journal.branch(self.selected_branch)
        seq = min(self.selected_seq, b.head)
        now = b.at(seq)
        mode = self.compare_mode.value
        if mode == "state":
            body = html.escape(state_text(now))
            title = f"state as of seq {seq} on branch {b.id}"
        elif mode == "diff vs point":
            ref = self.compare_ref.value.strip()
            if not ref:
                body, title = "(type a point: other@14, main@40, a label)", "diff vs a point"
            else:
                try:
                    ob, oseq = self.journal.resolve(ref)
                    before = self.journal.branch(ob).at(oseq)
                except WorkbenchError as e:
                    self._error(e)
                    return
                lines = state_diff(before, now, f"{ob}@{oseq}", f"{b.id}@{seq}")
                body = "\n".join(_color(line) for line in lines) or "(no change)"
                title = f"diff of the state: {ob}@{oseq} → {b.id}@{seq}"
        else:
            other = (
                max(0, seq - 1)
                if mode == "diff vs previous"
                else min(self.compare_seq.value, b.head)
            )
            lines = state_diff(b.at(other), now, f"seq {other}", f"seq {seq}")
            body = "\n".join(_color(line) for line in lines) or "(no change)"
            title = f"diff of the state: seq {other} → seq {seq}"
        self.state_view.value = (
            f"<div style='{MONO}'><b>{title}</b><pre style='margin:0;white-space:pre-wrap'>"
            f"{body}</pre></div>"
        )


def _color(line: str) -> str:
    esc = html.escape(line)
    if line.startswith("+") and not line.startswith("+++"):
        return f"<span style='color:#1a7f37'>{esc}</span>"
    if line.startswith("-") and not line.startswith("---"):
        return f"<span style='color:#cf222e'>{esc}</span>"
    return esc
