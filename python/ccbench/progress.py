"""Showing a run's progress: a live bar on an interactive terminal, a plain line every
so often in a log, nothing when quiet.

The engine calls a :class:`ProgressDisplay` (via ``ccbench.run(progress=...)``) about
ten times a second of wall time with the simulated time reached and the events
processed. Nothing is shown for the first second, so short runs stay silent.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Literal, TextIO

from .preflight import human_seconds

__all__ = ["ProgressDisplay", "choose_mode"]

Mode = Literal["bar", "lines", "off"]


def choose_mode(quiet: bool, stream: TextIO | None = None) -> Mode:
    """``off`` when quiet, a ``bar`` on a terminal, plain ``lines`` otherwise."""
    if quiet:
        return "off"
    stream = stream if stream is not None else sys.stderr
    return "bar" if getattr(stream, "isatty", lambda: False)() else "lines"


class ProgressDisplay:
    """A progress callback ``(done_s, total_s, events=None) -> None`` that draws
    (``ccbench.run(progress=...)``; the engine passes its event count)."""

    def __init__(
        self,
        mode: Mode,
        *,
        label: str = "",
        stream: TextIO | None = None,
        show_after_s: float = 1.0,
        line_every_s: float = 10.0,
        clock: Any = time.monotonic,
    ):
        self.mode = mode
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.show_after_s = show_after_s
        self.line_every_s = line_every_s
        self.clock = clock
        self.t0 = clock()
        self.last_line = self.t0
        self.lines_written = 0
        self._bar: Any = None
        self._task: Any = None

    def stats(self, done_s: float, total_s: float, events: int | None) -> dict[str, float]:
        """Fraction done, simulated/real speed, ETA (s) and events per second."""
        elapsed = max(self.clock() - self.t0, 1e-9)
        frac = done_s / total_s if total_s else 1.0
        speed = done_s / elapsed
        eta = (total_s - done_s) / speed if speed > 0 else float("inf")
        rate = (events or 0) / elapsed
        return {"fraction": frac, "speed": speed, "eta_s": eta, "events_per_s": rate, "elapsed": elapsed}

    def __call__(self, done_s: float, total_s: float, events: int | None = None) -> None:
        if self.mode == "off":
            return
        now = self.clock()
        if now - self.t0 < self.show_after_s:
            return
        s = self.stats(done_s, total_s, events)
        text = f"{done_s:,.1f}/{total_s:,.1f} s simulated, {s['speed']:.3g}x real time, "
        if events is not None:
            text += f"{s['events_per_s'] / 1e6:.2f}M events/s, "
        text += f"ETA {human_seconds(s['eta_s'])}"
        if self.mode == "lines":
            if self.lines_written == 0 or now - self.last_line >= self.line_every_s:
                self.stream.write(f"progress{f' {self.label}' if self.label else ''}: {s['fraction']:.1%} ({text})\n")
                self.stream.flush()
                self.last_line = now
                self.lines_written += 1
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn

            self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                TextColumn("{task.fields[detail]}"),
                console=Console(file=self.stream, highlight=False),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.label or "simulating", total=total_s, detail="")
        self._bar.update(self._task, completed=done_s, detail=text)

    def close(self) -> None:
        """Remove the bar (a finished or interrupted run prints its own summary)."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
