"""The reference pages that are generated from the code, so that nothing is written twice.

An MkDocs hook (``hooks:`` in ``mkdocs.yml``). A page holds a marker on a line of its own, and
the build replaces it with what the code says today:

- ``<!-- reference: cli lithify -->`` and ``<!-- reference: cli stateforge -->``: every command
  of the typer app behind that console script (the bundled agents' commands included), its
  arguments and options, and its exit codes;
- ``<!-- reference: routes -->``: the JupyterLab server's routes, from
  ``workbench.server.handlers.ROUTES`` and each handler's docstring;
- ``<!-- reference: errors -->``: every error kind, from ``workbench/errors.py`` (and the
  subclasses other modules define), with what it carries, the CLI's exit code and the server's
  HTTP status for it.

An unknown marker fails the build. ``tests/test_docs_reference.py`` imports this file to check
that every command and every route is in what it generates.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Iterator
from typing import Any

MARKER = re.compile(r"^<!-- reference: (?P<what>[a-z]+)(?: (?P<arg>[\w-]+))? -->$", re.M)

# The console scripts of pyproject.toml and where their typer apps live.
PROGRAMS = {
    "lithify": "workbench.cli",
    "stateforge": "workbench.compat.stateforge.cli",
}

# Modules that define WorkbenchError subclasses outside workbench/errors.py (imported so that
# their classes are listed too).
ERROR_MODULES = (
    "workbench.errors",
    "workbench.replication",
    "workbench.cli.app",
    "workbench.compat.stateforge.exceptions",
    "workbench.agents.auditor.models",
    "workbench.sweep",
    "workbench.charts",
    "workbench.memory",
)


# -- Markdown helpers ---------------------------------------------------------------------------

_CODE_SPAN = re.compile(r"(``.+?``|`[^`]+`)")


def text(s: str | None) -> str:
    """Help or docstring text as Markdown: hard-wrapped lines joined, paragraphs kept, Markdown's
    special characters escaped outside code spans (help text is plain text, not Markdown)."""
    if not s:
        return ""
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", inspect.cleandoc(s))]
    return "\n\n".join(_escape(p) for p in paragraphs if p)


def _escape(s: str) -> str:
    parts = _CODE_SPAN.split(s)
    for i in range(0, len(parts), 2):  # the even parts are outside code spans
        parts[i] = re.sub(r"([\\*_\[\]<>|#])", r"\\\1", parts[i])
    return "".join(parts)


def cell(s: str | None) -> str:
    """Text for one table cell: one line, pipes escaped."""
    return text(s).replace("\n\n", " ")


def code(s: str) -> str:
    """Inline code that may itself contain backticks."""
    return f"`` {s} ``" if "`" in s else f"`{s}`"


# -- the command line ---------------------------------------------------------------------------


def cli_app(program: str) -> Any:
    """The click command behind a console script, with every installed agent's commands."""
    import typer.main

    module = importlib.import_module(PROGRAMS[program])
    if program == "lithify":
        module.register_agent_commands()
    return typer.main.get_command(module.app)


def cli_commands(program: str) -> Iterator[tuple[str, Any, Any]]:
    """(the command line that runs it, the command, its group) for every command, in the order
    the app declares them; subcommands of a group (``snapshots rebuild``) included."""
    root = cli_app_cached(program)

    def walk(cmd: Any, words: list[str], group: Any) -> Iterator[tuple[str, Any, Any]]:
        for name, sub in cmd.commands.items():
            if getattr(sub, "hidden", False):
                continue
            if hasattr(sub, "commands"):
                yield from walk(sub, [*words, name], sub)
            else:
                yield " ".join([*words, name]), sub, group

    yield from walk(root, [program], None)


def _panel(cmd: Any, group: Any) -> str:
    for c in (cmd, group):
        panel = getattr(c, "rich_help_panel", None)
        if isinstance(panel, str):
            return panel
    return "Commands"


