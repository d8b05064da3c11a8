"""The embedded server stays up between commands (issue 22): a command leaves it to a lingering process
(:mod:`sage.db.linger`) that holds it for ``SAGE_EMBEDDED_LINGER_S`` after the last command, then lets it go.

Runs real commands on the session database (whose server this pytest process holds, so it is never stopped here).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from sage import db
from sage.db.embedded import LINGER_PID, _pid_state

ROOT = Path(__file__).resolve().parent.parent


def _command(settings, linger_s: float) -> None:
    env = {**os.environ, "SAGE_DATA_DIR": str(settings.data_dir), "SAGE_EMBEDDED_LINGER_S": str(linger_s)}
    env.pop("DATABASE_URL", None)
    proc = subprocess.run([sys.executable, "-m", "sage", "status", "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def _linger_pid(pidfile: Path, wait_s: float = 30.0) -> int:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            pid = int(pidfile.read_text().strip() or 0)
            if pid and _pid_state(pid) == "running":
                return pid
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    raise AssertionError("no lingering process")


def test_a_command_leaves_the_server_to_one_lingering_process_that_leaves_when_idle(settings):
    pidfile = Path(settings.data_dir).resolve() / LINGER_PID
    _command(settings, 15)
    pid = _linger_pid(pidfile)
    first_touch = pidfile.stat().st_mtime
    _command(settings, 15)  # the next command finds it and gives it more time: still one process
    assert _linger_pid(pidfile) == pid
    assert pidfile.stat().st_mtime >= first_touch
    deadline = time.monotonic() + 60
    while _pid_state(pid) == "running" and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _pid_state(pid) != "running" and not pidfile.exists()
    # another process (this one) still holds the server: it was not stopped
    assert db.run(settings, db.OWNER, lambda c: c.execute("SELECT 1").fetchone()[0]) == 1


def test_no_lingering_with_zero(settings):
    pidfile = Path(settings.data_dir).resolve() / LINGER_PID
    _command(settings, 0)
    time.sleep(1)
    assert not pidfile.exists()
