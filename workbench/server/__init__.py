"""The jupyter_server extension behind the JupyterLab sidebar: a REST API under
``/lithify/api/`` over the journals found below the server root (paths relative to it; anything
outside it, or not a journal, gets a 4xx with a message, never a traceback). The routes are
``handlers.ROUTES``; the JSON shapes ``shapes``; the open journals and the threads the library
runs on, ``hub``. Importing this package imports no Jupyter code; loading the extension does.
"""

from __future__ import annotations

from typing import Any

from .. import __version__ as __version__  # `jupyter server extension list` shows it


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "workbench.server"}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "../labextensions/lithify-workbench", "dest": "lithify-workbench"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Register the handlers with the running Jupyter server."""
    from jupyter_server.utils import url_path_join

    from .handlers import make_handlers
    from .hub import Hub

    hub = Hub(serverapp.root_dir)
    hub.warm()
    base = serverapp.web_app.settings["base_url"]
    handlers = [(url_path_join(base, pattern), cls, kw) for pattern, cls, kw in make_handlers(hub)]
    serverapp.web_app.add_handlers(".*$", handlers)
    serverapp.web_app.settings["lithify_hub"] = hub
    serverapp.log.info("lithify: journals under %s at %slithify/api/", hub.root, base)


def _unload_jupyter_server_extension(serverapp: Any) -> None:
    """On the server's shutdown: stop the sweeps it started, close its journals."""
    hub = serverapp.web_app.settings.get("lithify_hub")
    if hub is not None:
        hub.close()


load_jupyter_server_extension = _load_jupyter_server_extension
