"""``lithify lab`` and ``lithify notebooks``: JupyterLab on this folder (its journals listed, the
bundled notebooks at hand), on a folder, or with a journal open in the sidebar; the journal
sidebar and offline charts ready."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import typer

from .. import bundled
from ..errors import InvalidValue, NotAJournal, NotFound
from ..server.hub import OPEN_ENV
from ..storage import is_journal_file, is_url
from .app import command, emit, options

PACKAGE = Path(__file__).resolve().parents[1]  # workbench/
WORKSPACE = "lithify-notebooks"  # what `lithify notebooks` and `lithify lab` use by default


def copy_notebooks(target: Path) -> list[Path]:
    """Copy the bundled notebooks and templates into ``target`` (a new or empty folder)."""
    if target.exists() and not target.is_dir():
        raise InvalidValue(f"{target} is a file; give a folder for the notebooks")
    if target.is_dir() and any(target.iterdir()):
        raise InvalidValue(
            f"{target} is not empty; the notebooks go into a new folder (nothing is overwritten)"
        )
    source = bundled.notebooks()
    target.mkdir(parents=True, exist_ok=True)
    copied = []
    for path in sorted(source.rglob("*.ipynb")):
        dest = target / path.relative_to(source)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
        copied.append(dest)
    return copied


@command("JupyterLab")
def notebooks(
    ctx: typer.Context,
    directory: Path = typer.Argument(
        Path(WORKSPACE), help=f"Folder to create (default: ./{WORKSPACE})."
    ),
) -> None:
    """Copy the bundled notebooks and sweep templates into a new folder to work in."""
    opts = options(ctx)
    copied = copy_notebooks(directory)
    emit(
        opts,
        {"dir": str(directory), "notebooks": [str(p) for p in copied]},
        lambda: print(
            f"{len(copied)} notebooks in {directory}/ (templates in {directory}/templates); "
            f"open them with: lithify lab {directory}"
        ),
    )


@dataclass(frozen=True)
class LabLaunch:
    """What ``lithify lab`` starts: JupyterLab on ``root``, the file browser at ``land``, and
    ``journal`` (relative to ``root``, or a URL) open in the lithify sidebar."""

    root: Path
    journal: str | None = None
    land: str | None = None

    def args(self, extra: list[str]) -> list[str]:
        """The JupyterLab command line, with options passed through to JupyterLab."""
        ext = PACKAGE / "labextensions"  # in a source checkout (a wheel installs it elsewhere)
        args = [
            sys.executable,
            "-m",
            "jupyterlab",
            f"--ServerApp.root_dir={self.root.resolve()}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--ServerApp.jpserver_extensions=workbench.server=True",
        ]
        if (ext / "lithify-workbench" / "package.json").exists():
            # the journal sidebar from a source checkout or an editable install (a wheel puts
            # it where every `jupyter lab` looks, share/jupyter/labextensions)
            args.append(f"--LabApp.extra_labextensions_path={ext}")
        if self.land and not any(a.startswith("--LabApp.default_url") for a in extra):
            args.append(f"--LabApp.default_url=/lab/tree/{self.land}")
        if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in extra:
            args.append("--allow-root")  # JupyterLab refuses root without it
        return args + extra

    def env(self) -> dict[str, str]:
        """The environment JupyterLab runs in: this one, and the journal to open."""
        env = {k: v for k, v in os.environ.items() if k != OPEN_ENV}
        if self.journal:
            env[OPEN_ENV] = self.journal
        return env


def _workspace(root: Path) -> str:
    """The bundled notebooks' folder below ``root`` (made on first use), by its name."""
    ws = root / WORKSPACE
    if not ws.exists():
        copy_notebooks(ws)
    return WORKSPACE


def plan_lab(target: str | None) -> LabLaunch:
    """How ``lithify lab TARGET`` starts: no target, JupyterLab on the current folder (every
    journal under it listed) landing in the bundled notebooks (made on first use); a folder,
    on that folder; a journal (PATH.db, or a PostgreSQL URL), with it open in the sidebar, on
    the current folder when the journal is under it, else on the journal's own folder."""
    here = Path.cwd()
    if target is None:
        return LabLaunch(here, land=_workspace(here))
    if is_url(target):
        return LabLaunch(here, journal=target, land=_workspace(here))
    path = Path(target)
    if path.is_dir():
        return LabLaunch(path)
    if not path.exists():
        kind = "journal" if path.suffix == ".db" else "folder or journal"
        raise NotFound(f"{target}: no such {kind}; give a folder, a journal (PATH.db) or nothing")
    if not is_journal_file(str(path)):
        raise NotAJournal(f"{target} is not a lithify journal; give a folder or a journal")
    full = path.resolve()
    root = here if here in full.parents else full.parent
    return LabLaunch(root, journal=full.relative_to(root.resolve()).as_posix())


def lab_command(directory: str | None, extra: list[str]) -> list[str]:
    """The JupyterLab command line for ``lithify lab DIRECTORY`` (see ``plan_lab``) and options
    passed through to JupyterLab."""
    return plan_lab(directory).args(extra)


@command(
    "JupyterLab",
    context_settings={
        "allow_extra_args": True,
        "ignore_unknown_options": True,
        "help_option_names": ["--help"],
    },
)
def lab(
    ctx: typer.Context,
    target: str | None = typer.Argument(
        None,
        help="A journal to open in the sidebar (PATH.db or a PostgreSQL URL), or a folder "
        f"(default: this folder, landing in ./{WORKSPACE}, made on first use).",
    ),
) -> None:
    """Start JupyterLab with the journal sidebar: on this folder (its journals listed, the
    bundled notebooks at hand), a folder, or a journal opened in the sidebar. Every other
    option goes to JupyterLab: lithify lab run.db --no-browser --port 8938."""
    tokens = ([target] if target is not None else []) + list(ctx.args)
    folder, extra = split_lab_args(tokens)
    launch = plan_lab(folder)
    os.execve(sys.executable, launch.args(extra), launch.env())


# JupyterLab options that take no value (every other option takes the next word, or =value).
LAB_FLAGS = {
    "--no-browser",
    "--allow-root",
    "--debug",
    "--dev-mode",
    "--watch",
    "--core-mode",
    "--expose-app-in-browser",
    "--collaborative",
    "-y",
    "--y",
}


def split_lab_args(tokens: list[str]) -> tuple[str | None, list[str]]:
    """(the folder, JupyterLab's options) from ``lithify lab``'s words, in any order."""
    folder: str | None = None
    extra: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith("-"):
            extra.append(tok)
            takes_value = "=" not in tok and tok not in LAB_FLAGS
            if takes_value and i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
                extra.append(tokens[i + 1])
                i += 1
        elif folder is None:
            folder = tok
        else:
            raise InvalidValue(f"lithify lab opens one folder; got {folder!r} and {tok!r}")
        i += 1
    return folder, extra
