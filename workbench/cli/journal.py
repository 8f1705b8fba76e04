"""The generic journal commands: verify, history, log, show, diff, branches, matrix, chart,
receipt, provenance, search, tag, rollback, vacuum, rekey, snapshots. They name no agent: a
journal's State class comes from the agent it was written by (or --state), chart axes too."""

from __future__ import annotations

import json
import os
from typing import Any

import typer

from ..errors import Corrupt, InvalidValue
from ..events import encode_state, iso_ms
from ..verify import VerifyReport, damage_of
from .app import (
    brief,
    command,
    console,
    emit,
    open_journal,
    options,
    point,
    snapshots_app,
)
from .sessions import forge, history_rows, print_history, session_journal


@command("Journal")
def verify(
    ctx: typer.Context,
    expect: list[str] = typer.Option(
        [],
        "--expect",
        help="A head hash recorded outside the journal (all 64 "
        "hex characters, or at least 32), for main, or BRANCH=HASH; it must "
        "still be in that branch's history. Repeat for several.",
    ),
) -> None:
    """Recompute every hash and snapshot seal and check SQLite's pages; exit 1 if the journal
    is damaged (or an expected hash is missing). Never writes."""
    opts = options(ctx)
    anchors: dict[int | str, str] = {}
    for item in expect:
        ref, eq, h = item.rpartition("=")
        key: int | str = (int(ref) if ref.isdigit() else ref) if eq else 0
        if key in anchors:
            raise InvalidValue(f"--expect names branch {key!r} twice")
        anchors[key] = h
    try:
        with open_journal(opts) as j:
            report = j.verify(anchors or None)
    except Corrupt as e:  # SQLite could not even read the schema: damaged, not "not a journal"
        report = VerifyReport(False, [(-1, 0, f"damaged: {damage_of(e)}")])

    def human() -> None:
        out = console()
        if report.ok:
            out.print(
                f"[green]ok[/green] {opts.path}: {report.events} events on {report.branches} "
                f"branches, {report.snapshots} snapshots verified",
                markup=True,
            )
            for b, seq, h in report.anchored:
                out.print(f"  anchored: branch {b} holds {h[:16]} at seq {seq}")
            main = next((h for b, _, h in report.heads if b == 0), None)
            if main:
                out.print(f"  main head {main}  (record it elsewhere; check later with --expect)")
        else:
            out.print(f"[red]damaged[/red] {opts.path}: {len(report.problems)} problem(s)")
            for b, first, last, what in _runs(report.problems):
                where = "file" if b < 0 else f"branch {b} seq {first}"
                if last > first:
                    where += f" to {last} ({last - first + 1} events)"
                out.print(f"  {where}: {what}", markup=False)

    emit(opts, report.to_json(), human)
    if not report.ok:
        raise typer.Exit(1)


def _runs(problems: list[tuple[int, int, str]]) -> list[tuple[int, int, int, str]]:
    """(branch, first seq, last seq, what): consecutive seqs of a branch with the same problem
    (a damaged page holds several events) as one line."""
    out: list[tuple[int, int, int, str]] = []
    for b, seq, what in problems:
        if out and b >= 0 and out[-1][0] == b and out[-1][2] == seq - 1 and out[-1][3] == what:
            out[-1] = (b, out[-1][1], seq, what)
        else:
            out.append((b, seq, seq, what))
    return out


