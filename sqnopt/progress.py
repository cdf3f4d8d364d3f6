"""Progress of long solves, drawn by tqdm, fed as a :class:`~sqnopt.Solver` callback.

Callbacks run at the solver's report points (every ``report_every`` iterations), so showing
progress costs nothing inside the compiled loop. :class:`ProgressBar` turns the solver's
counters into a tqdm bar: samples processed (the solver's unit of work ``Lt``), the rate, the
ETA when the total is known, and the current objective::

    bar = ProgressBar(total=10 * len(y))
    Solver(..., callback=bar, max_epochs=10).fit(X, y)
    bar.close()

``F`` is the last full objective the solver computed; between two of those the bar shows
``F~``, a running average of the minibatch objectives.

Where it draws (``enabled=None``):

* a terminal: a live bar (``tqdm.auto``), redrawn at most every 0.1 s, once the run has lasted
  ``delay`` seconds (short runs stay quiet);
* a Jupyter notebook: tqdm's notebook widget (with ipywidgets; else the text bar);
* anything else (a log file, CI): one plain line every ``log_interval`` seconds, no carriage
  returns, so logs stay readable.

``enabled=False`` draws nothing (``sqnopt train --progress never``, ``verbose=0``).
"""

from __future__ import annotations

import io
import math
import os
import sys
from typing import IO, Any

from sqnopt.solver import IterationInfo

__all__ = ["ProgressBar"]


def _in_notebook() -> bool:
    """True inside a Jupyter kernel (where stderr is not a terminal but output is shown)."""
    return "ipykernel" in sys.modules


