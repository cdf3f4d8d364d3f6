"""Fixtures of the fuzz suite: one persistent worker process per session (see ``_worker.py``)
and a summary of the cases run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("hypothesis")

from tests.fuzz._worker import COUNTS, Worker  # noqa: E402


@pytest.fixture(scope="session")
def worker() -> Iterator[Worker]:
    w = Worker()
    yield w
    w.close()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if COUNTS:
        from hypothesis import settings

        total = sum(COUNTS.values())
        parts = ", ".join(f"{k} {v}" for k, v in sorted(COUNTS.items()))
        profile = settings.get_current_profile_name()
        terminalreporter.write_line(f"fuzz cases run (hypothesis profile {profile!r}): {total} "
                                    f"({parts})")
