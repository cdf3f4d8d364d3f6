"""The data of the scale benchmark: generated hashed CTR streams
(:class:`sqnopt.datasets.HashedCTRGenerator`) of 10^6, 10^7 and 10^8 rows, and the shipped Criteo
sample as the real-data row, written once into a cache directory as svmlight, Vowpal Wabbit text
and Parquet, and reused while their fingerprint matches.

A data set lives in ``<data dir>/<name>-<fingerprint>/``: ``train.svm``, ``train.vw``,
``train.parquet``, ``test.svm``, ``test.vw``, ``test.parquet``, ``test_proba.npy`` (the true
probabilities of the held-out rows, generated sets only) and ``manifest.json``, written last: a
directory without its manifest, or whose files no longer have the sizes the manifest lists, is
generated again. The fingerprint is a hash of everything that defines the files (generator
parameters, seed, row counts, the format version; for Criteo the source file's digest and the
featurizer's settings).

Parquet layout: a ``label`` column (float64) and the CSR row as ``indices`` (``list<int32>``,
zero-based, increasing) and ``values`` (``list<float32>``), one row group per written chunk.
``bin``: sqnopt's binary chunk format (``sqnopt.datasets.write_binary`` from ``train.svm``),
where this sqnopt has it; it can be added to a data set generated without it.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

#: Bumped whenever the files written for the same specification change.
FORMAT_VERSION = 1
#: Rows generated and written per step (memory stays bounded by it).
WRITE_ROWS = 65_536
FORMATS = ("svm", "vw", "parquet", "bin")
CRITEO_FILE = "criteo_dac_train_head10k.tsv.xz"


@dataclass(frozen=True)
class DataSpec:
    """One row of the benchmark: a generated set (``kind="generated"``) or the Criteo sample."""

    name: str
    kind: str                                   # "generated" | "criteo"
    n_train: int
    n_test: int
    n_features: int
    generator: dict[str, Any] = field(default_factory=dict)   # HashedCTRGenerator kwargs
    seed: int = 0
    description: str = ""
    cap: float = 900.0          # seconds counted per contender (--cap overrides)

    def fingerprint_source(self, datasets_dir: Path | None) -> dict[str, Any]:
        out = {"format_version": FORMAT_VERSION, **asdict(self)}
        out.pop("description")
        out.pop("cap")
        if self.kind == "criteo":
            assert datasets_dir is not None
            out["source_sha256"] = _sha256(datasets_dir / CRITEO_FILE)
        return out


GENERATOR = {"n_fields": 24, "zipf_exponent": 1.2, "weight_scale": 0.5, "bias": -2.2}
_GENERATED = ("hashed CTR stream (HashedCTRGenerator: 24 fields, Zipf-like values of exponent "
              "1.2 over vocabularies of 10 to 10^5, hashed into {d} columns, w* ~ N(0, 0.5^2), "
              "bias -2.2)")

SPECS: dict[str, DataSpec] = {s.name: s for s in (
    DataSpec("1e6", "generated", 10**6, 2 * 10**5, 2**18, GENERATOR,
             description=_GENERATED.format(d="2^18")),
    DataSpec("1e7", "generated", 10**7, 2 * 10**5, 2**18, GENERATOR,
             description=_GENERATED.format(d="2^18"), cap=1800.0),
    DataSpec("1e8", "generated", 10**8, 2 * 10**5, 2**18, GENERATOR,
             description=_GENERATED.format(d="2^18"), cap=3600.0),
    DataSpec("criteo", "criteo", 8000, 2000, 0, {"n_bags": 2**13},
             description="Criteo display-ads sample (the shipped first 10,000 rows of the Kaggle "
                         "log): 13 count fields one-hot by log bin and 26 categorical fields "
                         "hashed into 8192 bags each (sqnopt.datasets.criteo_featurizer); "
                         "first 8000 rows train, last 2000 held out (time order)", cap=120.0),
    DataSpec("quick", "generated", 20_000, 5_000, 2**14, GENERATOR,
             description=_GENERATED.format(d="2^14") + ", tiny (smoke run)", cap=20.0),
)}
DEFAULT_SIZES = ("1e6", "1e7", "criteo")
QUICK_SIZES = ("quick",)


def binary_available() -> bool:
    """Whether this sqnopt writes and streams its binary chunk format."""
    import sqnopt.datasets as d

    return hasattr(d, "write_binary") and hasattr(d, "stream_binary")


def default_data_dir() -> Path:
    return Path(os.environ.get("SQNOPT_SCALE_DATA", Path.home() / ".cache" / "sqnopt-scale"))


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fingerprint(spec: DataSpec, datasets_dir: Path | None) -> str:
    text = json.dumps(spec.fingerprint_source(datasets_dir), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass
class Prepared:
    """A data set on disk: its directory and manifest."""

    spec: DataSpec
    directory: Path
    manifest: dict[str, Any]

    def path(self, split: str, fmt: str) -> Path:
        return self.directory / f"{split}.{fmt}"

    def has(self, fmt: str) -> bool:
        return fmt in self.manifest.get("formats", [])

    @property
    def n_features(self) -> int:
        return int(self.manifest["n_features"])


# ---------------------------------------------------------------------------- writers
class _ParquetRows:
    """Appends CSR chunks to a Parquet file (label, indices, values)."""

    def __init__(self, path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.pa = pa
        self.schema = pa.schema([("label", pa.float64()), ("indices", pa.list_(pa.int32())),
                                 ("values", pa.list_(pa.float32()))])
        self.writer = pq.ParquetWriter(str(path), self.schema)

    def write(self, X: sp.csr_matrix, y: np.ndarray) -> None:
        pa = self.pa
        offsets = pa.array(X.indptr.astype(np.int32))
        table = pa.Table.from_arrays(
            [pa.array(np.asarray(y, dtype=np.float64)),
             pa.ListArray.from_arrays(offsets, pa.array(X.indices.astype(np.int32))),
             pa.ListArray.from_arrays(offsets, pa.array(X.data.astype(np.float32)))],
            schema=self.schema)
        self.writer.write_table(table)

    def close(self) -> None:
        self.writer.close()


def _write_split(directory: Path, split: str, chunks: Iterator[tuple[sp.csr_matrix, np.ndarray]],
                 formats: tuple[str, ...], log: Callable[[str], None], total: int
                 ) -> dict[str, Any]:
    """Write every chunk in every format; returns rows, stored values and positives."""
    from sqnopt.datasets import write_svmlight, write_vw

    handles: dict[str, Any] = {}
    if "svm" in formats:
        handles["svm"] = open(directory / f"{split}.svm", "wb")
    if "vw" in formats:
        handles["vw"] = open(directory / f"{split}.vw", "wb")
    parquet = _ParquetRows(directory / f"{split}.parquet") if "parquet" in formats else None
    rows = nnz = positives = 0
    tic = last = time.perf_counter()
    try:
        for X, y in chunks:
            if "svm" in handles:
                write_svmlight(handles["svm"], X, y)
            if "vw" in handles:
                write_vw(handles["vw"], X, y)
            if parquet is not None:
                parquet.write(X, y)
            rows += X.shape[0]
            nnz += X.nnz
            positives += int(np.sum(y == 1))
            if time.perf_counter() - last > 30:
                last = time.perf_counter()
                log(f"    {split}: {rows:,} / {total:,} rows ({last - tic:.0f} s)")
    finally:
        for h in handles.values():
            h.close()
        if parquet is not None:
            parquet.close()
    return {"rows": rows, "nnz": nnz, "positives": positives}


def _generate(spec: DataSpec, directory: Path, formats: tuple[str, ...],
              log: Callable[[str], None]) -> dict[str, Any]:
    from sqnopt.datasets import HashedCTRGenerator, bayes_log_loss

    g = HashedCTRGenerator(spec.n_features, random_state=spec.seed, **spec.generator)
    entropy = {"train": 0.0}

    def train_chunks() -> Iterator[tuple[sp.csr_matrix, np.ndarray]]:
        for s in g.iter_samples(spec.n_train, WRITE_ROWS, stream=0):
            entropy["train"] += bayes_log_loss(s.proba) * s.X.shape[0]
            yield s.X, s.y

    test = g.sample(spec.n_test, stream=1)
    np.save(directory / "test_proba.npy", test.proba)
    te = _write_split(directory, "test", iter([(test.X, test.y)]), formats, log, spec.n_test)
    tr = _write_split(directory, "train", train_chunks(), formats, log, spec.n_train)
    return {"train": tr, "test": te, "n_features": spec.n_features,
            "bayes_log_loss_train": entropy["train"] / spec.n_train,
            "bayes_log_loss_test": bayes_log_loss(test.proba),
            "generator": repr(g)}


def _criteo(spec: DataSpec, directory: Path, formats: tuple[str, ...], datasets_dir: Path,
            log: Callable[[str], None]) -> dict[str, Any]:
    from sqnopt.datasets import criteo_featurizer, read_criteo

    table, label = read_criteo(datasets_dir / CRITEO_FILE)
    feats = criteo_featurizer(**spec.generator)
    X = sp.csr_matrix(feats.fit(table).transform(table))
    X.sort_indices()
    y = (np.asarray(label) > 0).astype(np.float64)
    cut = spec.n_train
    te = _write_split(directory, "test", iter([(X[cut:cut + spec.n_test], y[cut:cut + spec.n_test])]),
                      formats, log, spec.n_test)
    tr = _write_split(directory, "train", iter([(X[:cut], y[:cut])]), formats, log, cut)
    return {"train": tr, "test": te, "n_features": int(X.shape[1]),
            "bayes_log_loss_train": None, "bayes_log_loss_test": None}


# ---------------------------------------------------------------------------- the cache
def _manifest(directory: Path) -> dict[str, Any] | None:
    """The manifest of a complete data set whose files still have the sizes it lists."""
    try:
        manifest: dict[str, Any] = json.loads((directory / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    for name, size in manifest.get("files", {}).items():
        p = directory / name
        if not p.exists() or p.stat().st_size != size:
            return None
    return manifest


def _write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    manifest["files"] = {p.name: p.stat().st_size for p in sorted(directory.iterdir())
                         if p.name != "manifest.json" and not p.name.endswith(".tmp")}
    tmp = directory / "manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, directory / "manifest.json")


def _add_binary(directory: Path, manifest: dict[str, Any], log: Callable[[str], None]) -> None:
    """``train.bin``: sqnopt's binary chunk format written from ``train.svm``."""
    from sqnopt.datasets import write_binary

    tic = time.perf_counter()
    write_binary(directory / "train.bin", directory / "train.svm", chunk_size=WRITE_ROWS,
                 n_features=int(manifest["n_features"]), classes=[0.0, 1.0])
    manifest["formats"] = sorted(set(manifest["formats"]) | {"bin"}, key=FORMATS.index)
    manifest["binary_seconds"] = round(time.perf_counter() - tic, 1)
    _write_manifest(directory, manifest)
    log(f"  wrote {directory / 'train.bin'} in {manifest['binary_seconds']:.0f} s")


