"""``lithify lab`` and ``lithify notebooks``: JupyterLab on a workspace of the bundled notebooks,
the journal sidebar and offline charts ready."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import typer

from .. import bundled
from ..errors import InvalidValue, NotFound
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


def lab_command(directory: str | None, extra: list[str]) -> list[str]:
    """The JupyterLab command line for a folder (the default workspace, created on first use,
    when None) and options passed through to JupyterLab."""
    if directory is None:
        root = Path(WORKSPACE)
        if not root.exists():
            copy_notebooks(root)
    else:
        root = Path(directory)
        if not root.is_dir():
            raise NotFound(f"{root} is not a folder; create it, or run `lithify lab` alone")
    ext = PACKAGE / "labextensions"
    args = [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={root.resolve()}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        # The journal sidebar, also from an editable install
        # (a wheel installs it for any `jupyter lab`).
        f"--LabApp.extra_labextensions_path={ext}",
        "--ServerApp.jpserver_extensions=workbench.server=True",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in extra:
        args.append("--allow-root")  # JupyterLab refuses root without it
    return args + extra


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
    directory: str | None = typer.Argument(
        None, help=f"Folder to open (default: ./{WORKSPACE}, made on first use)."
    ),
) -> None:
    """Start JupyterLab on DIRECTORY (default: a workspace of the bundled notebooks) with the
    journal sidebar. Every other option goes to JupyterLab: lithify lab --no-browser --port 8938."""
    tokens = ([directory] if directory is not None else []) + list(ctx.args)
    folder, extra = split_lab_args(tokens)
    os.execv(sys.executable, lab_command(folder, extra))


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
