"""What a fit shows while it runs: the progress bar and the user's callbacks.

Every sub-problem's solver reports to one callback of the Trainer, which forwards each report
(:class:`~sqnopt.solver.IterationInfo`) to the bar of the current call and then to the user's
callbacks; any callback returning ``True`` stops the run. A bar passed in by the caller stays
open (the caller closes it, e.g. after a stream of ``partial_fit`` calls); a bar made here for
``verbose`` is closed at the end of the call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Union

from sqnopt.progress import ProgressBar
from sqnopt.solver import IterationInfo

Callback = Callable[[IterationInfo], Union[bool, None]]

__all__ = ["Callback", "open_bar", "report"]


def open_bar(progress: ProgressBar | None, total: int | None,
             verbose: int) -> tuple[ProgressBar | None, bool]:
    """The bar of one call and whether the call owns it (and closes it): the caller's
    ``progress`` (its total set if it has none), else a new bar when ``verbose >= 1``."""
    if progress is not None:
        if progress.total is None and total is not None:
            progress.total = max(total, 1)
        return progress, False
    if verbose and int(verbose) >= 1:
        return ProgressBar(total=total), True
    return None, True


def report(bar: ProgressBar | None, callback: Callback | Sequence[Callback] | None,
           info: IterationInfo) -> bool | None:
    """Show ``info`` on ``bar`` and pass it to every callback; ``True`` when one asks to stop
    (all of them are called)."""
    if bar is not None:
        bar(info)
    if callback is None:
        return None
    stop = False
    for f in (callback if isinstance(callback, Sequence) else (callback,)):
        stop = bool(f(info)) or stop
    return stop
