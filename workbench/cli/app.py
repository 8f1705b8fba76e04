"""The ``lithify`` command's frame: the typer app, the global options, opening the journal, one
output format, and the one error handler (one line, or one JSON object; never a traceback).

Global options come before the command: ``lithify [--db PATH] [--json] [--state module:Class]
[--raw] COMMAND``. Exit codes: 0 ok, 1 not found / damaged / failed, 2 usage errors.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import typer
from typer.core import TyperOption

from .. import __version__, opening, plugins
from ..errors import Conflict, InvalidValue, NotFound, WorkbenchError, not_installed
from ..journal import Journal
from ..storage import fault, is_url

app = typer.Typer(
    name="lithify",
    help="lithify workbench: journaled, forkable, crash-safe agent runs.\n\n"
    "Exit codes: 0 ok; 1 not found, damaged or failed; 2 the command line is wrong. Global "
    "options work before or after the command; with --json every outcome is one JSON "
    "document on stdout.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@dataclass
class Ctx:
    """Global options shared by every command."""

    db: str | None
    json: bool
    state: str | None = None
    raw: bool = False

    @property
    def path(self) -> str:
        """The journal file: --db, $LITHIFY_DB, or the default of the installed agent."""
        if self.db:
            return self.db
        agent = plugins.default_agent()
        if agent is None or not agent.db:
            raise InvalidValue("which journal? pass --db PATH (or set LITHIFY_DB)")
        return agent.db


def _version(value: bool) -> None:
    if value:
        typer.echo(f"lithify {__version__}")
        raise typer.Exit()


@app.callback()
def _global(
    ctx: typer.Context,
    db: str = typer.Option(
        None,
        "--db",
        help="Journal file or PostgreSQL URL (postgresql://user@host/db?journal=NAME; default: "
        "$LITHIFY_DB, else the installed agent's own, e.g. auditor.db).",
        show_default=False,
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of text."),
    state: str = typer.Option(
        None,
        "--state",
        help="State class as module:Class, to rebuild states of your own "
        "agent (default: $LITHIFY_STATE, or the class the journal's agent registered).",
    ),
    raw: bool = typer.Option(
        False,
        "--raw",
        help="Read states as plain JSON updated by merge patches, without "
        "the State class (a read-only view: commands that write refuse it).",
    ),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """The global options (see the app's help)."""
    ctx.obj = Ctx(
        db=db or os.environ.get("LITHIFY_DB") or None,
        json=as_json,
        state=state or os.environ.get("LITHIFY_STATE") or None,
        raw=raw,
    )


GLOBAL_HELP = (
    "Global options, before or after the command: --db PATH (the journal; $LITHIFY_DB), "
    "--json (one JSON document on stdout, errors too), --state module:Class, --raw. "
    "Exit codes: 0 ok, 1 not found / damaged / failed, 2 the command line is wrong."
)


snapshots_app = typer.Typer(
    help="Snapshots: list a session's (--session), rebuild the ones built from older delta "
    "versions.",
    no_args_is_help=True,
)
app.add_typer(snapshots_app, name="snapshots", rich_help_panel="Journal")

F = TypeVar("F", bound=Callable[..., Any])

# the pool runner's options, the same on every command that runs forks
CONCURRENCY: Any = typer.Option(
    1,
    "--concurrency",
    help="With the pool or dask runner and an async fork function: forks run at once per "
    "worker process (in flight: workers x concurrency).",
)
MAX_FORKS_PER_WORKER: Any = typer.Option(
    None,
    "--max-forks-per-worker",
    help="With the pool runner: recycle a worker after this many forks (module state persists "
    "between the forks of one worker).",
)


def command(panel: str, name: str | None = None, **kw: Any) -> Callable[[F], F]:
    """``app.command`` for lithify: grouped under ``panel`` in ``lithify --help``, with the
    global options and exit codes in the command's own help."""
    register = app.command(name, rich_help_panel=panel, epilog=GLOBAL_HELP, **kw)

    def decorate(fn: F) -> F:
        register(fn)
        return fn

    return decorate


# typer prints a value label (<bool>) beside flags, which take no value: show none.
_display_type_rich = TyperOption.display_type_rich


def _flag_without_label(self: TyperOption, ctx: Any) -> str | None:
    return None if self.is_flag else _display_type_rich(self, ctx)


TyperOption.display_type_rich = _flag_without_label  # type: ignore[method-assign]


def options(ctx: typer.Context) -> Ctx:
    """The global options of the running command."""
    obj = ctx.find_root().obj
    assert isinstance(obj, Ctx)
    return obj


def open_journal(
    opts: Ctx, state: type | None = None, must_exist: bool = True, write: bool = False
) -> Journal:
    """Open the --db journal: read-only unless the command writes (read commands never change
    a byte, and work on read-only files and folders); a missing file is an error unless the
    command creates one. $LITHIFY_TIMEOUT: seconds to wait for another process's lock (30)."""
    if opts.raw and write:
        raise InvalidValue(
            "--raw is a read-only view of plain JSON states; this command writes: run it "
            "without --raw (with --state module:Class if the journal's class is not known)"
        )
    if opts.raw and opts.state:
        raise InvalidValue("--raw reads states without a class; drop --state or --raw")
    if state is None and opts.state:
        state = opening.state_from_ref(opts.state)
    path = opts.path
    seconds = opening.timeout_from_env()
    try:
        return Journal.open(
            path,
            None if opts.raw else state,
            key=os.environ.get("LITHIFY_KEY") or None,
            readonly=not write,
            raw=opts.raw,
            create=False if must_exist else True,  # the library says what is missing
            timeout=seconds,
        )
    except NotFound as e:
        if is_url(path) or os.path.exists(path):
            raise
        raise NotFound(  # the library's finding, with where the command line looks
            f"no journal at {path}; pass --db PATH (or set LITHIFY_DB), or create one with your "
            "agent (for the bundled auditor: `lithify run`)",
            path=path,
        ) from e


def agent_of(journal: Journal) -> plugins.Agent | None:
    """The agent whose journal this is (by the State name it recorded)."""
    return plugins.agent_for(journal.state_name)


def emit(opts: Ctx, data: Any, human: Callable[[], object]) -> None:
    """Print ``data`` as JSON with --json, else call ``human`` to print for people."""
    if opts.json:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
    else:
        human()


def console() -> Any:
    """A rich console that prints plainly (no guessing at highlights). Piped (not a terminal),
    it has no width limit, so tables print whole values instead of cutting them."""
    from rich.console import Console

    width = None if sys.stdout.isatty() else 100_000
    return Console(highlight=False, soft_wrap=True, width=width)


def matrix_rows(df: Any) -> list[dict[str, Any]]:
    """A polars frame as JSON-ready row dicts."""
    return [dict(r) for r in df.iter_rows(named=True)]


def point(j: Journal, ref: str, branch: str | None = None) -> tuple[int, int]:
    """A point given on the command line: a bare seq on ``--branch`` (default main), or any
    ref (main@40, head~3, a label, a hash prefix). A seq past a branch's head is NotFound, the
    same answer whichever way it was written."""
    text = ref.strip()
    if text.isdigit():
        bid = j.branch(branch).id if branch is not None else 0
        return j.resolve(f"{bid}@{text}")
    return j.resolve(text, default_branch=branch if branch is not None else 0)


def brief(v: Any, n: int = 70) -> str:
    """A value as short JSON text for one line of output."""
    text = json.dumps(v, ensure_ascii=False, default=str)
    return text if len(text) <= n else text[: n - 1] + "…"


class UsageError(InvalidValue):
    """The command line does not parse: an unknown command or option, a missing argument."""


def exit_code(err: WorkbenchError) -> int:
    """2 when the command line itself is wrong (bad value, malformed or ambiguous ref), else 1."""
    ambiguous = isinstance(err, Conflict) and bool(getattr(err, "candidates", None))
    return 2 if isinstance(err, InvalidValue) or ambiguous else 1


def fail(err: BaseException, as_json: bool) -> None:
    """One line on stderr (one JSON object on stdout under --json), never a traceback; exits."""
    known = not_installed(err) or fault(err, os.environ.get("LITHIFY_DB") or "the journal")
    if known is not None:
        message, kind, code = str(known), type(known).__name__, exit_code(known)
    else:
        message = (
            f"internal error: {type(err).__name__}: {err} (please report it; "
            "LITHIFY_DEBUG=1 shows the traceback)"
        )
        kind, code = "InternalError", 1
    message = " ".join(message.split())
    if as_json:
        doc = {"error": message, "kind": kind, "exit": code}
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    else:
        typer.echo(f"error: {message}", err=True)
    sys.exit(code)


GLOBAL_WITH_VALUE = ("--db", "--state")
GLOBAL_FLAGS = ("--json", "--raw")


def hoist_globals(args: list[str]) -> list[str]:
    """The command line with the global options moved before the command, so they work
    anywhere: ``lithify verify --db x.db`` is ``lithify --db x.db verify``. Words after
    ``--`` are left alone."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        tok = args[i]
        if tok == "--":
            rest += args[i:]
            break
        if tok in GLOBAL_FLAGS or tok.startswith(tuple(f"{o}=" for o in GLOBAL_WITH_VALUE)):
            front.append(tok)
        elif tok in GLOBAL_WITH_VALUE and i + 1 < len(args):
            front += [tok, args[i + 1]]
            i += 1
        else:
            rest.append(tok)
        i += 1
    return front + rest


def wants_json(args: list[str]) -> bool:
    """Whether the command line asks for JSON (anywhere before ``--``)."""
    return "--json" in (args[: args.index("--")] if "--" in args else args)


def reflow(text: str | None) -> str | None:
    """A docstring as help text: the lines of each paragraph joined (a docstring wraps at 100
    columns, a terminal at its own width: kept breaks split sentences), paragraphs and list
    items (lines starting with ``-``) kept apart."""
    if not text:
        return text
    import inspect

    paragraphs = []
    for block in inspect.cleandoc(text).split("\n\n"):
        lines: list[str] = []
        for line in block.splitlines():
            line = line.strip()
            if lines and not line.startswith(("- ", "* ")):
                lines[-1] += " " + line
            else:
                lines.append(line)
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def reflow_help(cli: typer.Typer) -> None:
    """Reflow the help of every command and group of ``cli`` (``reflow``), once."""
    for cmd in cli.registered_commands:
        if not getattr(cmd, "_reflowed", False):
            cmd.help = reflow(cmd.help or (cmd.callback.__doc__ if cmd.callback else None))
            cmd._reflowed = True  # type: ignore[attr-defined]
    for group in cli.registered_groups:
        if group.typer_instance is not None:
            reflow_help(group.typer_instance)
    info = cli.info
    if isinstance(info.help, str):
        info.help = reflow(info.help)


def run_app(
    cli: typer.Typer,
    prog_name: str,
    argv: list[str] | None = None,
    before: Callable[[], object] | None = None,
) -> None:
    """Run a typer app as a console script: global options hoisted, every error one line (one
    JSON document under ``--json``) with exit code 1 (failed, not found) or 2 (usage), never a
    traceback (``LITHIFY_DEBUG=1`` shows it)."""
    args = hoist_globals(list(sys.argv[1:] if argv is None else argv))
    as_json = wants_json(args)
    try:
        if before is not None:
            before()
        reflow_help(cli)
        code = cli(args=args, prog_name=prog_name, standalone_mode=False)
    except KeyboardInterrupt:
        typer.echo("error: interrupted", err=True)
        sys.exit(130)
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        sys.exit(1)
    except typer.TyperException as e:  # a usage mistake: unknown option, missing argument...
        if not as_json and hasattr(e, "show"):
            e.show()
            sys.exit(2)
        fail(UsageError(e.format_message()), as_json)
    except Exception as e:
        if os.environ.get("LITHIFY_DEBUG"):
            raise
        fail(e, as_json)
    if isinstance(code, int) and code:
        sys.exit(code)
