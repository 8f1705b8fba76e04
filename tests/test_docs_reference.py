"""The reference is generated from the code and leaves nothing out: every command of both
console scripts (the bundled agents' included) with every option, every route of the server's
route table and every error kind appear in what ``docs/hooks/reference.py`` generates, and in
the site ``mkdocs build --strict`` builds from it."""

from __future__ import annotations

import html
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "docs_reference_hook", ROOT / "docs" / "hooks" / "reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def every_command(program: str) -> list[tuple[str, Any]]:
    """(the words that run it, the command) for every command of a console script's app,
    found by walking the typer app here, independently of the generator."""
    import typer.main

    if program == "lithify":
        from workbench.cli import app, register_agent_commands

        register_agent_commands()
    else:
        from workbench.compat.stateforge.cli import app

    found: list[tuple[str, Any]] = []

    def walk(cmd: Any, words: str) -> None:
        for name, sub in cmd.commands.items():
            if hasattr(sub, "commands"):
                walk(sub, f"{words} {name}")
            else:
                found.append((f"{words} {name}", sub))

    walk(typer.main.get_command(app), program)
    return found


@pytest.mark.parametrize("program", ["lithify", "stateforge"])
def test_every_command_and_option_is_in_the_cli_reference(program):
    text = load_hook().generate("cli", program)
    commands = every_command(program)
    assert len(commands) >= (30 if program == "lithify" else 8)
    for words, cmd in commands:
        heading = f"\n### {words}\n"
        assert heading in text, f"{words} is missing from the {program} reference"
        section = text.split(heading, 1)[1].split("\n### ", 1)[0]
        # the reference is the help: a command or option without it would be a blank entry
        assert (cmd.help or "").strip(), f"{words} has no help text"
        for param in cmd.params:
            name = param.name.upper() if param.param_type_name == "argument" else param.opts[0]
            assert f"`{name}" in section, f"{words}: {name} is missing"
            assert (getattr(param, "help", None) or "").strip(), f"{words} {name}: no help"
    assert "Exit codes: 0 ok" in text


def test_the_bundled_agents_commands_are_in_the_cli_reference():
    text = load_hook().generate("cli", "lithify")
    for words in ("lithify demo", "lithify crash-demo", "lithify memory ingest"):
        assert f"\n### {words}\n" in text


def test_every_server_route_is_in_the_route_reference():
    from workbench.server.handlers import ROUTES

    text = load_hook().generate("routes")
    assert len(ROUTES) >= 15
    for route in ROUTES:
        assert f"\n### {route.path}\n" in text, f"route {route.path} is missing"
        assert f"`{route.methods}` `/lithify/api/{route.path}`" in text
        # what it takes comes from its handler's own docstring
        assert (route.handler.__dict__.get("__doc__") or "").strip(), f"{route.path}: no docstring"


def test_every_error_kind_is_in_the_errors_reference_with_its_exit_code_and_status():
    from workbench import errors

    text = load_hook().generate("errors")
    kinds = [
        cls
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.WorkbenchError)
    ]
    assert len(kinds) >= 15
    for cls in kinds:
        assert f"\n### {cls.__name__}\n" in text, f"{cls.__name__} is missing"
    for kind, exit_code, status in (("InvalidValue", 2, 400), ("NotFound", 1, 404)):
        assert (
            f"| [`{kind}`](#{kind.lower()}) | `WorkbenchError` | {exit_code} | {status} |" in text
        )


def test_an_unknown_reference_marker_fails_the_build():
    hook = load_hook()
    with pytest.raises(ValueError, match="unknown reference marker"):
        hook.on_page_markdown("<!-- reference: nothing -->\n")


def test_the_reference_pages_hold_their_markers():
    pages = {
        "cli.md": "<!-- reference: cli lithify -->",
        "stateforge-cli.md": "<!-- reference: cli stateforge -->",
        "server.md": "<!-- reference: routes -->",
        "errors.md": "<!-- reference: errors -->",
    }
    for page, marker in pages.items():
        lines = (ROOT / "docs" / "reference" / page).read_text().splitlines()
        assert marker in lines, f"docs/reference/{page} lost {marker}"


@pytest.mark.slow  # mkdocs builds the whole site in a subprocess (mkdocstrings reads the code)
def test_the_site_builds_strictly_with_every_command_and_route(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra: pip install -e '.[docs]'")
    pytest.importorskip("mkdocstrings")
    site = tmp_path / "site"
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-4000:]

    def headings(page: str) -> set[str]:
        doc = (site / "reference" / page / "index.html").read_text()
        found = re.findall(r"<h3 id=\"[^\"]*\">(.*?)<a class=\"headerlink\"", doc)
        return {html.unescape(h).strip() for h in found}

    for program, page in (("lithify", "cli"), ("stateforge", "stateforge-cli")):
        built = headings(page)
        for words, _ in every_command(program):
            assert words in built, f"{words} is not in the built {page} page"
    from workbench.server.handlers import ROUTES

    built = headings("server")
    for route in ROUTES:
        assert route.path in built, f"route {route.path} is not in the built server page"
    api = (site / "reference" / "api" / "journal" / "index.html").read_text()
    assert 'id="workbench.journal.Journal.open"' in api
