"""Fixtures of the parallel-pass tests: a block policy that splits small test problems into many
blocks (the defaults keep them on one), restored afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sqnopt import _parallel

@pytest.fixture
def small_blocks() -> Iterator[None]:
    """Blocks of a few rows for every pass (a pass of 600 rows gets dozens of blocks), partial
    vectors allowed however short the pass: the block machinery at test sizes."""
    old = _parallel._set_block_policy(min_block_work=64, reduce_ratio=1e-3, max_blocks=48)
    try:
        yield
    finally:
        _parallel._set_block_policy(**old)
