"""A dependency-free line chart written as PNG (NumPy raster + zlib), used by ``sqnopt plot``
when matplotlib is not installed. Basic on purpose: axes, log or linear ticks, one coloured line
per run, legend, title, upper-case labels in a 5x7 bitmap font. Install ``sqnopt[plot]`` for
real figures (:mod:`sqnopt.plotting`).
"""

from __future__ import annotations

import math
import os
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from sqnopt._files import write_bytes_atomic

Color = tuple[int, int, int]
Image = NDArray[np.uint8]

__all__ = ["line_chart", "write_png"]

# 5x7 glyphs, rows top to bottom ('#' = ink). Lower-case text is drawn in upper case.
_GLYPHS: dict[str, str] = {
    "A": ".###. #...# #...# ##### #...# #...# #...#",
    "B": "####. #...# #...# ####. #...# #...# ####.",
    "C": ".###. #...# #.... #.... #.... #...# .###.",
    "D": "####. #...# #...# #...# #...# #...# ####.",
    "E": "##### #.... #.... ####. #.... #.... #####",
    "F": "##### #.... #.... ####. #.... #.... #....",
    "G": ".###. #...# #.... #.### #...# #...# .####",
    "H": "#...# #...# #...# ##### #...# #...# #...#",
    "I": ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "J": "..### ...#. ...#. ...#. ...#. #..#. .##..",
    "K": "#...# #..#. #.#.. ##... #.#.. #..#. #...#",
    "L": "#.... #.... #.... #.... #.... #.... #####",
    "M": "#...# ##.## #.#.# #.#.# #...# #...# #...#",
    "N": "#...# #...# ##..# #.#.# #..## #...# #...#",
    "O": ".###. #...# #...# #...# #...# #...# .###.",
    "P": "####. #...# #...# ####. #.... #.... #....",
    "Q": ".###. #...# #...# #...# #.#.# #..#. .##.#",
    "R": "####. #...# #...# ####. #.#.. #..#. #...#",
    "S": ".#### #.... #.... .###. ....# ....# ####.",
    "T": "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "U": "#...# #...# #...# #...# #...# #...# .###.",
    "V": "#...# #...# #...# #...# #...# .#.#. ..#..",
    "W": "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.",
    "X": "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    "Y": "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..",
    "Z": "##### ....# ...#. ..#.. .#... #.... #####",
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.",
    "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ...#. ..#.. .#... #####",
    "3": "####. ....# ....# .###. ....# ....# ####.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.",
    "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": "..##. .#... #.... ####. #...# #...# .###.",
    "7": "##### ....# ...#. ..#.. .#... .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.",
    "9": ".###. #...# #...# .#### ....# ...#. .##..",
    " ": "..... ..... ..... ..... ..... ..... .....",
    ".": "..... ..... ..... ..... ..... .##.. .##..",
    ",": "..... ..... ..... ..... .##.. ..#.. .#...",
    "-": "..... ..... ..... ##### ..... ..... .....",
    "+": "..... ..#.. ..#.. ##### ..#.. ..#.. .....",
    ":": "..... .##.. .##.. ..... .##.. .##.. .....",
    "(": "...#. ..#.. .#... .#... .#... ..#.. ...#.",
    ")": ".#... ..#.. ...#. ...#. ...#. ..#.. .#...",
    "[": ".###. .#... .#... .#... .#... .#... .###.",
    "]": ".###. ...#. ...#. ...#. ...#. ...#. .###.",
    "=": "..... ..... ##### ..... ##### ..... .....",
    "_": "..... ..... ..... ..... ..... ..... #####",
    "/": "....# ....# ...#. ..#.. .#... #.... #....",
    "*": "..... #.#.# .###. ##### .###. #.#.# .....",
    "%": "##..# ##..# ...#. ..#.. .#... #..## #..##",
    "'": "..#.. ..#.. .#... ..... ..... ..... .....",
    "<": "...#. ..#.. .#... #.... .#... ..#.. ...#.",
    ">": ".#... ..#.. ...#. ....# ...#. ..#.. .#...",
    "^": "..#.. .#.#. #...# ..... ..... ..... .....",
    "~": "..... ..... .#... #.#.# ...#. ..... .....",
    "#": ".#.#. .#.#. ##### .#.#. ##### .#.#. .#.#.",
    "|": "..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "?": ".###. #...# ....# ...#. ..#.. ..... ..#..",
    "!": "..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#..",
}
_BITMAPS = {c: np.array([[ch == "#" for ch in row] for row in g.split()], dtype=bool)
            for c, g in _GLYPHS.items()}

_PALETTE: list[Color] = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (255, 127, 14),
                         (148, 103, 189), (140, 86, 75), (227, 119, 194), (127, 127, 127),
                         (188, 189, 34), (23, 190, 207)]
_BLACK: Color = (0, 0, 0)
_GRID: Color = (225, 225, 225)


