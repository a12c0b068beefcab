"""`benchwatch run`'s Prefect run in its own process (`run_pipeline`), on a temporary (ephemeral)
server when no PREFECT_API_URL is set: started from the main thread, with a longer start-up
timeout, and never outliving its process. Apart from flows/pipeline.py, which a deployment's
flow-run process imports and which has no use for Prefect's server (a whole web application)."""

from __future__ import annotations

import signal
import subprocess
from typing import Any

import prefect.server.api.server as server_module

from common import settings
from flows.pipeline import CycleFailed, pipeline, server_configured
from jobs.cycle import CycleReport


# Prefect's own default (20 s) is too short on a loaded 2-core machine; a user setting wins.
EPHEMERAL_STARTUP_TIMEOUT_SECONDS = 120
_PR_SET_PDEATHSIG = 1


class OrchestrationUnavailable(Exception):
    """Prefect's temporary (ephemeral) server did not start; said in one line by the CLI."""


def _die_with_parent() -> None:  # pragma: no cover - runs in the forked child before exec
    """Ask Linux to send SIGTERM to this (server) process when the process that started it dies,
    SIGKILL included: an ephemeral server must never outlive its `benchwatch run`."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except Exception:  # noqa: BLE001 - not Linux: the atexit/SIGTERM stop still applies
        pass


def startup_timeout() -> int:
    """PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS when set, else our longer default."""
    raw = settings.read().prefect_ephemeral_startup_timeout
    try:
        return max(1, int(raw)) if raw else EPHEMERAL_STARTUP_TIMEOUT_SECONDS
    except ValueError:
        return EPHEMERAL_STARTUP_TIMEOUT_SECONDS


def start_ephemeral_server() -> None:
    """Start the temporary Prefect server of this process (no-op when PREFECT_API_URL is set).

    Prefect starts it lazily from whichever thread first needs a client, as a plain child that
    an abrupt end of `benchwatch run` orphans (a whole server process each). Started here instead, from the main
    thread, it is the instance Prefect's clients reuse (`SubprocessASGIServer()` is one per
    port, None = ephemeral), with the parent-death signal set (SIGKILL of `run` ends it), the
    longer start-up timeout, and Prefect's atexit stop for every orderly exit (SIGTERM included:
    the CLI turns it into an exception). A start-up failure becomes OrchestrationUnavailable.
    """
    if server_configured():
        return
    server = server_module.SubprocessASGIServer()
    if server.running:
        return
    real_popen = subprocess.Popen

    def popen(*args: Any, **kwargs: Any) -> subprocess.Popen:
        kwargs.setdefault("preexec_fn", _die_with_parent)
        return real_popen(*args, **kwargs)

    timeout = startup_timeout()
    setattr(server_module.subprocess, "Popen", popen)   # only while the server process is spawned
    try:
        server.start(timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - Prefect raises RuntimeError with the server's output
        server.stop()
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise OrchestrationUnavailable(
            f"Prefect's temporary server did not start within {timeout} s ({first}); raise "
            "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS, point PREFECT_API_URL at a server, "
            "or use --no-prefect") from exc
    finally:
        setattr(server_module.subprocess, "Popen", real_popen)


def run_pipeline(**parameters: Any) -> CycleReport:
    """Run `pipeline` in this process and return its report, also when the run ends Failed."""
    start_ephemeral_server()
    state = pipeline(**parameters, return_state=True)
    result = state.result(raise_on_failure=False)
    if isinstance(result, CycleFailed):        # a reported failure: the CLI prints the report
        return result.report
    if isinstance(result, BaseException):      # a crash, not a reported failure
        raise result
    assert isinstance(result, CycleReport), type(result)
    return result