@command("Journal")
def diff(
    ctx: typer.Context,
    ref_a: str = typer.Argument(..., help="From (e.g. main@40, head~3, a label)."),
    ref_b: str = typer.Argument(..., help="To (any branch)."),
    session: str = typer.Option(
        None,
        "--session",
        help="Compare two snapshots of this session (refs: head, head~N, a label, an id): "
        "units added, modified and removed.",
    ),
) -> None:
    """What changed in the state between two points: added, modified and removed paths (with
    --session: units between two snapshots)."""
    opts = options(ctx)
    if session is not None:
        with session_journal(opts) as j:
            d = forge(j).diff_sync(ref_a, ref_b, session)
        doc_units = d.to_json()

        def human_units() -> None:
            out = console()
            out.print(str(d), markup=False)
            for u in d.added:
                out.print(f"+ {u.type}/{u.key}  {brief(u.value)}", markup=False)
            for a, b in d.modified:
                out.print(f"~ {a.type}/{a.key}  {brief(a.value)} → {brief(b.value)}", markup=False)
            for u in d.removed:
                out.print(f"- {u.type}/{u.key}  {brief(u.value)}", markup=False)

        emit(opts, doc_units, human_units)
        return
    with open_journal(opts) as j:
        a, b = j.resolve(ref_a), j.resolve(ref_b)
        changes = [c.to_json() for c in j.diff(a, b)]
    doc = {
        "from": {"branch": a[0], "seq": a[1]},
        "to": {"branch": b[0], "seq": b[1]},
        "changes": changes,
    }

    def human() -> None:
        out = console()
        out.print(f"[bold]{a[0]}@{a[1]} → {b[0]}@{b[1]}[/bold]: {len(changes)} change(s)")
        for c in changes:
            sign = {"added": "[green]+", "removed": "[red]-", "modified": "[yellow]~"}[c["op"]]
            detail = (
                f"{brief(c.get('before'))} → {brief(c.get('after'))}"
                if c["op"] == "modified"
                else brief(c.get("after", c.get("before")))
            )
            out.print(f"{sign} {c['path']}[/]  {detail}", highlight=False)

    emit(opts, doc, human)


@command("Journal")
def rollback(
    ctx: typer.Context,
    to: str = typer.Option(
        ..., "--to", help="The point to restore (a seq of the branch or any ref)."
    ),
    branch: str = typer.Option(
        None, "--branch", help="The branch to roll back (default: main, or the ref's)."
    ),
    yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
    session: str = typer.Option(
        None,
        "--session",
        help="Roll this session back to the snapshot --to names (head~N, a label, an id): a "
        "new snapshot with its units.",
    ),
    label: str = typer.Option(None, "--label", help="With --session: the new snapshot's label."),
) -> None:
    """Restore an earlier state by appending an event; nothing is removed."""
    opts = options(ctx)
    if session is not None:
        with session_journal(opts, write=True) as j:
            snap = forge(j).rollback_sync(session, to, label)
        emit(
            opts,
            snap.to_json(),
            lambda: console().print(
                f"session {snap.session_id}: snapshot {snap.short_id} restores "
                f"{(snap.rollback_of or '')[:8]}",
                markup=False,
            ),
        )
        return
    with open_journal(opts, write=True) as j:
        target = point(j, to, branch)  # a seq past the head: NotFound, as at and diff say
        target_branch, target_seq = target
        b = j.branch(branch) if branch is not None else j.branch(target_branch)
        if not yes and not typer.confirm(
            f"Append an event to branch {b.id} that restores the state at "
            f"{target_branch}@{target_seq}?",
            default=False,
        ):
            raise typer.Abort()
        seq = b.rollback(target, from_other_branch=target_branch != b.id)
        doc = {
            "branch": b.id,
            "seq": seq,
            "restored": {"branch": target_branch, "seq": target_seq},
            "head_hash": b.head_hash,
        }
    emit(
        opts,
        doc,
        lambda: console().print(f"branch {b.id}: seq {seq} restores {target_branch}@{target_seq}"),
    )


def _seq_in(j: Any, b: Any, ref: str, option: str) -> int:
    """The seq of a point that must lie in branch ``b``'s history (its own or inherited)."""
    bid, seq = point(j, ref, str(b.id))
    if bid != b.id and j.history.owner(b.id, seq) != (bid, seq):
        raise InvalidValue(
            f"{option} {ref} is event {bid}@{seq}, which is not in branch {b.id}'s history"
        )
    return seq


