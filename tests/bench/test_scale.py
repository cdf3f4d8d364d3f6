"""The scale benchmark (bench/scale): its pure logic (summaries, examples to a held-out target,
the samples-to-target ratios, downsampling, the compact record), the data cache (fingerprints,
reuse, regeneration, the Parquet form), and the quick mode's machinery end to end on a few
thousand generated rows: contenders in their own processes, points, memory, the kill at the
hard cap, the report and the figure."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scale import contenders as C
from scale import core, report
from scale.data import GENERATOR, DataSpec, fingerprint, prepare, summary
from scale.runner import Settings, run_contender


# ---------------------------------------------------------------------------- pure logic
def _curve(losses: list[float], per_point: float = 1000.0) -> dict[str, list[float]]:
    n = len(losses)
    return {"time": [0.1 * (k + 1) for k in range(n)],
            "examples": [per_point * (k + 1) for k in range(n)], "loss": list(losses),
            "accuracy": [0.8] * n, "auc": [0.7] * n}


def test_summary_is_the_last_point_and_its_throughput() -> None:
    s = core.summarize(_curve([0.6, 0.5, 0.55]))
    assert s["final"]["loss"] == 0.55 and s["best_loss"] == 0.5
    assert s["examples_per_second"] == pytest.approx(3000 / 0.3)
    assert core.summarize({"time": []})["final"] is None


def test_targets_are_read_along_the_run_with_interpolation() -> None:
    # best 0.5; 1 % target 0.505: crossed between points 2 (0.51) and 3 (0.501)
    c = _curve([0.7, 0.51, 0.501, 0.5])
    t = core.targets_of(c, 0.5)
    ex = t["0.01"]["examples"]
    assert 2000 < ex < 3000
    # log examples linear in the loss between the two points: 0.505 is 5/9 of 0.51 -> 0.501
    assert ex == pytest.approx(math.exp(math.log(2000) + 5 / 9 * math.log(1.5)))
    assert t["0.005"]["examples"] == pytest.approx(
        math.exp(math.log(2000) + 7.5 / 9 * math.log(1.5)))
    assert t["0.01"]["time"] == pytest.approx(math.exp(math.log(0.2) + 5 / 9 * math.log(1.5)))
    # a diverged point before the crossing: the crossing point; reached at the start
    assert core.first_below([1, 2], [math.inf, 0.4], 0.5) == 2.0
    assert core.first_below([1, 2], [0.4, 0.3], 0.5) == 1.0
    assert core.first_below([], [], 0.5) is None
    assert core.targets_of(_curve([0.7, 0.6]), 0.5)["0.01"] == {"examples": None, "time": None}
    with pytest.raises(ValueError):
        core.targets_of(c, 0.0)


def test_finish_size_uses_the_lowest_loss_of_all_contenders() -> None:
    cs: dict[str, Any] = {"a": {"curve": _curve([0.6, 0.52])},
                          "b": {"curve": _curve([0.55, 0.50], 10.0)}, "c": {"status": "failed"}}
    out = core.finish_size(cs, {})
    assert out["best_loss"] == 0.5 and out["ratios"] == []
    assert cs["b"]["to_target"]["0.01"]["examples"] is not None
    assert cs["a"]["to_target"]["0.01"]["examples"] is None
    assert "to_target" not in cs["c"]


def test_ratio_rows_against_the_best_peer_and_bounds() -> None:
    cs: dict[str, Any] = {
        "sqn": {"curve": _curve([0.6, 0.5], 100.0)},                 # reaches at 200
        "sgd-slow": {"curve": _curve([0.9, 0.8, 0.7, 0.6, 0.5], 1e4)},  # reaches at 5e4
        "sgd-never": {"curve": _curve([0.9, 0.8], 1e5)},
        "vw-never": {"curve": _curve([0.9, 0.7], 1e3)},
    }
    table = {"sqn": {"role": "sqn"}, "sgd-slow": {"role": "sgd"},
             "sgd-never": {"role": "sgd"}, "vw-never": {"role": "vw"}}
    rows = core.finish_size(cs, table)["ratios"]
    assert [r["target"] for r in rows] == ["best + 1.0%", "best + 0.5%", "own best + 1%"]
    row = rows[0]
    # 0.505 is 95 % of the way from 0.6 to 0.5 (log examples: 100 -> 200)
    assert row["name"] == "sqn" and row["level"] == pytest.approx(0.505)
    assert row["examples"] == pytest.approx(100 * 2 ** 0.95)
    ours = row["examples"]
    assert row["sgd"]["peer"] == "sgd-slow" and not row["sgd"]["bound"]
    assert row["sgd"]["ratio"] == pytest.approx(ours / (4e4 * 1.25 ** 0.95))
    # VW never reached it: a bound from all it processed (2000 examples)
    assert row["vw"]["bound"] and row["vw"]["ratio"] == pytest.approx(ours / 2000.0)
    cell = report._ratio(row["vw"])
    assert cell.startswith("**≤ 0.0966**") and "not reached" in cell
    # a quasi-Newton contender that does not reach the run's best: no ratio there, but one at
    # its own level
    cs["sqn"] = {"curve": _curve([0.9, 0.8, 0.7], 100.0)}
    rows = core.finish_size(cs, table)["ratios"]
    assert rows[0]["examples"] is None and rows[0]["sgd"] is None
    own = rows[2]
    assert own["level"] == pytest.approx(0.707)
    assert own["examples"] == pytest.approx(100 * 1.5 ** (0.093 / 0.1) * 2)
    assert own["sgd"]["peer"] == "sgd-slow" and not own["sgd"]["bound"]


def test_downsampling_keeps_ends_best_and_crossings() -> None:
    rng = np.random.default_rng(0)
    n = 500
    loss = list(0.5 + np.exp(-np.linspace(0, 8, n)) + rng.uniform(0, 1e-3, n))
    c = _curve(loss)
    best = min(loss)
    idx = core.downsample(c, 20, best=best)
    assert idx[0] == 0 and idx[-1] == n - 1 and len(idx) <= 20
    assert int(np.argmin(loss)) in idx
    for rel in core.TARGETS:
        first = next(k for k, x in enumerate(loss) if x <= best * (1 + rel))
        assert first in idx and first - 1 in idx
    assert core.downsample(_curve([0.5, 0.4]), 20) == [0, 1]


def _big_record(n_sizes: int, n_contenders: int, n_points: int) -> dict[str, Any]:
    rng = np.random.default_rng(1)
    sizes = []
    for i in range(n_sizes):
        cs: dict[str, Any] = {}
        for j in range(n_contenders):
            loss = list(0.4 + np.exp(-np.linspace(0, 6, n_points)) * rng.uniform(0.5, 2))
            cs[f"contender {j}"] = {"curve": _curve(loss, 1234.5678), "status": "done",
                                    "peak_rss": 123456789, "info": {"read_seconds": 1.234567}}
        entry = {"name": f"s{i}", "alpha": 1e-6, "data": {"bayes_log_loss_test": 0.3312345678},
                 "contenders": cs}
        entry.update(core.finish_size(cs, {}))
        sizes.append(entry)
    return {"schema": 1, "config": {"targets": list(core.TARGETS)}, "sizes": sizes,
            "contender_table": {}}


def test_the_record_stays_below_100_kB() -> None:
    rec = _big_record(3, 14, 700)
    assert len(json.dumps(rec).encode()) > 10 * core.RECORD_LIMIT
    text, points = core.compact_record(rec)
    assert len(text.encode()) < core.RECORD_LIMIT and points >= 12
    back = json.loads(text)
    c0 = back["sizes"][0]["contenders"]["contender 0"]
    assert len(c0["curve"]["loss"]) <= points
    assert back["sizes"][0]["data"]["bayes_log_loss_test"] == pytest.approx(0.331235, abs=1e-6)
    orig = rec["sizes"][0]["contenders"]["contender 0"]
    assert c0["curve"]["loss"][-1] == pytest.approx(orig["curve"]["loss"][-1], rel=1e-5)
    assert c0["to_target"]["0.01"]["examples"] == pytest.approx(
        orig["to_target"]["0.01"]["examples"], rel=1e-3)
    assert core.compact_record(_big_record(1, 2, 10))[1] == 64
    with pytest.raises(ValueError, match="does not fit"):
        core.compact_record(rec, limit=1000)


def test_formatting() -> None:
    assert core.fmt_count(1.2345e6) == "1.23e6" and core.fmt_count(999) == "999"
    assert core.fmt_count(None) == "-"
    assert core.fmt_seconds(0.0123) == "12.3 ms" and core.fmt_seconds(12.34) == "12.3 s"
    assert core.fmt_bytes(3 * 2**20) == "3 MB" and core.fmt_bytes(3 * 2**30) == "3.00 GB"


def test_contender_table() -> None:
    names = [c.name for c in C.CONTENDERS]
    assert len(names) == len(set(names))
    roles = {c.role for c in C.CONTENDERS}
    assert {"sqn", "sgd", "vw"} <= roles
    quick = [c for c in C.CONTENDERS if c.quick]
    assert {c.role for c in quick} >= {"sqn", "sgd", "vw"} and len(quick) < len(names)
    with pytest.raises(SystemExit, match="unknown contenders"):
        C.select(["no such contender"], quick=False)


# ---------------------------------------------------------------------------- data
TINY = DataSpec("tiny", "generated", 3000, 800, 2**12, GENERATOR, seed=3,
                description="tiny generated set")


def test_data_is_cached_by_fingerprint_and_regenerated_when_damaged(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    lines: list[str] = []
    p = prepare(TINY, tmp_path, ("svm", "vw", "parquet"), log=lines.append)
    assert p.directory.name == f"tiny-{fingerprint(TINY, None)}"
    m = p.manifest
    assert m["n_train"] == 3000 and m["n_test"] == 800 and m["n_features"] == 2**12
    assert 0 < m["bayes_log_loss_test"] < math.log(2)
    assert 0.05 < m["positive_rate_train"] < 0.6
    assert np.load(p.directory / "test_proba.npy").shape == (800,)
    assert len(lines) == 2                                    # generating ..., done
    # reused as is
    mtime = p.path("train", "svm").stat().st_mtime_ns
    assert prepare(TINY, tmp_path, ("svm",), log=lines.append).directory == p.directory
    assert p.path("train", "svm").stat().st_mtime_ns == mtime and len(lines) == 2
    # another seed: another directory
    other = DataSpec(**{**TINY.__dict__, "seed": 4})
    assert fingerprint(other, None) != fingerprint(TINY, None)
    # a damaged file: generated again
    with open(p.path("train", "vw"), "ab") as fh:
        fh.write(b"garbage")
    prepare(TINY, tmp_path, ("svm", "vw", "parquet"), log=lines.append)
    assert len(lines) == 4
    s = summary(p)
    assert s["fingerprint"] == m["fingerprint"] and "train.svm" in s["file_bytes"]


def test_readers_give_the_generated_rows(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    pytest.importorskip("sklearn")
    from sqnopt.datasets import HashedCTRGenerator

    import sqnopt.datasets

    from scale.data import binary_available

    formats = ("svm", "parquet") + (("bin",) if binary_available() else ())
    p = prepare(TINY, tmp_path, formats, log=lambda _: None)
    truth = HashedCTRGenerator(TINY.n_features, random_state=TINY.seed,
                               **TINY.generator).sample(TINY.n_train)

    class S:   # what the readers use of a session
        files = {f"train.{f}": p.path("train", f) for f in formats}
        n_features, n_train, chunk_rows = TINY.n_features, TINY.n_train, 700

    for name, reader in C.READERS.items():
        if not hasattr(sqnopt.datasets, C.READER_NEEDS.get(name, "load_svmlight")):
            continue
        parts = list(reader(S()))  # type: ignore[arg-type]
        import scipy.sparse as sp

        X = sp.vstack([x for x, _ in parts], format="csr")
        y = np.concatenate([y for _, y in parts])
        assert X.shape == truth.X.shape and (X != truth.X).nnz == 0, name
        assert np.array_equal(y, truth.y), name
        assert all(x.indices.dtype == np.int32 for x, _ in parts), name
        assert max(x.shape[0] for x, _ in parts) <= 900, name   # about chunk_rows each


# ---------------------------------------------------------------------------- end to end
def test_quick_machinery_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("sklearn")
    pytest.importorskip("matplotlib")
    p = prepare(TINY, tmp_path / "data", ("svm", "vw"), log=lambda _: None)
    names = ["SQNClassifier(curvature='lbfgs').partial_fit"]
    try:
        import vowpalwabbit  # noqa: F401

        names.append("VW --passes 5")
    except ImportError:
        pass
    settings = Settings(chunk_rows=500, cap=60.0, slack=120.0, tmp=tmp_path)
    table = C.by_name()
    entries = {n: run_contender(table[n], p, settings) for n in names}
    for name, e in entries.items():
        assert e["status"] == "done", (name, e.get("error"))
        cv = e["curve"]
        assert len(cv["loss"]) >= 3, name
        assert all(0 < x < math.inf for x in cv["loss"]) and 0.6 < cv["auc"][-1] <= 1
        assert cv["loss"][-1] < math.log(2)
        assert cv["time"] == sorted(cv["time"]) and cv["time"][0] > 0
        assert cv["examples"][-1] == pytest.approx(TINY.n_train * (5 if "VW" in name else 1))
        assert e["peak_rss"] >= e["rss_base"] > 10 * 2**20
        assert 0 < e["counted"] <= e["wall"]
    if "VW --passes 5" in entries:
        assert "--passes 5" in entries["VW --passes 5"]["info"]["options"]
    # the hard cap: a child killed before its first point keeps nothing and says so
    killed = run_contender(table["SQNClassifier(curvature='lbfgs').partial_fit"], p,
                           Settings(chunk_rows=500, cap=0.0, slack=0.3, tmp=tmp_path))
    assert killed["status"] == "killed" and "curve" not in killed
    # the record, the report and the figure
    entries["killed"] = killed
    size = {"name": "tiny", "data": summary(p), "alpha": 1 / TINY.n_train,
            "contenders": entries}
    size.update(core.finish_size(entries, {n: {"role": table[n].role} for n in names}))
    record = {"schema": 1, "command": "test", "config": {"targets": list(core.TARGETS)},
              "sizes": [size], "skipped": ["x: skipped"],
              "contender_table": {n: {"library": table[n].library, "role": table[n].role,
                                      "passes": table[n].passes, "formats": ["svm"],
                                      "note": ""} for n in names}}
    text, _ = core.compact_record(record)
    compact = json.loads(text)
    md = report.render(compact, "plots")
    assert "## tiny: 3,000 training rows" in md and "![tiny](plots/tiny.png)" in md
    assert "partial_fit" in md and "killed: no end record (killed)" in md
    assert "| tiny | own best + 1% (" in md
    from scale import plots

    (path,) = plots.draw_all(compact, tmp_path / "plots")
    assert path.stat().st_size > 5000


def test_render_derives_the_ratios_of_an_older_record() -> None:
    from scale.cli import upgrade

    cs: dict[str, Any] = {"sqn": {"curve": _curve([0.6, 0.5], 100.0)},
                          "sgd": {"curve": _curve([0.9, 0.7, 0.5], 1e4)}}
    table = {"sqn": {"role": "sqn", "library": "sqnopt"}, "sgd": {"role": "sgd",
                                                                  "library": "x"}}
    size = {"name": "s", "alpha": 1e-6, "data": {}, "contenders": cs}
    size.update(core.finish_size(cs, table))
    stored = size.pop("ratios")
    record = upgrade({"sizes": [size], "contender_table": table, "config": {}})
    assert record["sizes"][0]["ratios"] == stored and record["sizes"][0]["ratios_from_compact"]
    assert "predates the stored ratios" in report.render(record, None)


def test_render_of_several_records_joins_their_data_sets(tmp_path: Path) -> None:
    from scale.cli import main, merge_records

    def rec(name: str, contender: str) -> dict[str, Any]:
        cs: dict[str, Any] = {contender: {"curve": _curve([0.6, 0.5], 100.0)}}
        table = {contender: {"role": None, "library": "x", "passes": "1", "formats": ["svm"],
                             "note": ""}}
        size = {"name": name, "alpha": 1e-6, "data": {}, "contenders": cs}
        size.update(core.finish_size(cs, table))
        return {"command": f"run {name}", "record_file": f"{name}.json", "sizes": [size],
                "contender_table": table, "skipped": [f"{name}: skipped"], "config": {},
                "wall_seconds": 2.0}

    a, b = rec("one", "p"), rec("two", "q")
    both = merge_records([a, b])
    assert [s["name"] for s in both["sizes"]] == ["one", "two"]
    assert set(both["contender_table"]) == {"p", "q"} and both["wall_seconds"] == 4.0
    assert both["skipped"] == ["one: skipped", "two: skipped"]
    with pytest.raises(SystemExit, match="more than one record"):
        merge_records([a, a])
    paths = []
    for r in (a, b):
        paths.append(tmp_path / r["record_file"])
        paths[-1].write_text(json.dumps(r))
    docs = tmp_path / "scale_doc.md"
    assert main(["--render", *map(str, paths), "--out", str(tmp_path / "out"),
                 "--docs", str(docs)]) == 0        # renders and returns: runs nothing
    md = docs.read_text()
    assert "`run one` and `run two`" in md and md.index("## one") < md.index("## two")
