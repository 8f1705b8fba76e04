"""The auditor: exact mock-model text, file selection, compaction points, scoring, resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench import InvalidValue, Journal, NotFound
from workbench.agents.auditor import AuditState, Calls, MockModel, logic, rerun_counts, run, start
from workbench.agents.auditor.logic import (
    context_size,
    findings_in,
    mock_analyze,
    mock_report,
    mock_summarize,
    select_files,
    tokens,
)

A_RS = "fn main() {\n    let x = foo().unwrap();\n    // TODO: fix\n    unsafe { bar() }\n}\n"


def make_tree(root: Path) -> Path:
    files = {
        "a.rs": A_RS,
        "sub/b.py": "# FIXME later\nprint('hi')\n",
        "sub/deep/c.go": 'x := y.expect("z")\n' * 3 + 'panic!("no")\n',
        "d.md": "# Title\nnothing to see\n",
        "notes.txt": "TODO not audited\n",
        "target/x.rs": "unsafe { skipped }\n",
        "node_modules/m/i.js": "// TODO skipped\n",
        ".sh": "# TODO dot-only name\n",
        "sub/.hidden.sh": "# TODO hidden but has an extension\n",
        "Makefile": "# TODO\n",
        "big.rs": "// TODO\n" + "x" * 200_000,
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (root / "crlf.c").write_bytes(b"int a; // TODO one\r\nint b; /* FIXME \xff */\r\n")
    return root


def test_file_selection_rules(tmp_path):
    root = make_tree(tmp_path)
    assert select_files(root) == [
        "a.rs",
        "crlf.c",
        "d.md",
        "sub/.hidden.sh",
        "sub/b.py",
        "sub/deep/c.go",
    ]
    assert select_files(root, 2) == ["a.rs", "crlf.c"]
    with pytest.raises(NotFound, match="missing"):
        select_files(tmp_path / "missing")


def test_files_read_with_replacement_and_universal_newlines(tmp_path):
    root = make_tree(tmp_path)
    text = logic.read_text(str(root), "crlf.c")
    assert text == "int a; // TODO one\nint b; /* FIXME \ufffd */\n"


def test_tokens_and_context_size():
    assert [tokens(""), tokens("a"), tokens("abcd"), tokens("abcde")] == [0, 1, 1, 2]
    assert context_size(["abcde", "abc"]) == 3


def test_mock_analyze_exact_note():
    counts = {c: logic.count(A_RS, c) for c in logic.CATEGORIES}
    assert mock_analyze("a.rs", A_RS, counts) == (
        f"## a.rs\n5 lines, {len(A_RS)} bytes.\n"
        "F: a.rs | unsafe | 1\n    L4: unsafe { bar() }\nF: a.rs | todo | 1\n    L3: // TODO: fix\n"
        "F: a.rs | unwrap | 1\n    L2: let x = foo().unwrap();\n"
    )
    assert (
        mock_analyze("d.md", "# T\n", {c: 0 for c in logic.CATEGORIES})
        == "## d.md\n1 lines, 4 bytes.\nNo findings.\n"
    )


def test_mock_analyze_shows_at_most_two_lines_truncated_to_90():
    text = "x.unwrap() " + "y" * 200 + "\nok\n.unwrap()\n.unwrap()\n"
    note = mock_analyze("f.rs", text, {"unwrap": 3})
    lines = note.splitlines()
    assert lines[2] == "F: f.rs | unwrap | 3"
    assert lines[3] == "    L1: " + ("x.unwrap() " + "y" * 200)[:90]
    assert lines[4] == "    L3: .unwrap()"
    assert len(lines) == 5


def test_mock_summarize_orders_by_severity_count_path_and_respects_budget():
    notes = [
        "## a\nF: a.rs | todo | 2\nF: a.rs | unsafe | 1\n",
        "## b\nF: b.rs | unsafe | 3\nF: b.rs | expect | 9\nF: a.rs | todo | 2\n",
    ]
    full = mock_summarize(notes, 10_000)
    assert full == (
        "## compacted (4 of 4 findings retained; 2 notes squashed)\n"
        "F: b.rs | unsafe | 3\nF: a.rs | unsafe | 1\nF: a.rs | todo | 2\nF: b.rs | expect | 9\n"
    )
    # budget // 2 = 12 tokens: one 20-char line (5 tokens) + 1 fits, the second (5+5+1=11) fits,
    # the third would need tokens(42 chars)=11 + 5 + 1 > 12.
    small = mock_summarize(notes, 25)
    assert small.startswith("## compacted (2 of 4 findings retained; 2 notes squashed)\n")
    assert findings_in([small]) == {("b.rs", "unsafe", 3), ("a.rs", "unsafe", 1)}


def test_mock_report_sorted_by_path_category_count():
    notes = ["F: b.rs | todo | 1\nF: a.rs | unwrap | 2\nF: a.rs | fixme | 1\n"]
    assert mock_report(notes) == (
        "# Audit report\n\n3 findings.\n\nF: a.rs | fixme | 1\nF: a.rs | unwrap | 2\nF: b.rs | "
        "todo | 1\n"
    )


def reference_run(root: Path, budget: int, max_files: int = 80) -> dict:
    """The issue's spec, step by step, with no journal: what the agent must compute."""
    files = select_files(root, max_files)
    notes: list[str] = []
    done: list[str] = []
    compactions = model_calls = tokens_in = 0
    for path in files:
        if context_size(notes) > budget:
            summary = mock_summarize(notes, budget)
            model_calls += 1
            tokens_in += context_size(notes)
            compactions += 1
            notes = [summary]
        text = logic.read_text(str(root), path)
        counts = {c: logic.count(text, c) for c in logic.CATEGORIES}
        model_calls += 2
        tokens_in += 2 * tokens(text) + context_size(notes)
        notes.append(mock_analyze(path, text, counts))
        done.append(path)
    model_calls += 1
    tokens_in += context_size(notes)
    report = mock_report(notes)
    truth = {
        (p, c, n)
        for p in done
        for c in logic.CATEGORIES
        if (n := logic.count(logic.read_text(str(root), p), c)) > 0
    }
    got = findings_in([report])
    return {
        "recall": len(truth & got) / len(truth) if truth else 1.0,
        "precision": len(truth & got) / len(got) if got else 1.0,
        "compactions": compactions,
        "model_calls": model_calls,
        "tokens_in": tokens_in,
        "files": len(done),
        "report": report,
    }