def prepare(spec: DataSpec, data_dir: Path, formats: tuple[str, ...], *,
            datasets_dir: Path | None = None, log: Callable[[str], None] = print) -> Prepared:
    """The data set of ``spec`` in ``formats``, from the cache or generated now (the binary
    form is written from the svmlight file, and added to a cached set that lacks it)."""
    if spec.kind == "criteo" and (datasets_dir is None or not (datasets_dir / CRITEO_FILE).exists()):
        raise FileNotFoundError(f"{CRITEO_FILE} not found in {datasets_dir}")
    if "bin" in formats and "svm" not in formats:
        raise ValueError("the binary form is written from the svmlight file: ask for svm too")
    fp = fingerprint(spec, datasets_dir)
    directory = data_dir / f"{spec.name}-{fp}"
    manifest = _manifest(directory)
    if manifest is not None:
        lacking = [f for f in formats if f not in manifest.get("formats", [])]
        if not lacking:
            return Prepared(spec, directory, manifest)
        if lacking == ["bin"] and "svm" in manifest["formats"]:
            _add_binary(directory, manifest, log)
            return Prepared(spec, directory, manifest)
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    need = _bytes_needed(spec, formats)
    free = shutil.disk_usage(directory).free
    if need > 0.9 * free:
        shutil.rmtree(directory)
        raise OSError(f"{spec.name}: the files need about {need / 1e9:.1f} GB, {directory.parent} "
                      f"has {free / 1e9:.1f} GB free; choose --data-dir elsewhere or fewer "
                      "--formats")
    log(f"  generating {spec.name} into {directory} (about {need / 1e9:.2g} GB)")
    tic = time.perf_counter()
    text_formats = tuple(f for f in formats if f != "bin")
    if spec.kind == "generated":
        info = _generate(spec, directory, text_formats, log)
    else:
        assert datasets_dir is not None
        info = _criteo(spec, directory, text_formats, datasets_dir, log)
    manifest = {
        "fingerprint": fp, "spec": spec.fingerprint_source(datasets_dir),
        "formats": list(text_formats),
        "n_train": info["train"]["rows"], "n_test": info["test"]["rows"],
        "n_features": info["n_features"], "nnz_train": info["train"]["nnz"],
        "nnz_test": info["test"]["nnz"],
        "positive_rate_train": info["train"]["positives"] / max(info["train"]["rows"], 1),
        "positive_rate_test": info["test"]["positives"] / max(info["test"]["rows"], 1),
        "bayes_log_loss_train": info["bayes_log_loss_train"],
        "bayes_log_loss_test": info["bayes_log_loss_test"],
        "generation_seconds": round(time.perf_counter() - tic, 1),
        "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    if "generator" in info:
        manifest["generator"] = info["generator"]
    _write_manifest(directory, manifest)
    log(f"  {spec.name}: {manifest['n_train']:,} + {manifest['n_test']:,} rows in "
        f"{manifest['generation_seconds']:.0f} s")
    if "bin" in formats:
        _add_binary(directory, manifest, log)
    return Prepared(spec, directory, manifest)


def _bytes_needed(spec: DataSpec, formats: tuple[str, ...]) -> float:
    """A generous estimate of the files' size (svmlight ~ 210 bytes a row here)."""
    rows = spec.n_train + spec.n_test
    per_row = {"svm": 215.0, "vw": 220.0, "parquet": 110.0, "bin": 110.0}
    return rows * sum(per_row[f] for f in formats)


def summary(p: Prepared) -> dict[str, Any]:
    """What the record keeps of a data set."""
    m = p.manifest
    keys = ("fingerprint", "n_train", "n_test", "n_features", "nnz_train", "nnz_test",
            "positive_rate_train", "positive_rate_test", "bayes_log_loss_train",
            "bayes_log_loss_test", "generation_seconds", "formats")
    out = {k: m.get(k) for k in keys}
    out["name"] = p.spec.name
    out["kind"] = p.spec.kind
    out["description"] = p.spec.description
    out["seed"] = p.spec.seed
    out["file_bytes"] = {k: v for k, v in m.get("files", {}).items()
                        if k.startswith("train.")}
    if m.get("generator"):
        out["generator"] = m["generator"]
    if out["bayes_log_loss_test"] is not None and not math.isfinite(out["bayes_log_loss_test"]):
        out["bayes_log_loss_test"] = None
    return out