@command("Journal")
def log(
    ctx: typer.Context,
    ref: str = typer.Argument(None, help="Where to start (default: main's head)."),
    limit: int = typer.Option(20, "-n", "--limit", help="How many events."),
) -> None:
    """Events before a point, newest first, with their writers."""
    opts = options(ctx)
    with open_journal(opts) as j:
        branch, seq = point(j, ref) if ref else (0, j.root().head)
        lo = max(1, seq - limit + 1)
        recs = list(reversed(j.branch(branch).history(lo, seq))) if seq else []
        docs = [{**r.to_json(), "summary": r.summary()} for r in recs]

    def human() -> None:
        out = console()
        for r in recs:
            out.print(
                f"{r.hash[:12]}  {r.branch}@{r.seq:<6} {r.kind:<8} {r.summary(80)}", markup=False
            )

    emit(opts, docs, human)


@command("Journal")
def show(
    ctx: typer.Context,
    ref: str = typer.Argument(
        ..., help="The event: a seq of main, or any ref (main@40, a hash prefix, head...)."
    ),
) -> None:
    """One event: its payload, its provenance and the state right after it."""
    opts = options(ctx)
    with open_journal(opts) as j:
        branch, seq = point(j, ref)
        state = json.loads(json.dumps(encode_state(j.branch(branch).at(seq)), default=str))
        doc: dict[str, Any] = {"branch": branch, "seq": seq, "state": state}
        if opts.raw:
            doc["raw"] = True  # plain JSON merge patches, not the State class's apply
        if seq:
            doc["event"] = j.record((branch, seq)).to_json()
            doc["provenance"] = j.provenance((branch, seq))["event"]

    def human() -> None:
        out = console()
        if "event" in doc:
            e = doc["event"]
            out.print(f"[bold]{branch}@{seq}[/bold] {e['kind']} {e['hash']}")
            out.print(json.dumps(e["payload"], indent=1, ensure_ascii=False)[:4000], markup=False)
        out.print(
            "[bold]state[/bold]"
            + (" (raw: plain JSON merge patches, not the State class)" if opts.raw else "")
        )
        out.print(json.dumps(state, indent=1, ensure_ascii=False)[:4000], markup=False)

    emit(opts, doc, human)


@command("Journal")
def tag(
    ctx: typer.Context,
    ref: str = typer.Argument(..., help="The event to label: a seq of main, or any ref."),
    label: str = typer.Argument(..., help="The label (usable wherever a ref is)."),
) -> None:
    """Give an event a label."""
    opts = options(ctx)
    with open_journal(opts, write=True) as j:
        branch, seq = point(j, ref)
        j.branch(branch).tag(label, seq)
    emit(
        opts,
        {"label": label, "branch": branch, "seq": seq},
        lambda: console().print(f"{label} → {branch}@{seq}"),
    )


@command("Journal")
def branches(
    ctx: typer.Context,
    where: str = typer.Option(
        None,
        "--where",
        help="Only the branches a filter selects: 'budget >= 1000 and recall > 0.5', "
        "'status == failed', 'sweep == 3'.",
    ),
) -> None:
    """Every branch (or those a filter selects): parent, fork point, head, params."""
    from ..filters import select

    opts = options(ctx)
    with open_journal(opts) as j:
        infos = [b.to_json() for b in j.branches()]
        if where is not None:
            keep = set(select(j, where))
            infos = [b for b in infos if b["id"] in keep]

    def human() -> None:
        from rich.table import Table

        t = Table("id", "name", "parent", "fork", "head", "head hash", "params")
        for b in infos:
            t.add_row(
                str(b["id"]),
                b["name"] or "",
                "" if b["parent"] is None else str(b["parent"]),
                str(b["fork_seq"]),
                str(b["head"]),
                b["head_hash"][:12],
                json.dumps(b["params"]),
            )
        console().print(t)

    emit(opts, infos, human)


@command("Journal")
def vacuum(ctx: typer.Context) -> None:
    """Checkpoint and rebuild the journal file compactly (history is unchanged)."""
    opts = options(ctx)
    with open_journal(opts, write=True) as j:
        before, after = j.vacuum()
        ok = j.verify().ok
    emit(
        opts,
        {"bytes_before": before, "bytes_after": after, "verified": ok},
        lambda: console().print(f"{before:,} → {after:,} bytes; verified: {ok}"),
    )


