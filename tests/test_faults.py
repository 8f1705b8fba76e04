"""Every CLI command against every fault a journal file meets: a damaged page, a truncated file,
a 0-byte file, a read-only file, a read-only folder, a full disk, a locked journal, a garbage
intent log. Each command exits 0, 1 or 2 with one `error: ...` line (one JSON object under
--json), never a traceback; read commands never change the journal's bytes, and work on
read-only files and folders."""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from workbench import Journal
from workbench.agents.auditor import AuditState

HERE = Path(__file__).parent
UNPRIVILEGED = (
    ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
)


def read_commands(receipt_ref: str, out: Path) -> list[list[str]]:
    return [
        ["verify"],
        ["matrix"],
        ["matrix", "--wide", "--format", "json"],
        ["chart", "--x", "budget", "-o", str(out)],
        ["diff", "main@1", "main@5"],
        ["log", "-n", "3"],
        ["show", "head"],
        ["branches"],
        ["provenance", "main@5"],
        ["receipt", receipt_ref],
        ["status"],
        ["at", "--seq", "5"],
        ["history", "--from", "1", "--to", "5"],
        ["sweeps"],
        ["report"],
        ["--raw", "show", "main@3"],
    ]


WRITE_COMMANDS = [
    ["tag", "main@3", "here"],
    ["rollback", "--to", "4", "--yes"],
    ["vacuum"],
    ["rekey"],
    ["fork", "--at", "5", "--budget", "500"],
    ["run"],
    ["sweep", "--at", "5", "--budgets", "500", "--workers", "1"],
    ["sweep-resume", "1"],
    ["crash-demo", "--kills", "0"],
]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    d = tmp_path_factory.mktemp("pristine")
    db = d / "a.db"
    for args in (["run", "--max-files", "8"], ["fork", "--at", "5", "--budget", "400"]):
        subprocess.run(
            [sys.executable, "-m", "workbench", "--db", str(db), *args],
            check=True,
            capture_output=True,
        )
    with Journal.open(db, AuditState) as j:
        ref = next(
            f"main@{r.seq}"
            for r in j.root().history()
            if r.kind == "effect" and "receipt" in r.payload
        )
    assert not Path(str(db) + "-wal").exists()
    return db, ref


def _damage(db: Path) -> None:
    data = bytearray(db.read_bytes())
    page = 2048
    for at in range(3 * page, min(len(data), 9 * page), page):
        data[at + 8 : at + 400] = os.urandom(392)
    db.write_bytes(bytes(data))