def _is_terminal(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"
    except ValueError:  # a closed stream
        return False


def _terminal_size(stream: Any) -> os.terminal_size | None:
    """The size the terminal behind ``stream`` reports (0 lines when unknown, as a pty that
    was never sized reports); None when ``stream`` is no terminal."""
    try:
        return os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None


class _Sink:
    """The stream tqdm writes to: records that something was drawn and, in log mode, turns each
    carriage-return redraw into one line of its own."""

    def __init__(self, stream: IO[str], lines: bool) -> None:
        self.stream = stream
        self.lines = lines
        self.drawn = False

    def write(self, text: str) -> int:
        if self.lines:
            text = text.replace("\r", "").rstrip()
            if not text:
                return 0
            text += "\n"
        if text.strip():
            self.drawn = True
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:  # fileno, isatty, encoding for tqdm's checks
        return getattr(self.stream, name)


class ProgressBar:
    """Progress of a solve or a training job; a callable Solver callback.

    Parameters
    ----------
    total
        Samples the whole job will process (for the percentage and the ETA); ``None`` if
        unknown (a run that ends at a tolerance): the bar then shows the count and the rate.
    stream
        Where to draw (default ``sys.stderr``).
    enabled
        ``None``: draw on a terminal, in a notebook, and as plain lines elsewhere (see the
        module docstring); ``True``: draw as on a terminal whatever the stream is;
        ``False``: draw nothing.
    delay
        Seconds before the first drawing on a terminal (short runs stay quiet).
    log_interval
        Seconds between two lines when the stream is not a terminal.
    label
        Text before the bar.
    show_final
        On a terminal or in a notebook, draw the final state on :meth:`close` even when the
        run was too short to be drawn (a log gets its periodic lines only).
    unit
        What is counted (``" samples"``: samples processed; a streaming job counts
        ``" rows"`` read).

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
                 enabled: bool | None = None, delay: float = 1.0, log_interval: float = 30.0,
                 label: str = "", show_final: bool = False, unit: str = " samples") -> None:
        self.stream: IO[str] = stream if stream is not None else sys.stderr
        if enabled is None:
            mode = ("terminal" if _is_terminal(self.stream) else
                    "notebook" if _in_notebook() else "log")
        else:
            mode = "terminal" if enabled else "off"
        self.mode = mode
        self.enabled = mode != "off"
        self.show_final = bool(show_final) and mode != "log"
        self.offset = 0
        self.base = 0
        self.samples = 0
        self.objective: float | None = None
        self.approx_objective: float | None = None
        self._closed = False
        self._sink = _Sink(self.stream, lines=mode == "log")
        self._bar: Any = None
        if self.enabled:
            if mode == "notebook":
                from tqdm.auto import tqdm
            else:
                from tqdm import tqdm
            kwargs: dict[str, Any] = {}
            if mode != "notebook":
                kwargs["file"] = self._sink
            if mode == "log":
                kwargs.update(mininterval=float(log_interval), ncols=100)
            elif mode == "terminal":
                kwargs["dynamic_ncols"] = True
                size = _terminal_size(self.stream)
                if size is not None and size.lines < 2:
                    # a terminal that reports no height (a pty nobody sized: CI runners, some
                    # editors' shells) makes tqdm hide every bar at position 0: fix the size,
                    # with tqdm's own fallback height
                    kwargs.update(dynamic_ncols=False, ncols=size.columns or None, nrows=20)
            self._bar = tqdm(total=None if total is None else max(int(total), 1),
                             desc=label or None, unit=unit, unit_scale=True,
                             delay=float(delay), mininterval=kwargs.pop("mininterval", 0.1),
                             leave=True, **kwargs)

    # ------------------------------------------------------------------ total
    @property
    def total(self) -> int | None:
        """Samples the job will process (``None``: unknown); may be set during the run."""
        if self._bar is None:
            return self._total_off if hasattr(self, "_total_off") else None
        t = self._bar.total
        return None if t is None else int(t)

    @total.setter
    def total(self, value: int | None) -> None:
        value = None if value is None else max(int(value), 1)
        if self._bar is None:
            self._total_off = value
        else:
            self._bar.total = value

    @property
    def drawn(self) -> bool:
        """Whether anything has been drawn yet."""
        return self._sink.drawn or (self.mode == "notebook" and self._bar is not None
                                    and bool(getattr(self._bar, "displayed", False)))

    # ------------------------------------------------------------------ feeding it
    def __call__(self, info: IterationInfo) -> None:
        """Solver callback: shows the samples processed and the objective; never stops the run
        (returns ``None``)."""
        self.observe(info)
        self.update(self.base + self.offset + info.n_samples)

    def observe(self, info: IterationInfo) -> None:
        """Solver callback that only records the objective (for a bar that counts something
        else, e.g. rows read); returns ``None``."""
        if info.objective is not None and math.isfinite(info.objective):
            self.objective = float(info.objective)
        mb = info.minibatch_objective
        if math.isfinite(mb):
            a = self.approx_objective
            self.approx_objective = mb if a is None else 0.9 * a + 0.1 * mb

    def set_objective(self, value: float) -> None:
        """Report a full objective computed outside the solver's report points."""
        if math.isfinite(value):
            self.objective = float(value)

    def update(self, samples: int, *, force: bool = False) -> None:
        """Show ``samples`` processed so far (``force``: redraw now)."""
        self.samples = int(samples)
        bar = self._bar
        if bar is None or self._closed:
            return
        postfix = self._postfix()
        if postfix:
            bar.set_postfix_str(postfix, refresh=False)
        bar.update(self.samples - bar.n)
        if force:
            bar.refresh()

    def _postfix(self) -> str:
        if self.objective is not None:
            return f"F={self.objective:.5g}"
        if self.approx_objective is not None:
            return f"F~{self.approx_objective:.4g}"
        return ""

    def close(self) -> None:
        """Draw the final state (if the bar was shown, or ``show_final``) and end the line."""
        if self._closed:
            return
        self._closed = True
        bar = self._bar
        if bar is None:
            return
        postfix = self._postfix()
        if postfix:
            bar.set_postfix_str(postfix, refresh=False)
        if self.drawn or self.show_final:
            bar.delay = 0  # tqdm's close draws the final state only after its delay
        bar.close()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
