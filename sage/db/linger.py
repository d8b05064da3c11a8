"""``python -m sage.db.linger DATA_DIR SECONDS``: keep the embedded server of ``DATA_DIR`` running until no command
has used it for ``SECONDS``, then let it stop (:func:`sage.db.embedded.keep_running_after_exit` starts it).

It joins the server like any process (pgserver counts it as a handle), writes its pid to
``DATA_DIR/sage-linger.pid`` and waits until that file's modification time (each command that exits touches it) is
``SECONDS`` old.  Then it exits, and pgserver stops the server if no other process (the app) holds it.  One per data
directory: a second one finds the first alive and leaves at once.  When the data directory is gone it leaves too.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from .embedded import LINGER_PID, _pid_state, _start_embedded

#: how often the pid file is looked at
POLL_S = 2.0


def _claim(pidfile: Path) -> bool:
    """Write this process's pid to ``pidfile`` unless a live process has it already."""
    try:
        other = int(pidfile.read_text().strip() or 0)
    except (OSError, ValueError):
        other = 0
    if other and other != os.getpid() and _pid_state(other) == "running":
        return False
    tmp = pidfile.with_name(f"{pidfile.name}.{os.getpid()}")
    tmp.write_text(str(os.getpid()))
    os.replace(tmp, pidfile)  # whole or not at all
    return True


def main(argv: list[str]) -> int:
    data_dir, seconds = Path(argv[0]), float(argv[1])
    pidfile = data_dir / LINGER_PID
    if not _claim(pidfile):
        return 0
    try:
        _start_embedded(data_dir)  # a handle: the server stays up while this process runs
        while True:
            try:
                if int(pidfile.read_text().strip() or 0) != os.getpid():
                    return 0  # another one took over
                left = pidfile.stat().st_mtime + seconds - time.time()
            except (OSError, ValueError):
                return 0  # the data directory is gone
            if left <= 0:
                return 0
            time.sleep(min(left, POLL_S))
    finally:
        try:
            if int(pidfile.read_text().strip() or 0) == os.getpid():
                pidfile.unlink()
        except (OSError, ValueError):
            pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