def _truncate(db: Path) -> None:
    with open(db, "r+b") as f:
        f.truncate(db.stat().st_size // 2)


FAULTS = [
    "damaged_page",
    "truncated",
    "empty",
    "readonly_file",
    "readonly_dir",
    "disk_full",
    "locked",
    "garbage_intents",
]


def _run_batch(
    db: Path, commands: list[dict], prefix: list[str], preexec=None, env=None
) -> list[dict]:
    p = subprocess.run(
        [
            *prefix,
            sys.executable,
            str(HERE / "workers" / "cli_batch.py"),
            str(db),
            json.dumps(commands),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=preexec,
        env=env,
        cwd=db.parent if os.access(db.parent, os.W_OK) else None,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS)
def test_every_command_fails_cleanly_or_works_under(fault, pristine, tmp_path):
    src, receipt_ref = pristine
    work = tmp_path / "j"
    work.mkdir()
    db = work / "a.db"
    shutil.copy(src, db)
    out = tmp_path / "chart.svg"
    commands = [{"args": a, "read": True} for a in read_commands(receipt_ref, out)]
    commands += [{"args": a, "read": False} for a in WRITE_COMMANDS]
    prefix: list[str] = []
    preexec = None
    holder = None
    env = {**os.environ, "LITHIFY_TIMEOUT": "0.5", "LITHIFY_NEW_KEY": "k2"}
    if fault == "damaged_page":
        _damage(db)
    elif fault == "truncated":
        _truncate(db)
    elif fault == "empty":
        db.write_bytes(b"")
    elif fault == "readonly_file":
        db.chmod(0o444)
        prefix = UNPRIVILEGED
    elif fault == "readonly_dir":
        work.chmod(0o555)
        prefix = UNPRIVILEGED
    elif fault == "disk_full":

        def preexec() -> None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, resource.RLIM_INFINITY))
    elif fault == "locked":
        holder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                (
                    f"import sqlite3, sys\nc = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
                    "c.execute('PRAGMA locking_mode=EXCLUSIVE')\nc.execute('BEGIN EXCLUSIVE')\n"
                    "c.execute(\"INSERT OR REPLACE INTO meta VALUES ('held', '1')\")\n"
                    "print('held', flush=True)\nsys.stdin.read()\n"
                ),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout.readline().strip() == "held"
    elif fault == "garbage_intents":
        Path(str(db) + "-intents").write_bytes(os.urandom(3000) + b"\n+ 0 zz\n- x\n\xff\xfe")
    try:
        results = _run_batch(db, commands, prefix, preexec, env)
    finally:
        if holder is not None:
            holder.communicate(timeout=10)
        work.chmod(0o755)
        if db.exists():
            db.chmod(0o644)
    assert len(results) == len(commands) + sum(c["read"] for c in commands)
    for r in results:
        what = (
            f"{fault}: lithify {' '.join(r['args'])}{' --json' if r['json'] else ''} -> "
            f"{r['code']}\n{r['stderr'][-2000:]}"
        )
        assert r["escaped"] is None, what + r["escaped"]
        assert "Traceback" not in r["stderr"] and "Traceback" not in r["stdout"], what
        assert r["code"] in (0, 1, 2), what
        report = json.loads(r["stdout"]) if r["json"] and r["args"] == ["verify"] else {}
        if r["code"] != 0 and r["args"] == ["verify"] and not r["stderr"] and "error" not in report:
            # verify reports damage as its result (exit 1), with what SQLite said
            assert report.get("ok") is False if r["json"] else "damaged" in r["stdout"], (
                what + r["stdout"]
            )
        elif r["code"] != 0:
            if r["json"]:
                doc = json.loads(r["stdout"])
                assert set(doc) == {"error", "kind", "exit"} and doc["error"], what
                assert doc["exit"] == r["code"], what
            else:
                lines = [line for line in r["stderr"].splitlines() if line.strip()]
                assert len(lines) == 1 and lines[0].startswith("error: "), what
        if r["read"]:
            assert r["unchanged"], what + "\n(a read command changed the journal)"
            if fault in ("readonly_file", "readonly_dir", "garbage_intents"):
                expected = 1 if r["args"] in (["verify"],) and fault == "garbage_intents" else 0
                assert r["code"] == 0 or (expected and r["code"] == expected), what


# -- reads leave nothing beside the journal; another user's leftovers are named ------------------


def _sidecars(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.iterdir() if p.name.startswith(db.name + "-"))


def test_reads_of_a_checkpointed_journal_create_no_files(tmp_path):
    from cli import lithify

    from workbench.storage import is_journal_file

    db = tmp_path / "a.db"
    with Journal.open(db) as j:
        j.root().apply({"x": 1})
        j.root().fork_at(1, name="f").observe("m", 1.0)
    assert _sidecars(db) == []  # closed: checkpointed, nothing beside it
    for args in (["history"], ["verify"], ["branches"], ["matrix"], ["show", "head"]):
        r = lithify("--db", str(db), *args)
        assert r.returncode == 0, r.stderr
        assert _sidecars(db) == [], args
    assert is_journal_file(str(db)) and _sidecars(db) == []
    with Journal.open(db, readonly=True) as j:
        assert j.root().state() == {"x": 1} and j.branch("f").head == 2
        assert _sidecars(db) == []
        with Journal.open(db) as w:  # a writer arrives while the reader is open
            w.root().apply({"x": 2})
            assert j.root().head == 2 and j.root().state() == {"x": 2}  # it sees the commit
        assert j.verify().ok


def _as_user(uid: int, work) -> int:
    """Run ``work()`` in a forked child as another user; its exit code (3: it raised)."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.setgid(uid)
            os.setuid(uid)
            work()
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException as e:  # noqa: BLE001 (the parent reads it)
            sys.stdout.write(f"{type(e).__name__}: {e}\n")
            code = 3
        finally:
            sys.stdout.flush()
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


@pytest.fixture
def shared_dir():
    """A folder two users may write in, outside pytest's root-only tree."""
    import tempfile

    d = Path(tempfile.mkdtemp(prefix="lithify-shared-"))
    d.chmod(0o777)
    yield d
    shutil.rmtree(d)