@command("Journal")
def provenance(
    ctx: typer.Context,
    ref: str = typer.Argument(..., help="The point (main@40, head...), or a unit id (u...)."),
    path: str = typer.Option(None, "--path", help="A value in the state, e.g. notes[3]."),
) -> None:
    """Who wrote an event, and which events (and effects) produced a value of the state; for a
    unit id: its source, the snapshot that stored it, every snapshot holding it, its effect."""
    opts = options(ctx)
    if is_unit_id(ref):
        with session_journal(opts) as j:
            unit_doc = forge(j).provenance_sync(ref)

        def human_unit() -> None:
            out = console()
            u, w = unit_doc["unit"], unit_doc["written"]
            out.print(
                f"{u['type']}/{u['key']} from {unit_doc['source']} in session "
                f"{unit_doc['session']}: stored by snapshot {w['snapshot'][:8]} at {w['at']} "
                f"(writer {w['writer']}, pid {w['pid']}); held by "
                f"{len(unit_doc['snapshots'])} snapshot(s)",
                markup=False,
            )
            fx = unit_doc["effect"]
            if fx:
                out.print(
                    f"  ← effect {fx['key']} at {fx.get('branch')}@{fx.get('seq')}", markup=False
                )

        emit(opts, unit_doc, human_unit)
        return
    with open_journal(opts) as j:
        doc = j.provenance(ref, path)

    def human() -> None:
        out = console()
        if "event" in doc:
            e = doc["event"]
            out.print(
                f"{e['branch']}@{e['seq']} {e['kind']} by writer {e.get('writer')} (pid "
                f"{e.get('pid')}{', ' + str(e['source']) if e.get('source') else ''})",
                markup=False,
            )
        for step in doc.get("chain", []):
            out.print(
                f"  {step['change']:<8} at {step['branch']}@{step['seq']} {step['kind']}: "
                f"{step['summary']}",
                markup=False,
            )
            for fx in step["from_effects"]:
                out.print(
                    f"      ← effect {fx['key']} at {fx['branch']}@{fx['seq']} "
                    f"({fx.get('duration_ms')} ms, "
                    f"attempt {fx.get('attempts')}, writer {fx.get('writer')})",
                    markup=False,
                )

    emit(opts, doc, human)


@snapshots_app.command("rebuild")
def snapshots_rebuild(ctx: typer.Context) -> None:
    """Rebuild every snapshot built from other delta versions or another state schema than the
    State class's now (reads do this lazily; this does all of them at once), and repair every
    damaged one (reads pass it over with a warning)."""
    opts = options(ctx)
    with open_journal(opts, write=True) as j:
        n = j.rebuild_snapshots()
        ok = j.verify().ok
    emit(
        opts,
        {"rebuilt": n, "verified": ok},
        lambda: console().print(f"rebuilt {n} snapshot(s); verified: {ok}"),
    )


@command("Journal")
def rekey(ctx: typer.Context) -> None:
    """Re-encrypt an encrypted journal: the current key from $LITHIFY_KEY, the new one from
    $LITHIFY_NEW_KEY or a prompt."""
    opts = options(ctx)
    with open_journal(opts, write=True) as j:  # the journal is checked before a key is asked
        if not j.encrypted:
            raise InvalidValue(
                f"{opts.path} is not encrypted; rekey changes the key of an encrypted journal"
            )
        new = os.environ.get("LITHIFY_NEW_KEY") or typer.prompt(
            "new key", hide_input=True, confirmation_prompt=True
        )
        j.rekey(new)
        ok = j.verify().ok
    emit(
        opts,
        {"rekeyed": True, "verified": ok},
        lambda: console().print(f"rekeyed {opts.path}; verified: {ok}"),
    )