def _context(cmd: Any, words: str, group: Any) -> Any:
    """The click context a command runs in (its usage line names the command path)."""
    from typer._click.core import Context

    names = words.split()
    ctx = Context(cli_app_cached(names[0]), info_name=names[0])
    if group is not None:
        ctx = Context(group, info_name=names[-2], parent=ctx)
    return Context(cmd, info_name=names[-1], parent=ctx)


def _usage(cmd: Any, ctx: Any) -> str:
    usage = re.sub(r"^Usage:\s*", "", cmd.get_usage(ctx).strip())
    # arguments as --help shows them: REF, [REF]
    return re.sub(
        r"[{\[]([A-Za-z_]+)[}\]]",
        lambda m: m[0][0].replace("{", "") + m[1].upper() + m[0][-1].replace("}", ""),
        usage,
    )


_APPS: dict[str, Any] = {}


def cli_app_cached(program: str) -> Any:
    """``cli_app``, built once per process (agents register their commands once)."""
    if program not in _APPS:
        _APPS[program] = cli_app(program)
    return _APPS[program]


def _param_rows(cmd: Any, ctx: Any) -> list[str]:
    rows = []
    for p in cmd.params:
        if getattr(p, "hidden", False):
            continue
        if p.param_type_name == "argument":
            name = p.name.upper()
            kind = "argument"
        else:
            name = ", ".join([*p.opts, *p.secondary_opts])
            kind = "flag" if getattr(p, "is_flag", False) else p.display_type(ctx).strip("<>")
            if getattr(p, "multiple", False):
                kind = re.sub(r"^list\[(.*)\]$", r"\1", kind) + ", repeatable"
        default = p.default
        if p.required:
            shown = "required"
        elif default is None or default is False or default == [] or callable(default):
            shown = ""
        else:
            shown = code(str(default))
        rows.append(f"| {code(name)} | {cell(kind)} | {shown} | {cell(getattr(p, 'help', ''))} |")
    return rows


def cli_markdown(program: str) -> str:
    """The reference of one console script: its global options, then every command grouped as
    ``--help`` groups them, each with its usage, help, arguments and options."""
    from typer._click.core import Context

    root = cli_app_cached(program)
    root_ctx = Context(root, info_name=program)
    out = [text(root.help), "", f"```text\n{_usage(root, root_ctx)}\n```", ""]
    out += ["## Global options", ""]
    out += ["| option | type | default | what it does |", "|---|---|---|---|"]
    out += _param_rows(root, root_ctx)
    epilogs: set[str] = set()
    panels: dict[str, list[str]] = {}
    for words, cmd, group in cli_commands(program):
        ctx = _context(cmd, words, group)
        section = [f"### {words}", "", f"```text\n{_usage(cmd, ctx)}\n```", "", text(cmd.help)]
        rows = _param_rows(cmd, ctx)
        if rows:
            section += ["", "| argument or option | type | default | what it does |"]
            section += ["|---|---|---|---|", *rows]
        if cmd.epilog:
            epilogs.add(text(cmd.epilog))
        panels.setdefault(_panel(cmd, group), []).append("\n".join(section))
    if epilogs:
        out += ["", "Every command's help ends with:", ""]
        out += [f"> {e}" for e in sorted(epilogs)]
    for panel, sections in panels.items():
        out += ["", f"## {_escape(panel)}", ""]
        out += ["\n\n".join(sections)]
    return "\n".join(out) + "\n"


# -- the server's routes ------------------------------------------------------------------------


def routes() -> list[Any]:
    """The route table the JupyterLab server extension mounts."""
    from workbench.server.handlers import ROUTES

    return list(ROUTES)