OWNER, OTHER = 54321, 54322  # two unprivileged users


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as two users")
def test_another_users_read_does_not_block_the_owners_next_write(shared_dir, capfd):
    from workbench.cli import main

    db = shared_dir / "j.db"
    warm = shared_dir / "warm.db"  # import everything the CLI needs before dropping privileges
    with Journal.open(warm) as j:
        j.root().apply({"x": 1})
    for args in (["history"], ["verify"], ["branches"]):
        try:
            main(["--db", str(warm), *args])
        except SystemExit as e:
            assert not e.code
    warm.unlink()
    for p in shared_dir.iterdir():
        p.unlink()

    def write() -> None:
        with Journal.open(db) as j:
            j.root().apply({"x": 1})

    assert _as_user(OWNER, write) == 0
    for args in (["history"], ["verify"], ["branches"]):
        assert _as_user(OTHER, lambda a=args: main(["--db", str(db), *a])) == 0
    assert _sidecars(db) == []
    assert _as_user(OWNER, write) == 0, capfd.readouterr().out
    with Journal.open(db, readonly=True) as j:
        assert j.root().head == 2


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as two users")
def test_a_write_blocked_by_another_users_files_names_them(shared_dir, capfd):
    import sqlite3

    db = shared_dir / "j.db"

    def write() -> None:
        with Journal.open(db) as j:
            j.root().apply({"x": 1})

    def foreign_read() -> None:  # another tool (the sqlite3 shell, DuckDB...) as another user
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        con.execute("SELECT count(*) FROM events").fetchone()
        con.close()

    assert _as_user(OWNER, write) == 0
    assert _as_user(OTHER, foreign_read) == 0
    assert _sidecars(db) == ["j.db-shm", "j.db-wal"]  # what SQLite leaves for a reader
    capfd.readouterr()
    assert _as_user(OWNER, write) == 3
    said = capfd.readouterr().out
    assert said.startswith("ReadOnly: ") and f"{db}-shm" in said and str(OTHER) in said, said
    assert "remove" in said  # what to do


def test_a_read_as_the_file_stands_never_mixes_two_versions_of_it(tmp_path):
    from workbench.errors import Busy

    db = tmp_path / "a.db"
    with Journal.open(db) as j:
        j.root().apply_many([{"i": i} for i in range(10_000)])
    with Journal.open(db, readonly=True) as r:
        stream = r.storage.own_events(0)
        first = [next(stream) for _ in range(10)]
        with Journal.open(db) as w:  # a whole writer session: its close folds the WAL in
            w.root().apply({"i": -1})
        assert _sidecars(db) == []  # the reader held nothing: the writer cleaned up
        try:
            rest = list(stream)
        except Busy as e:  # the file changed under the stream: it stops, and says so
            assert "changed while it was being read" in str(e)
        else:
            assert [row[0] for row in first + rest] == list(range(1, 10_001))
        assert r.root().head == 10_001 and r.verify().ok  # a new read sees the new file


# -- an I/O error is not a full disk --------------------------------------------------------------


def _sqlite_error(name: str | None, message: str = "disk I/O error") -> sqlite3.OperationalError:
    """An error as sqlite3 raises it (SQLCipher's carry no code: ``name`` None)."""
    err = sqlite3.OperationalError(message)
    if name is not None:
        err.sqlite_errorname = name  # type: ignore[attr-defined]
    return err


def _real_eio() -> tuple[sqlite3.Error, OSError]:
    """A real SQLite I/O error and a real EIO from the kernel: /proc/self/mem fails to read
    where this process maps nothing (address 0)."""
    try:
        with open("/proc/self/mem", "rb") as f:
            f.read(1)
    except OSError as e:
        os_err = e
    else:
        pytest.skip("reading /proc/self/mem at 0 did not fail here")
    con = None
    try:
        con = sqlite3.connect("file:/proc/self/mem?mode=ro", uri=True)
        con.execute("SELECT * FROM sqlite_master").fetchall()
    except sqlite3.Error as e:
        sql_err = e
    else:
        pytest.skip("SQLite read /proc/self/mem without an I/O error")
    finally:
        if con is not None:
            con.close()
    return sql_err, os_err


