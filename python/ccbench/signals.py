"""SIGTERM handled as Ctrl-C is, and sweep workers that do not outlive their sweep.

A command-line run or sweep stopped with SIGTERM (``kill PID``, a job scheduler's time
limit, ``timeout``) cleans up exactly as on Ctrl-C: the ``finally`` blocks run, so a
sweep kills the runs its workers hold and keeps every complete run, and ``ccbench run
--save-partial`` keeps the part simulated. Python's default for SIGTERM ends the process
at once, without them.

Sweep workers are forked from multiprocessing's fork server, not from the sweep, and
the fork server outlives a sweep killed outright (SIGKILL, or any signal it does not
handle: each worker holds the pipe whose end would tell it), so a worker would simulate
its run to the end with nobody to take the result. Each worker instead watches the
sweep's process (a pidfd) and exits the moment it is gone; the sweep's next start
removes what the run had begun to write, as after any kill.
"""

from __future__ import annotations

import os
import select
import signal
import threading
from typing import Any

__all__ = ["exit_status", "exit_with", "sigterm_as_interrupt"]

#: The signal that ended the command (SIGINT unless SIGTERM arrived), for its exit status.
_received = signal.SIGINT


def _raise_interrupt(signum: int, frame: Any) -> None:
    global _received
    _received = signal.Signals(signum)
    raise KeyboardInterrupt(f"signal {signum}")


def sigterm_as_interrupt() -> None:
    """From now on SIGTERM raises ``KeyboardInterrupt`` as Ctrl-C does (main thread only:
    Python runs signal handlers there)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_interrupt)


def exit_status() -> int:
    """The shell's status for a command ended by the signal received: 128 + its number
    (130 for Ctrl-C, 143 for SIGTERM)."""
    return 128 + int(_received)


def exit_with(pid: int) -> None:
    """End this process as soon as process ``pid`` exits (at once if it already has):
    a daemon thread waits on its pidfd. Without pidfds (not Linux 5.3+) it does nothing,
    and a worker ends when it next talks to its gone sweep."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):  # pragma: no cover - no pidfd_open here
        return

    def wait_then_exit() -> None:
        select.select([fd], [], [])
        os._exit(1)

    threading.Thread(target=wait_then_exit, name="ccbench-exit-with-sweep", daemon=True).start()
