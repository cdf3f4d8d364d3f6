"""Writing benchmark results small enough to keep in git: JSON with floats at 10 significant
digits (enough for relative excesses down to ~1e-9) and no indentation, figures as palette
PNGs. Used by the paper scripts, the race and the scale benchmark when they write
``bench/results``."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

from sqnopt._files import write_bytes_atomic, write_text_atomic

DIGITS = 10


def round_floats(obj: Any, digits: int) -> Any:
    """``obj`` with every float at ``digits`` significant digits (recursively)."""
    return _round(obj, digits)


def _round(obj: Any, digits: int) -> Any:
    if isinstance(obj, float):
        if not math.isfinite(obj):
            return obj
        return float(f"{obj:.{digits}g}")
    if isinstance(obj, dict):
        return {k: _round(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_round(v, digits) for v in obj]
    return obj


def dumps(obj: Any, digits: int = DIGITS) -> str:
    """Compact JSON of ``obj`` with every float at ``digits`` significant digits (NumPy scalars
    are converted with ``default=float``)."""
    plain = json.loads(json.dumps(obj, default=float))
    return json.dumps(_round(plain, digits), separators=(",", ":")) + "\n"


def write_json(path: Path, obj: Any, digits: int = DIGITS) -> None:
    """Write :func:`dumps` of ``obj`` atomically (an interrupted run leaves the old file)."""
    write_text_atomic(path, dumps(obj, digits))


def close_record(record: dict[str, Any], path: Path | None, digits: int = 4) -> None:
    """The end of a small benchmark's run: the load average at the end stamped on its
    ``record`` and printed, and the record written to ``path`` (when given) as compact JSON
    with floats at ``digits`` significant digits."""
    import os

    record["load_end"] = list(os.getloadavg())
    print(f"load average at the end {record['load_end']}")
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, record, digits)
        print(f"wrote {path}")


def quantize_png(data: bytes, colors: int = 128) -> bytes:
    """A palette PNG (``colors`` entries, median cut) of an RGB(A) PNG: line plots lose
    nothing visible and shrink 3-5x."""
    from PIL import Image

    img = Image.open(io.BytesIO(data)).convert("RGB")
    out = io.BytesIO()
    img.quantize(colors=colors, method=Image.Quantize.MEDIANCUT).save(out, format="PNG",
                                                                       optimize=True)
    return out.getvalue()


def save_png(fig: Any, path: Path, dpi: int = 90, colors: int = 128) -> None:
    """Save a matplotlib figure as a palette PNG (see :func:`quantize_png`)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    write_bytes_atomic(path, quantize_png(buf.getvalue(), colors))


def to_columns(rows: list[dict[str, Any]], digits: int = 5) -> dict[str, Any]:
    """Rows of ``{key: scalar or {field: scalar}}`` as columns (``{key: [...]}`` and
    ``{key: {field: [...]}}``, None where a row lacks the entry), floats at ``digits``
    significant digits: the keys are written once instead of once per row (per-realization
    values of paper 003; the summary beside them keeps full precision). :func:`from_columns`
    inverts it."""
    keys: list[str] = []
    for row in rows:
        keys.extend(k for k in row if k not in keys)
    cols: dict[str, Any] = {"_rows": len(rows)}
    for k in keys:
        if any(isinstance(row.get(k), dict) for row in rows):
            fields: list[str] = []
            for row in rows:
                fields.extend(f for f in row.get(k, {}) if f not in fields)
            cols[k] = {f: [row[k].get(f) if k in row else None for row in rows] for f in fields}
            cols[k]["_present"] = [k in row for row in rows]
        else:
            cols[k] = [row.get(k) for row in rows]
    return dict(_round(cols, digits))


def from_columns(cols: dict[str, Any]) -> list[dict[str, Any]]:
    n = int(cols["_rows"])
    rows: list[dict[str, Any]] = [{} for _ in range(n)]
    for k, v in cols.items():
        if k == "_rows":
            continue
        if isinstance(v, dict):
            present = v["_present"]
            for i in range(n):
                if present[i]:
                    rows[i][k] = {f: vals[i] for f, vals in v.items()
                                  if f != "_present" and vals[i] is not None}
        else:
            for i in range(n):
                if v[i] is not None:
                    rows[i][k] = v[i]
    return rows