def test_an_io_error_is_an_io_failure_not_a_full_disk(tmp_path, monkeypatch):
    # Every SQLITE_IOERR on a write (and a bare IOERR) was DiskFull ("free space and try
    # again"), every other one and OSError EIO a bare StorageError.
    from workbench.cli.app import exit_code
    from workbench.errors import Busy, DiskFull, IOFailure, StorageError, os_error
    from workbench.server.base import http_status
    from workbench.storage.sqlite import faults

    db = tmp_path / "a.db"
    Journal.open(db).close()
    path = str(db)
    real_sql, real_os = _real_eio()
    assert real_sql.sqlite_errorname.startswith("SQLITE_IOERR")  # type: ignore[attr-defined]
    assert real_os.errno == errno.EIO
    io_errors = [
        real_sql,
        _sqlite_error("SQLITE_IOERR_READ"),
        _sqlite_error("SQLITE_IOERR_WRITE"),  # the disk failed, and it has room
        _sqlite_error("SQLITE_IOERR_FSYNC"),
        _sqlite_error("SQLITE_IOERR"),
        _sqlite_error(None),  # SQLCipher: the message only
    ]
    for err in io_errors:
        t = faults.translate(err, path, "appending")
        assert type(t) is IOFailure, (err, t)
        assert "not a lack of space" in str(t) and "free space" not in str(t), t
    t = os_error(real_os, path, "announcing an effect")
    assert type(t) is IOFailure and "not a lack of space" in str(t), t
    assert type(faults.translate(real_os, path)) is IOFailure
    # A lack of room stays DiskFull: SQLite's FULL, ENOSPC, EFBIG...
    full = _sqlite_error("SQLITE_FULL", "database or disk is full")
    assert type(faults.translate(full, path)) is DiskFull
    for code in (errno.ENOSPC, errno.EFBIG):
        assert type(os_error(OSError(code, os.strerror(code)), path)) is DiskFull
    # ...and so does the IOERR_WRITE SQLite reports when write() fails with EFBIG: a file of the
    # journal has reached this process's file size limit
    limit = db.stat().st_size + 4096
    monkeypatch.setattr(faults.resource, "getrlimit", lambda what: (limit, -1))
    for name in ("SQLITE_IOERR_WRITE", None):
        assert type(faults.translate(_sqlite_error(name), path)) is DiskFull
    assert type(faults.translate(_sqlite_error("SQLITE_IOERR_READ"), path)) is IOFailure
    monkeypatch.undo()
    # the CLI and the server treat it as they treat its siblings
    failure = IOFailure("the disk failed", path=path)
    assert isinstance(failure, StorageError)
    assert exit_code(failure) == exit_code(Busy("locked")) == exit_code(DiskFull("full")) == 1
    assert http_status(failure) == (500, "IOFailure")


def test_a_write_to_a_read_only_file_in_a_writable_folder_leaves_nothing_beside_it(shared_dir):
    """A journal file its user may not write (another user's, or chmod a-w) in a folder they
    may: it opens for reading, a write is refused with what to do before SQLite runs, and no
    -wal or -shm is left beside it (they were, owned by the user who failed)."""
    db = shared_dir / "j.db"
    with Journal.open(db) as j:
        j.root().apply({"x": 1})
    db.chmod(0o644)  # the owner's; everyone reads it

    def attempt() -> None:
        from workbench.errors import ReadOnly

        with Journal.open(db) as j:
            assert j.readonly
            assert j.root().state() == {"x": 1}
            with pytest.raises(ReadOnly, match="chmod u\\+w"):
                j.root().apply({"x": 2})
            with pytest.raises(ReadOnly, match="read-only file"):
                j.root().effect("k", lambda: 1)

    if os.geteuid() == 0:
        assert _as_user(OTHER, attempt) == 0
    else:
        db.chmod(0o444)
        attempt()
        db.chmod(0o644)
    assert _sidecars(db) == []
    with Journal.open(db) as j:  # its owner still writes it
        assert not j.readonly
        j.root().apply({"x": 3})
        assert j.root().state() == {"x": 3}
