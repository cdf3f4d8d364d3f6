"""``python -m bench.race``: sqnopt against its peers on every data set, with plots, a Markdown
table and a compact record (see :mod:`bench.race.cli`). The pure logic (time to target, best of
repeats, the record's size, the table) lives in :mod:`bench.race.core` and
:mod:`bench.race.report`, tested by ``tests/bench/test_race.py``."""
