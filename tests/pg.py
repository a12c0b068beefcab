"""A throwaway PostgreSQL server from the machine's own binaries, for the DuckLake tests.

`initdb`/`pg_ctl` refuse to run as root, so when the tests run as root the cluster belongs to
the unprivileged `postgres` user (`runuser -u postgres -- …`). The server listens on 127.0.0.1
and a free port, with its socket in a directory of the cluster, and trusts local connections
(a test database that lives for one test session).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def available() -> str | None:
    """None when a server can be started here, else the reason it cannot (for pytest.skip)."""
    for tool in ("initdb", "pg_ctl", "psql"):
        if not shutil.which(tool):
            return f"PostgreSQL binary {tool} not on PATH"
    if os.geteuid() == 0:
        if not shutil.which("runuser"):
            return "running as root without runuser"
        try:
            import pwd
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and no unprivileged `postgres` user to own the cluster"
    return None


@dataclass
class PgServer:
    root: Path
    port: int
    user: str = "postgres"

    def conninfo(self, dbname: str = "postgres") -> str:
        return f"dbname={dbname} host=127.0.0.1 port={self.port} user={self.user}"

    def _as_owner(self, argv: list[str]) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv

    def psql(self, sql: str, dbname: str = "postgres") -> str:
        out = subprocess.run(["psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1",
                              "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, "-d", dbname,
                              "-c", sql], capture_output=True, text=True, timeout=60)
        if out.returncode:
            raise RuntimeError(f"psql failed: {out.stderr.strip()}")
        return out.stdout

    def create_database(self, name: str) -> str:
        self.psql(f'CREATE DATABASE "{name}"')
        return self.conninfo(name)

    def create_role(self, role: str, password: str) -> None:
        """A login role (not a superuser) that must give its password (scram-sha-256), although the
        cluster trusts every other connection: so a test sees the password actually reach libpq."""
        self.psql(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        hba = self.root / "data" / "pg_hba.conf"
        hba.write_text(f"host all {role} 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        self.psql("SELECT pg_reload_conf()")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:       # the reload is asynchronous: until a login without
            probe = subprocess.run(["psql", "-X", "-w", "-h", "127.0.0.1", "-p", str(self.port), "-U", role,
                                    "-d", "postgres", "-c", "SELECT 1"], capture_output=True, text=True,
                                   timeout=60, env={k: v for k, v in os.environ.items() if k != "PGPASSWORD"})
            if probe.returncode:                 # a password is refused
                return
            time.sleep(0.1)
        raise RuntimeError(f"pg_hba.conf reload never asked {role} for a password")

    def grant_reader(self, role: str, dbname: str, owner: str = "postgres") -> None:
        """The least privilege docs/deploy.md tells users to grant `benchwatch query`'s role."""
        for sql in (f'GRANT CONNECT ON DATABASE "{dbname}" TO {role}',
                    f"GRANT USAGE ON SCHEMA public TO {role}",
                    f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}",
                    f"ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA public GRANT SELECT ON TABLES TO {role}"):
            self.psql(sql, dbname)

    def stop(self) -> None:
        subprocess.run(self._as_owner(["pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop"]),
                       capture_output=True, timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)


def start(timeout: float = 60.0) -> PgServer:
    """initdb + pg_ctl start on 127.0.0.1 and a free port; the caller stops it (PgServer.stop)."""
    root = Path(tempfile.mkdtemp(prefix="benchwatch-pg."))
    root.chmod(0o755)
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    server = PgServer(root=root, port=_free_port())
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sock, "postgres")
    env = dict(os.environ, LC_ALL="C", LANG="C")
    subprocess.run(server._as_owner(["initdb", "-D", str(data), "-A", "trust", "-U", "postgres",
                                     "--no-sync", "-E", "UTF8"]),
                   check=True, capture_output=True, timeout=timeout, env=env)
    opts = (f"-p {server.port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=off "
            f"-c max_connections=200 -c synchronous_commit=off")
    subprocess.run(server._as_owner(["pg_ctl", "-D", str(data), "-o", opts, "-l", str(root / "log"),
                                     "-w", "-t", str(int(timeout)), "start"]),
                   check=True, capture_output=True, timeout=timeout + 10, env=env)
    deadline = time.monotonic() + timeout
    while True:
        try:
            server.psql("SELECT 1")
            return server
        except RuntimeError:
            if time.monotonic() > deadline:
                server.stop()
                raise
            time.sleep(0.2)


def lake_unavailable() -> str | None:
    """Why a DuckLake-on-PostgreSQL test cannot run here (no binaries, no psycopg, no
    extensions), or None."""
    reason = available()
    if reason:
        return reason
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg not installed (pip install 'benchwatch[ducklake]')"
    import duckdb
    from storage import lake
    probe = duckdb.connect()
    try:
        lake.load_extensions(probe)
    except lake.LakeError as exc:
        return f"DuckLake extensions unavailable: {exc}"
    finally:
        probe.close()
    return None


def lake_server() -> Iterator[PgServer]:
    """The body of a module fixture: a server for the lake tests, or a skip with the reason."""
    import pytest
    reason = lake_unavailable()
    if reason:
        pytest.skip(reason)
    srv = start()
    yield srv
    srv.stop()
