"""Charts in a notebook cell render offline: altair's default renderer loads Vega from a CDN
(offline: "Error loading script"); JupyterChart's offline mode carries the Vega bundled with
altair. Importing ``workbench.charts`` switches altair over, now if altair is loaded, else the
moment it is (a finder on ``sys.meta_path`` that costs nothing until then), so a process that
never draws never imports altair."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import threading
from types import ModuleType
from typing import Any

_done = False
_lock = threading.Lock()


def use_offline(alt: ModuleType | None = None) -> None:
    """Unless the user chose another renderer, a chart shown in a cell is drawn by altair's
    ``jupyter`` renderer in offline mode: a JupyterChart (interactive: tooltips, selections)
    carrying the Vega that vl-convert bundles, built at the first chart shown, never here."""
    global _done
    with _lock:
        if _done:
            return
        _done = True
    mod: Any = alt if alt is not None else importlib.import_module("altair")
    if mod.renderers.active == "default":  # the CDN one; a renderer the user chose stays
        mod.renderers.enable("jupyter", offline=True)


class _Loader(importlib.abc.Loader):
    """altair's own loader, then ``use_offline``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)  # type: ignore[no-any-return,unused-ignore]

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        for finder in [f for f in sys.meta_path if isinstance(f, _Watch)]:
            sys.meta_path.remove(finder)  # its work is done
        use_offline(module)


class _Watch(importlib.abc.MetaPathFinder):
    """Waits for ``import altair``: altair's spec as the other finders give it, with a loader
    that switches it to offline rendering once it has run. A library that only asks whether
    altair is there (polars does, on import) finds it unchanged; the watch stays until altair
    is imported for real."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "altair" or "altair" in sys.modules:
            return None
        for finder in list(sys.meta_path):
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


def watch() -> None:
    """Switch altair to offline rendering now, or when it is imported."""
    if "altair" in sys.modules:
        use_offline(sys.modules["altair"])
    elif not _done and not any(isinstance(f, _Watch) for f in sys.meta_path):
        sys.meta_path.insert(0, _Watch())
