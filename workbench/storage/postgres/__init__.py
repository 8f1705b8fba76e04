"""The PostgreSQL backend: a journal in one schema of a PostgreSQL database, shared by every
process and machine that reaches the server (psycopg 3, imported when a journal is opened).

``PostgresStorage`` (``storage.py``: reads of events, effects, snapshots and observations) is
built from ``connection.py`` (connecting, settings, schema, ``atomic()``), ``writes.py``
(appends), ``catalog.py`` (branches, sweeps, runs, tags) and ``search.py`` (the server's text
search); its tables are in ``schema.py``, its faults translated in ``faults.py``, and effect
intents kept by ``intents.py`` (``PgIntents``). It shares nothing with the SQLite backend but
the modules of the seam (``base``, ``common``, ``announcements``). The package is imported only
when a URL is opened.
"""

from __future__ import annotations

from .faults import is_driver_error, translate
from .intents import PgIntents
from .schema import parse_url
from .storage import PostgresStorage

__all__ = ["PgIntents", "PostgresStorage", "is_driver_error", "parse_url", "translate"]