@command("Journal")
def receipt(
    ctx: typer.Context,
    ref: str = typer.Argument(..., help="The effect: BRANCH@SEQ, a hash prefix, head~N..."),
) -> None:
    """What exactly the model saw for one call: the receipt journaled with an effect."""
    opts = options(ctx)
    with open_journal(opts) as j:
        doc = j.receipt(point(j, ref))

    def human() -> None:
        out = console()
        r = doc["receipt"]
        out.print(f"[bold]{doc['key']}[/bold] (effect at branch {doc['branch']} seq {doc['seq']})")
        out.print(
            f"  rendered from branch {r['branch']} seq {r['seq']} ({r['head_hash'][:12]}), "
            f"estimator {r['estimator']}: {r['tokens']} of {r['budget']} tokens"
        )
        if "examined" in r:
            took = f" in {r['projection_ms']:.3f} ms" if r.get("projection_ms") is not None else ""
            out.print(f"  examined {r['examined']} part(s), selected {r['selected']}{took}")
        out.print(
            f"  included ({len(r['included'])}): "
            + ", ".join(f"{i} ({t})" for i, t in r["included"])
        )
        if r["omitted"]:
            out.print(
                f"  omitted ({len(r['omitted'])}): "
                + ", ".join(
                    f"{o[0]} ({o[1]}{', ' + o[2] if len(o) > 2 else ''})" for o in r["omitted"]
                )
            )

    emit(opts, doc, human)


@command("Journal")
def history(
    ctx: typer.Context,
    branch: str = typer.Option(None, "--branch", help="Branch id or name (default: main)."),
    lo: str = typer.Option("1", "--from", help="First event (a seq or a ref; inclusive)."),
    hi: str = typer.Option(None, "--to", help="Last event (a seq or a ref; default the head)."),
    session: str = typer.Option(
        None,
        "--session",
        help="A session's snapshots instead, head to root: ref, short id, label, time.",
    ),
) -> None:
    """The events of a branch through its ancestors: seq, branch, kind, hash, description.
    An empty range (--from after --to) prints nothing."""
    opts = options(ctx)
    if session is not None:
        with session_journal(opts) as j:
            rows = history_rows(j, session)
        emit(opts, rows, lambda: print_history(rows))
        return
    with open_journal(opts) as j:
        b = j.branch(branch) if branch is not None else j.root()
        first = _seq_in(j, b, lo, "--from")
        last = _seq_in(j, b, hi, "--to") if hi is not None else b.head
        recs = b.history(first, last) if first <= last else []
        labels: dict[tuple[int, int], list[str]] = {}
        for label, lb, lq in j.tags():
            labels.setdefault((lb, lq), []).append(label)
    docs = [
        {
            **r.to_json(),
            "time": iso_ms(r.ts),
            "labels": labels.get((r.branch, r.seq), []),
            "summary": r.summary(),
        }
        for r in recs
    ]

    def human() -> None:
        out = console()
        for r, d in zip(recs, docs, strict=True):
            tags = f"  [{', '.join(d['labels'])}]" if d["labels"] else ""
            out.print(
                f"{r.seq:>6}  b{r.branch:<4} {r.kind:<8} {r.hash[:12]}  {d['time']}  "
                f"{r.summary(90)}{tags}",
                markup=False,
            )

    emit(opts, docs, human)


@command("Journal")
def search(
    ctx: typer.Context,
    text: str = typer.Argument(
        ..., help='What to find in event payloads (FTS5: words, "a phrase", prefix*, OR, NOT).'
    ),
    branch: str = typer.Option(
        None, "--branch", help="Only in this branch's history (id or name)."
    ),
    limit: int = typer.Option(20, "-n", "--limit", help="How many events, best first."),
) -> None:
    """Events whose payload matches a full-text search, best match first."""
    opts = options(ctx)
    with open_journal(opts) as j:
        recs = j.search(text, branch=branch, limit=limit)
    docs = [{**r.to_json(), "summary": r.summary()} for r in recs]

    def human() -> None:
        out = console()
        for r in recs:
            out.print(
                f"{r.branch}@{r.seq:<6} {r.kind:<8} {r.hash[:12]}  {r.summary(90)}", markup=False
            )
        if not recs:
            out.print("no event matches")

    emit(opts, docs, human)


def is_unit_id(text: str) -> bool:
    """Whether a command-line argument is a unit id (``u`` and 32 hex digits)."""
    return len(text) == 33 and text[0] == "u" and all(c in "0123456789abcdef" for c in text[1:])