def routes_markdown() -> str:
    """Every route under ``/lithify/api/``: its methods, what it returns and, from its handler's
    docstring, the parameters it takes."""
    out = ["| route | method | what it does |", "|---|---|---|"]
    for r in routes():
        out.append(f"| [{code(r.path)}](#{_slug(r.path)}) | {r.methods} | {cell(r.doc)} |")
    for r in routes():
        out += ["", f"### {r.path}", "", f"`{r.methods}` `/lithify/api/{r.path}`: {text(r.doc)}."]
        doc = r.handler.__dict__.get("__doc__")  # its own, not the base class's
        if doc:
            out += ["", text(doc)]
    return "\n".join(out) + "\n"


def _slug(heading: str) -> str:
    # what MkDocs' toc extension makes of a heading (lower case, word characters and dashes)
    s = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return re.sub(r"[-\s]+", "-", s)


# -- the error kinds ----------------------------------------------------------------------------


def error_classes() -> list[type]:
    """Every WorkbenchError subclass the package defines: workbench/errors.py first (in source
    order), then those of other modules."""
    for name in ERROR_MODULES:
        importlib.import_module(name)
    from workbench.errors import WorkbenchError

    seen: list[type] = []

    def walk(cls: type) -> None:
        if cls not in seen and cls.__module__.startswith("workbench."):
            seen.append(cls)
        for sub in cls.__subclasses__():
            walk(sub)

    walk(WorkbenchError)

    def order(cls: type) -> tuple[int, str, int]:
        first = 0 if cls.__module__ == "workbench.errors" else 1
        return first, cls.__module__, inspect.getsourcelines(cls)[1]

    return sorted(seen, key=order)


def _fields(cls: type) -> list[str]:
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        for name in klass.__dict__.get("__annotations__", {}):
            if name not in names:
                names.append(name)
    return names


def _exit_and_status(cls: type) -> tuple[str, str]:
    from workbench.cli.app import exit_code
    from workbench.server.handlers import http_status

    try:
        err = cls("an example")
    except Exception:  # noqa: BLE001 (a class whose constructor takes other arguments)
        return "", ""
    return str(exit_code(err)), str(http_status(err)[0])


def errors_markdown() -> str:
    """A table of every error kind, then each with its fields and docstring."""
    from workbench.errors import WorkbenchError

    classes = error_classes()
    out = ["| kind | is a | CLI exit code | HTTP status | what it means |", "|---|---|---|---|---|"]
    for cls in classes:
        base = cls.__bases__[0].__name__ if cls.__bases__ else ""
        exit_, status = _exit_and_status(cls)
        link = f"[`{cls.__name__}`](#{cls.__name__.lower()})"
        first = re.split(r"(?<=\.)\s+(?=[A-Z])", " ".join((inspect.getdoc(cls) or "").split()))[0]
        out.append(f"| {link} | `{base}` | {exit_} | {status} | {cell(first)} |")
    for cls in classes:
        bases = ", ".join(f"`{b.__name__}`" for b in cls.__bases__)
        where = f"`{cls.__module__}`"
        out += ["", f"### {cls.__name__}", "", f"A subclass of {bases}, in {where}.", ""]
        out.append(text(inspect.getdoc(cls) or ""))
        root = [] if cls is WorkbenchError else _fields(WorkbenchError)  # on every error
        fields = [f for f in _fields(cls) if f not in root]
        if fields:
            out += ["", "Fields: " + ", ".join(f"`{f}`" for f in fields) + "."]
    return "\n".join(out) + "\n"


# -- the hook -----------------------------------------------------------------------------------


def generate(what: str, arg: str | None = None) -> str:
    """The Markdown for one marker."""
    if what == "cli" and arg in PROGRAMS:
        return cli_markdown(arg)
    if what == "routes" and arg is None:
        return routes_markdown()
    if what == "errors" and arg is None:
        return errors_markdown()
    raise ValueError(f"unknown reference marker: {what} {arg or ''}".strip())


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs event: replace each marker with the reference it names."""
    return MARKER.sub(lambda m: generate(m["what"], m["arg"]), markdown)
