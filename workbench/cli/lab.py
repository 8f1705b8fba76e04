"""``lithify lab``: JupyterLab on the notebooks, the journal sidebar and offline charts ready."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from ..errors import NotFound
from .app import app

PACKAGE = Path(__file__).resolve().parents[1]  # workbench/


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def lab(
    ctx: typer.Context,
    directory: Path = typer.Argument(
        None, help="Folder to open (default: the bundled notebooks/)."
    ),
    port: int = typer.Option(None, "--port", help="Port to listen on."),
    no_browser: bool = typer.Option(False, "--no-browser", help="Do not open a browser."),
) -> None:
    """Start JupyterLab on the notebooks (or DIRECTORY), widgets and offline charts ready.

    Extra options are passed to JupyterLab (e.g. --ServerApp.token=...)."""
    root = directory or _bundled_notebooks()
    if not root.is_dir():
        raise NotFound(f"{root} is not a folder")
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
    if port is not None:
        args.append(f"--port={port}")
    if no_browser:
        args.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--allow-root")  # JupyterLab refuses root without it
    args += list(ctx.args)
    os.execv(sys.executable, args)


def _bundled_notebooks() -> Path:
    here = PACKAGE.parent / "notebooks"
    return here if here.is_dir() else Path.cwd()
