"""Sweep progress: a live rich bar on a terminal, plain log lines otherwise."""

from __future__ import annotations

import sys
import time
from datetime import timedelta
from typing import Any, TextIO

__all__ = ["SweepProgress"]


def _hms(seconds: float) -> str:
    return str(timedelta(seconds=int(max(0.0, seconds))))


class SweepProgress:
    """Counts runs done/failed/remaining and shows them.

    On a terminal: a rich progress bar with the counts and an ETA. Otherwise (CI
    logs, ``nohup``, files): one plain line at most every ``interval`` seconds, on every
    failure, and at the end. ``enabled=False`` shows nothing.
    """

    def __init__(
        self,
        total: int,
        *,
        name: str,
        enabled: bool = True,
        stream: TextIO | None = None,
        interval: float = 10.0,
        interactive: bool | None = None,
    ):
        self.total = total
        self.done = 0
        self.failed = 0
        self.name = name
        self.enabled = enabled and total > 0
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self._t0 = time.monotonic()
        self._last_line = 0.0
        self._progress: Any = None
        self._task: Any = None
        if interactive is None:
            interactive = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interactive = interactive

    @property
    def remaining(self) -> int:
        return self.total - self.done - self.failed

    def _counts(self) -> str:
        return f"{self.done} done · {self.failed} failed · {self.remaining} remaining"

    def __enter__(self) -> SweepProgress:
        if self.enabled and self.interactive:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task(self.name, total=self.total, counts=self._counts())
        elif self.enabled:
            self._line(f"{self.total} runs to do")
        return self

    def _line(self, text: str) -> None:
        self.stream.write(f"sweep {self.name}: {text}\n")
        self.stream.flush()
        self._last_line = time.monotonic()

    def eta(self) -> float | None:
        finished = self.done + self.failed
        if finished == 0:
            return None
        return (time.monotonic() - self._t0) / finished * self.remaining

    def update(self, record: dict[str, Any]) -> None:
        if record.get("status") == "complete":
            self.done += 1
        else:
            self.failed += 1
        if not self.enabled:
            return
        if self._progress is not None:
            self._progress.update(self._task, completed=self.done + self.failed, counts=self._counts())
            if record.get("status") != "complete":
                from rich.markup import escape

                self._progress.console.print(
                    f"[red]run {record.get('run_id')} failed[/red]: "
                    + escape(f"{record.get('error_type')}: {str(record.get('error', ''))[:200]}"),
                    markup=True,
                    highlight=False,
                )
            return
        now = time.monotonic()
        if record.get("status") != "complete":
            self._line(
                f"run {record.get('run_id')} failed: {record.get('error_type')}: {str(record.get('error', ''))[:200]}"
            )
        if now - self._last_line >= self.interval or self.remaining == 0:
            eta = self.eta()
            self._line(
                f"{self.done + self.failed}/{self.total} ({self._counts()}), elapsed {_hms(now - self._t0)}"
                + (f", eta {_hms(eta)}" if eta is not None and self.remaining else "")
            )

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
