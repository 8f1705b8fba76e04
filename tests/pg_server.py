"""A real PostgreSQL server for tests and benchmarks: Debian's binaries, a fresh cluster in a
temporary folder, on 127.0.0.1 at a free port, stopped at the end.

Debian keeps the server binaries off PATH (``/usr/lib/postgresql/<version>/bin``); they are
found there, through ``dpkg -L``, or on PATH. PostgreSQL refuses to run as root, so as root the
cluster belongs to the ``postgres`` user and every server command runs through ``runuser``.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager


def find_bin_dir() -> str | None:
    """The folder holding initdb and pg_ctl, or None when no PostgreSQL server is installed."""
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.isfile(os.path.join(d, "initdb")):
            return d
    try:
        out = subprocess.run(
            ["dpkg", "-L", "postgresql-15"], capture_output=True, text=True, check=False
        ).stdout
        for line in out.splitlines():
            if line.endswith("/bin/initdb"):
                return os.path.dirname(line)
    except OSError:
        pass
    found = shutil.which("initdb")
    return os.path.dirname(found) if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    """One PostgreSQL cluster: ``url(dbname)`` to reach it, ``stop(mode)`` and ``start()``."""

    def __init__(self, bin_dir: str) -> None:
        self.bin = bin_dir
        self.root = tempfile.mkdtemp(prefix="lithify-pg-")
        self.data = os.path.join(self.root, "data")
        self.port = _free_port()
        self.as_root = os.geteuid() == 0
        self.user = "postgres" if self.as_root else os.environ.get("USER") or "postgres"
        if self.as_root:
            os.chmod(self.root, 0o777)
            shutil.chown(self.root, "postgres")
        self._run(
            "initdb",
            "-D",
            self.data,
            "-U",
            self.user,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
        )
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(
                f"\nlisten_addresses = '127.0.0.1'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.root}'\nmax_connections = 200\n"
                "fsync = on\n"
            )
        self.start()

    def _run(self, tool: str, *args: str) -> None:
        cmd = [os.path.join(self.bin, tool), *args]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed: {done.stdout}{done.stderr}")

    def start(self) -> None:
        """Start (or restart) the server and wait until it accepts connections."""
        log = os.path.join(self.root, "server.log")
        self._run("pg_ctl", "-D", self.data, "-l", log, "-w", "-t", "60", "start")
        deadline = time.monotonic() + 120  # generous: a loaded machine
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"PostgreSQL did not accept connections on port {self.port}")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: "fast" (clean) or "immediate" (a crash: no shutdown checkpoint)."""
        self._run("pg_ctl", "-D", self.data, "-m", mode, "-w", "stop")

    def url(self, dbname: str = "postgres", journal: str | None = None) -> str:
        """A URL for one database (and journal) of this server."""
        q = f"?journal={journal}" if journal else ""
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{dbname}{q}"

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; its name."""
        import psycopg

        name = name or f"t_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(self.url(), autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}"')
        return name

    def close(self) -> None:
        """Stop the server and remove its cluster."""
        try:
            self.stop("immediate")
        except RuntimeError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def pg_server() -> Iterator[PgServer]:
    """A running PostgreSQL server for the duration of the block."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise RuntimeError("no PostgreSQL server binaries found")
    server = PgServer(bin_dir)
    try:
        yield server
    finally:
        server.close()


class PgBouncer:
    """Debian's PgBouncer in front of a ``PgServer``, on a free port of 127.0.0.1, in the given
    ``pool_mode``: ``url(dbname)`` reaches the server through it; ``close()`` stops it."""

    def __init__(self, server: PgServer, pool_mode: str = "session", pool_size: int = 20) -> None:
        self.server = server
        self.port = _free_port()
        self.root = tempfile.mkdtemp(prefix="lithify-pgbouncer-")
        ini = os.path.join(self.root, "pgbouncer.ini")
        users = os.path.join(self.root, "users.txt")
        with open(users, "w") as f:
            f.write(f'"{server.user}" ""\n')
        with open(ini, "w") as f:
            f.write(
                "[databases]\n"
                f"* = host=127.0.0.1 port={server.port}\n"
                "[pgbouncer]\n"
                f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\n"
                f"unix_socket_dir = {self.root}\n"
                "auth_type = trust\n"
                f"auth_file = {users}\n"
                f"pool_mode = {pool_mode}\n"
                f"default_pool_size = {pool_size}\nmax_client_conn = 1000\n"
                "ignore_startup_parameters = extra_float_digits,options\n"
                f"logfile = {os.path.join(self.root, 'pgbouncer.log')}\n"
                f"pidfile = {os.path.join(self.root, 'pgbouncer.pid')}\n"
            )
        cmd = [shutil.which("pgbouncer") or "/usr/sbin/pgbouncer", "-d", ini]
        if os.geteuid() == 0:  # PgBouncer refuses to run as root
            os.chmod(self.root, 0o777)
            for name in os.listdir(self.root):
                shutil.chown(os.path.join(self.root, name), "postgres")
            shutil.chown(self.root, "postgres")
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"pgbouncer failed: {done.stdout}{done.stderr}")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"PgBouncer did not listen on port {self.port}")

    def url(self, dbname: str = "postgres", journal: str | None = None) -> str:
        """A URL for one database (and journal) of the server, through PgBouncer."""
        q = f"?journal={journal}" if journal else ""
        return f"postgresql://{self.server.user}@127.0.0.1:{self.port}/{dbname}{q}"

    def close(self) -> None:
        """Stop PgBouncer and remove its folder."""
        try:
            with open(os.path.join(self.root, "pgbouncer.pid")) as f:
                os.kill(int(f.read().strip()), 15)
        except (OSError, ValueError):
            pass
        shutil.rmtree(self.root, ignore_errors=True)


def find_pgbouncer() -> str | None:
    """Debian's PgBouncer, when installed."""
    return shutil.which("pgbouncer") or (
        "/usr/sbin/pgbouncer" if os.path.isfile("/usr/sbin/pgbouncer") else None
    )