def write_png(path: str | os.PathLike[str], image: Image) -> Path:
    """Write an ``(h, w, 3)`` uint8 RGB array as a PNG file."""
    img = np.ascontiguousarray(image, dtype=np.uint8)
    if img.ndim != 3 or img.shape[2] != 3:
        raise ValueError("write_png expects an (height, width, 3) uint8 array")
    h, w, _ = img.shape
    raw = np.concatenate([np.zeros((h, 1), dtype=np.uint8), img.reshape(h, w * 3)], axis=1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    png = (b"\x89PNG\r\n\x1a\n"
           + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw.tobytes(), 9))
           + chunk(b"IEND", b""))
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(p, png)
    return p


class _Canvas:
    def __init__(self, width: int, height: int) -> None:
        self.img: Image = np.full((height, width, 3), 255, dtype=np.uint8)
        self.h, self.w = height, width

    def fill(self, x0: int, y0: int, x1: int, y1: int, color: Color) -> None:
        xa, xb = sorted((max(0, x0), min(self.w, x1)))
        ya, yb = sorted((max(0, y0), min(self.h, y1)))
        self.img[ya:yb, xa:xb] = color

    def line(self, x0: float, y0: float, x1: float, y1: float, color: Color,
             width: int = 1) -> None:
        n = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
        xs = np.rint(np.linspace(x0, x1, n)).astype(int)
        ys = np.rint(np.linspace(y0, y1, n)).astype(int)
        lo, hi = -(width // 2), width - width // 2
        for dx in range(lo, hi):
            for dy in range(lo, hi):
                x, y = xs + dx, ys + dy
                ok = (x >= 0) & (x < self.w) & (y >= 0) & (y < self.h)
                self.img[y[ok], x[ok]] = color

    def text(self, x: int, y: int, s: str, color: Color = _BLACK, scale: int = 2,
             anchor: str = "left", vertical: bool = False) -> None:
        bmp = _render(s, scale)
        if vertical:
            bmp = np.rot90(bmp)
        h, w = bmp.shape
        if anchor == "center":
            x, y = (x - w // 2, y) if not vertical else (x, y - h // 2)
        elif anchor == "right":
            x -= w
        ys, xs = np.nonzero(bmp)
        ys, xs = ys + y, xs + x
        ok = (xs >= 0) & (xs < self.w) & (ys >= 0) & (ys < self.h)
        self.img[ys[ok], xs[ok]] = color


def _render(s: str, scale: int) -> NDArray[np.bool_]:
    cols = []
    for ch in s.upper():
        g = _BITMAPS.get(ch, _BITMAPS["?"])
        cols.append(g)
        cols.append(np.zeros((7, 1), dtype=bool))
    bmp = np.concatenate(cols, axis=1) if cols else np.zeros((7, 1), dtype=bool)
    return np.kron(bmp, np.ones((scale, scale), dtype=bool))


def _text_width(s: str, scale: int) -> int:
    return len(s) * 6 * scale


#: Log axes stay within what a float can hold (10**308 < max float, 10**-323 > 0).
_LOG_MIN, _LOG_MAX = -323.0, 308.0
_FLOAT_MAX = float(np.finfo(np.float64).max)


def _ticks(lo: float, hi: float, log: bool) -> list[tuple[float, str]]:
    if log:
        a = max(math.floor(math.log10(lo)), int(_LOG_MIN))
        b = min(math.ceil(math.log10(hi)), int(_LOG_MAX))
        step = max(1, (b - a) // 8)
        vals = [10.0**k for k in range(a, b + 1, step)]
        for mantissas in ((1, 2, 5), tuple(range(1, 10))):
            if sum(lo <= v <= hi for v in vals) >= 3:
                break
            vals = [m * 10.0**k for k in range(a, b + 1) for m in mantissas]
        return [(v, _fmt(v, log=True)) for v in vals if lo <= v <= hi]
    half = hi / 2 - lo / 2  # half the span: finite even when hi - lo is not
    raw = half / 2.5
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 5, 10) if m * mag >= raw), default=mag)
    start = math.ceil(lo / step) * step
    out: list[tuple[float, str]] = []
    v = start
    while v <= hi + 2e-12 * half and len(out) < 50:
        out.append((v, _fmt(v, log=False)))
        if v + step == v:  # the step is below the spacing of floats here
            break
        v += step
    return out


def _fmt(v: float, *, log: bool) -> str:
    if v == 0:
        return "0"
    if log:
        mantissa, exponent = f"{v:.6e}".split("e")  # exact for subnormal and huge values
        m, k = float(mantissa), int(exponent)
        return f"1E{k}" if abs(m - 1) < 1e-9 else f"{m:.0f}E{k}"
    return f"{v:.4g}"


