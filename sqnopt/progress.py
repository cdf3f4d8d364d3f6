"""A dependency-free progress bar, used as a :class:`~sqnopt.Solver` callback.

Callbacks run at the solver's report points (every ``report_every`` iterations), so the bar
costs nothing inside the compiled loop. It draws only on a terminal, only once the run has lasted
``delay`` seconds (short runs stay quiet), and at most every ``min_interval`` seconds::

    bar = ProgressBar(total=10 * len(y))
    Solver(..., callback=bar, max_epochs=10).fit(X, y)
    bar.close()

The line shows samples processed, the current objective (the full objective when the solver has
just computed it, otherwise ``F~``: a running average of the minibatch objectives) and the ETA.
"""

from __future__ import annotations

import math
import os
import sys
import time
from typing import IO, Any

from sqnopt.solver import IterationInfo

__all__ = ["ProgressBar", "format_count", "format_seconds"]


def format_count(n: float) -> str:
    """``1234567 -> '1.23M'``."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= div:
            return f"{n / div:.3g}{suffix}"
    return f"{int(n)}"


def format_seconds(s: float) -> str:
    if not math.isfinite(s):
        return "?"
    if s < 60:
        return f"{s:.1f}s"
    m, sec = divmod(int(round(s)), 60)
    if m < 60:
        return f"{m}:{sec:02d}"
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{sec:02d}"


class ProgressBar:
    """One-line progress bar for long solves; a callable Solver callback.

    Parameters
    ----------
    total
        Samples the whole job will process (for the percentage and ETA); ``None`` if unknown.
    stream
        Where to draw (default ``sys.stderr``).
    enabled
        ``None``: draw only when ``stream`` is a terminal (and ``TERM`` is not ``dumb``);
        ``True`` / ``False`` force it.
    delay
        Seconds a run must last before the bar first appears.
    min_interval
        Minimum seconds between redraws.
    label
        Text in front of the bar.
    show_final
        On :meth:`close`, draw the final state even if the run was too short to show the bar
        (used by the command line, so every run ends with one summary line on a terminal).

    Attributes
    ----------
    offset : int
        Samples processed by earlier solves of the same job (a job of several solves, e.g. one
        per class, sets it before each solve so the bar keeps counting).
    base : int
        Samples processed before the current job (a caller streaming many ``partial_fit`` calls
        through one bar sets it before each call); the bar shows ``base + offset + n_samples``.
    """

    def __init__(self, total: int | None = None, *, stream: IO[str] | None = None,
                 enabled: bool | None = None, delay: float = 1.0, min_interval: float = 0.1,
                 label: str = "", width: int = 24, show_final: bool = False) -> None:
        self.total = None if total is None else max(int(total), 1)
        self.stream: IO[str] = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"
        self.enabled = bool(enabled)
        self.delay = float(delay)
        self.min_interval = float(min_interval)
        self.label = label
        self.width = int(width)
        self.show_final = bool(show_final)
        self.offset = 0
        self.base = 0
        self.samples = 0
        self.objective: float | None = None
        self.approx_objective: float | None = None
        self.drawn = False
        self._start = time.monotonic()
        self._last_draw = -math.inf
        self._last_len = 0
        self._closed = False

    # ------------------------------------------------------------------ feeding it
    def __call__(self, info: IterationInfo) -> None:
        """Solver callback: never stops the run (returns ``None``)."""
        if info.objective is not None and math.isfinite(info.objective):
            self.objective = float(info.objective)
        mb = info.minibatch_objective
        if math.isfinite(mb):
            a = self.approx_objective
            self.approx_objective = mb if a is None else 0.9 * a + 0.1 * mb
        self.update(self.base + self.offset + info.n_samples)

    def set_objective(self, value: float) -> None:
        """Report a full objective computed outside the solver's report points."""
        if math.isfinite(value):
            self.objective = float(value)

    def update(self, samples: int, *, force: bool = False) -> None:
        self.samples = int(samples)
        if not self.enabled or self._closed:
            return
        now = time.monotonic()
        if not force and (now - self._start < self.delay
                          or now - self._last_draw < self.min_interval):
            return
        self._last_draw = now
        self._draw(now)

    def close(self) -> None:
        """Draw the final state (if the bar was shown) and end the line."""
        if self._closed:
            return
        if self.enabled and (self.drawn or self.show_final):
            self._draw(time.monotonic(), final=True)
            self.stream.write("\n")
            self.stream.flush()
        self._closed = True

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ drawing
    def render(self, elapsed: float, *, final: bool = False) -> str:
        """The text of the bar after ``elapsed`` seconds (``final``: no ETA)."""
        parts = [self.label] if self.label else []
        done = self.samples
        if self.total is not None:
            frac = min(done / self.total, 1.0)
            fill = int(round(frac * self.width))
            parts.append(f"[{'#' * fill}{'.' * (self.width - fill)}] {100 * frac:3.0f}%")
            parts.append(f"{format_count(done)}/{format_count(self.total)} samples")
        else:
            parts.append(f"{format_count(done)} samples")
        if self.objective is not None:
            parts.append(f"F={self.objective:.4g}")
        elif self.approx_objective is not None:
            parts.append(f"F~{self.approx_objective:.4g}")
        parts.append(format_seconds(elapsed))
        if not final and self.total is not None and 0 < done < self.total:
            parts.append(f"ETA {format_seconds(elapsed * (self.total - done) / done)}")
        return "  ".join(parts)

    def _draw(self, now: float, *, final: bool = False) -> None:
        line = self.render(now - self._start, final=final)
        pad = max(self._last_len - len(line), 0)
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()
        self._last_len = len(line)
        self.drawn = True