@pytest.mark.parametrize("budget", [1, 40, 120, 3000])
def test_agent_matches_the_reference_loop(tmp_path, budget):
    root = make_tree(tmp_path / "tree")
    ref = reference_run(root, budget)
    with Journal.in_memory(AuditState) as j:
        b = j.root()
        start(b, root, budget)
        res = run(b, Calls(MockModel()))
        for k in ("recall", "precision", "compactions", "model_calls", "tokens_in", "files"):
            assert res.metrics[k] == pytest.approx(ref[k]), k
        assert b.state().report == ref["report"]
        assert res.metrics["budget"] == budget
        observed = {r.payload["name"] for r in b.history() if r.kind == "observe"}
        assert observed == {
            "recall",
            "precision",
            "compactions",
            "model_calls",
            "tokens_in",
            "files",
            "budget",
            "wall_ms",
        }


def test_bundled_corpus_numbers(tmp_path):
    from workbench.agents.auditor import bundled_corpus, fork_seq_after_files

    with Journal.in_memory(AuditState) as j:
        root = j.root()
        start(root)
        res = run(root, Calls(MockModel()))
        ref = reference_run(bundled_corpus(), 3000)
        assert res.metrics["recall"] == ref["recall"] == 1.0
        assert res.metrics["model_calls"] == ref["model_calls"]
        at = fork_seq_after_files(root, 19)
        assert at == 191
        recalls = []
        for budget in (300, 600, 1200, 2400, 4800):
            f = root.fork_at(at, params={"budget": budget})
            start(f, budget=budget)
            recalls.append(run(f, Calls(MockModel())).metrics["recall"])
        assert recalls[0] < 0.5 and recalls[-1] == 1.0
        assert recalls == sorted(recalls)


def test_trace_lines_and_nothing_rerun_on_resume(tmp_path):
    root = make_tree(tmp_path / "tree")
    trace = tmp_path / "trace.txt"
    db = tmp_path / "a.db"
    with Journal.open(db, AuditState) as j:
        start(j.root(), root, 40)
        calls = Calls(MockModel(), trace)
        first = run(j.root(), calls)
        calls.close()
        observed = len(j.matrix())
    lines = trace.read_text().splitlines()
    assert lines[:3] == ["tool read a.rs", "model plan a.rs", "tool count a.rs unsafe"]
    assert "model analyze a.rs" in lines
    assert any(line.startswith("model summarize ") and line.endswith(" to 40") for line in lines)
    assert lines[-1].startswith("model report from ")
    with Journal.open(db, AuditState) as j:
        calls = Calls(MockModel(), trace)
        again = run(j.root(), calls)
        calls.close()
        assert trace.read_text().splitlines() == lines
        assert rerun_counts(j.root(), trace.read_text())["model_calls_rerun"] == 0
        assert again.metrics["recall"] == first.metrics["recall"]
        assert len(j.matrix()) == observed  # a finished run observes nothing twice


def test_fork_inherits_prefix_calls_and_runs_only_its_tail(tmp_path):
    root = make_tree(tmp_path / "tree")
    trace = tmp_path / "t.txt"
    with Journal.in_memory(AuditState) as j:
        base = j.root()
        start(base, root, 3000)
        run(base, Calls(MockModel()))
        fork = base.fork_at(21, params={"budget": 10})  # two files in: 1 + 2 x 10 events
        start(fork, budget=10)
        calls = Calls(MockModel(), trace)
        run(fork, calls)
        calls.close()
    lines = trace.read_text().splitlines()
    assert not any(" a.rs" in line or " crlf.c" in line for line in lines)
    assert "tool read d.md" in lines


def test_budget_validation(tmp_path):
    with Journal.in_memory(AuditState) as j:
        with pytest.raises(InvalidValue):
            start(j.root(), make_tree(tmp_path), 0)
        with pytest.raises(InvalidValue):
            run(j.root(), Calls(MockModel()))