def line_chart(series: Sequence[tuple[str, Sequence[float], Sequence[float]]], *,
               logx: bool = True, logy: bool = True, xlabel: str = "", ylabel: str = "",
               title: str = "", width: int = 860, height: int = 580) -> Image:
    """Render ``(label, xs, ys)`` lines into an RGB image (see the module docstring)."""
    left, right, top, bottom = 120, 30, 54, 84
    cv = _Canvas(width, height)
    pts = []
    for label, xs, ys in series:
        x = np.asarray(xs, dtype=np.float64)
        y = np.asarray(ys, dtype=np.float64)
        ok = np.isfinite(x) & np.isfinite(y)
        if logx:
            ok &= x > 0
        if logy:
            ok &= y > 0
        pts.append((label, x[ok], y[ok]))
    allx = np.concatenate([p[1] for p in pts]) if pts else np.zeros(0)
    ally = np.concatenate([p[2] for p in pts]) if pts else np.zeros(0)
    if allx.size == 0:
        raise ValueError("nothing to plot: no finite (positive, on log axes) points")

    def limits(v: NDArray[np.float64], log: bool) -> tuple[float, float]:
        """Axis limits in axis coordinates (log10 of the values on a log axis), padded and
        clamped so that every value and tick stays a finite float."""
        lo, hi = float(v.min()), float(v.max())
        if log:
            lo, hi = math.log10(lo), math.log10(hi)
        half = hi / 2 - lo / 2
        pad = 0.08 * half if half > 0 else (0.5 if log or lo == 0 else 0.04 * abs(lo))
        lo, hi = lo - pad, hi + pad
        if log:
            return max(lo, _LOG_MIN), min(hi, _LOG_MAX)
        return max(lo, -_FLOAT_MAX), min(hi, _FLOAT_MAX)

    (x0, x1), (y0, y1) = limits(allx, logx), limits(ally, logy)
    pw, ph = width - left - right, height - top - bottom

    def frac(v: NDArray[np.float64] | float, log: bool, lo: float, hi: float
             ) -> NDArray[np.float64]:
        with np.errstate(over="ignore", invalid="ignore"):
            a = np.log10(v) if log else np.asarray(v, dtype=np.float64)
            return np.asarray((a / 2 - lo / 2) / (hi / 2 - lo / 2))  # halves: no overflow

    def px(v: NDArray[np.float64] | float) -> NDArray[np.float64]:
        return np.asarray(left + frac(v, logx, x0, x1) * pw)

    def py(v: NDArray[np.float64] | float) -> NDArray[np.float64]:
        return np.asarray(top + ph - frac(v, logy, y0, y1) * ph)

    def tick_range(lo: float, hi: float, log: bool) -> tuple[float, float]:
        return (10**lo, 10**hi) if log else (lo, hi)

    for v, lab in _ticks(*tick_range(x0, x1, logx), logx):
        xp = float(px(v))
        cv.line(xp, top, xp, top + ph, _GRID)
        cv.line(xp, top + ph, xp, top + ph + 6, _BLACK)
        cv.text(int(xp), top + ph + 12, lab, anchor="center")
    for v, lab in _ticks(*tick_range(y0, y1, logy), logy):
        yp = float(py(v))
        cv.line(left, yp, left + pw, yp, _GRID)
        cv.line(left - 6, yp, left, yp, _BLACK)
        cv.text(left - 10, int(yp) - 7, lab, anchor="right")
    for i, (_, x, y) in enumerate(pts):
        color = _PALETTE[i % len(_PALETTE)]
        xpix, ypix = px(x), py(y)
        for j in range(len(xpix) - 1):
            cv.line(xpix[j], ypix[j], xpix[j + 1], ypix[j + 1], color, width=2)
        for a, b in zip(xpix, ypix):
            cv.fill(int(a) - 2, int(b) - 2, int(a) + 3, int(b) + 3, color)
    # frame
    cv.line(left, top, left + pw, top, _BLACK)
    cv.line(left, top + ph, left + pw, top + ph, _BLACK)
    cv.line(left, top, left, top + ph, _BLACK)
    cv.line(left + pw, top, left + pw, top + ph, _BLACK)
    # legend (top right, inside)
    lw = max(_text_width(p[0], 2) for p in pts) + 44
    lx, ly = left + pw - lw - 10, top + 10
    cv.fill(lx, ly, lx + lw, ly + 22 * len(pts) + 8, (255, 255, 255))
    for i, (label, _, _) in enumerate(pts):
        color = _PALETTE[i % len(_PALETTE)]
        yy = ly + 8 + 22 * i
        cv.fill(lx + 8, yy + 4, lx + 32, yy + 9, color)
        cv.text(lx + 40, yy, label)
    if title:
        cv.text(width // 2, 16, title, anchor="center")
    if xlabel:
        cv.text(left + pw // 2, height - 32, xlabel, anchor="center")
    if ylabel:
        cv.text(14, top + ph // 2, ylabel, anchor="center", vertical=True)
    return cv.img
