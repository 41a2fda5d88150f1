"""The report's figures, each an inline SVG string written directly (no file, no link, no script).

Figures are sized to be read at 1280 px wide: 960 pt (13.33 in), text of 8-12 pt in DejaVu Sans
or the browser's sans-serif. They are written here rather than drawn with matplotlib: the
figures are simple (bars, steps, heat-map cells, points on fixed axes), and importing and laying
out matplotlib cost more than every measure of a report on 50,000 rows together. Text widths
are estimated (0.6 em per character) to leave room for labels; text stays text (selectable,
scales cleanly); coordinates are rounded to 1/100 pt; the only URL is the SVG namespace name.
"""

from __future__ import annotations

import html
import math
from typing import Mapping, Sequence

import numpy as np

from ..exceptions import ParameterError

WIDTH_IN = 1280 / 96  # inches, so that the SVG's natural width is 1280 px
_WIDTH = 960.0        # the same in points, the unit of every coordinate below
_ORIGINAL, _RELEASE = "#4c72b0", "#dd8452"
_INK, _GRID = "#262626", "#b0b0b0"
# matplotlib's RdBu_r: ColorBrewer's 11-class RdBu, reversed, interpolated linearly
_RDBU_R = ("#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7", "#fddbc7", "#f4a582", "#d6604d",
           "#b2182b", "#67001f")


def _n(v: float) -> str:
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


class _Canvas:
    def __init__(self, height: float, width: float = _WIDTH):
        self.width, self.height = width, height
        self.parts: list[str] = []

    def text(self, x: float, y: float, s: str, *, size: float = 10, anchor: str = "start", rotate: float = 0,
             fill: str = _INK, middle: bool = True, weight: str | None = None) -> None:
        attrs = f'x="{_n(x)}" y="{_n(y)}" font-size="{_n(size)}"'
        if anchor != "start":
            attrs += f' text-anchor="{anchor}"'
        if middle:
            attrs += ' dominant-baseline="central"'
        if rotate:
            attrs += f' transform="rotate({_n(rotate)} {_n(x)} {_n(y)})"'
        if fill != _INK:
            attrs += f' fill="{fill}"'
        if weight:
            attrs += f' font-weight="{weight}"'
        self.parts.append(f"<text {attrs}>{html.escape(s, quote=False)}</text>")

    def rect(self, x: float, y: float, w: float, h: float, fill: str, *, opacity: float | None = None) -> None:
        extra = f' fill-opacity="{opacity}"' if opacity is not None else ""
        self.parts.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(max(w, 0))}" height="{_n(max(h, 0))}" '
                          f'fill="{fill}"{extra}/>')

    def line(self, x1: float, y1: float, x2: float, y2: float, *, stroke: str = _INK, width: float = 0.8) -> None:
        self.parts.append(f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" stroke="{stroke}" '
                          f'stroke-width="{_n(width)}"/>')

    def path(self, points: Sequence[tuple[float, float]], *, stroke: str = "none", fill: str = "none",
             width: float = 1.0, opacity: float | None = None, close: bool = False) -> None:
        d = "M" + " L".join(f"{_n(x)} {_n(y)}" for x, y in points) + (" Z" if close else "")
        extra = f' fill-opacity="{opacity}"' if opacity is not None else ""
        self.parts.append(f'<path d="{d}" stroke="{stroke}" fill="{fill}" stroke-width="{_n(width)}"'
                          f' stroke-linejoin="miter"{extra}/>')

    def circle(self, x: float, y: float, r: float, fill: str) -> None:
        self.parts.append(f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(r)}" fill="{fill}"/>')

    def svg(self) -> str:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(self.width)}pt" height="{_n(self.height)}pt" '
                f'viewBox="0 0 {_n(self.width)} {_n(self.height)}" version="1.1" '
                'font-family="DejaVu Sans, sans-serif">' + "".join(self.parts) + "</svg>\n")


def _text_width(s: str, size: float) -> float:
    return 0.6 * size * len(s)


def _ticks(lo: float, hi: float, most: int = 6) -> np.ndarray:
    """Round tick values covering [lo, hi]: steps of 1, 2, 2.5 or 5 times a power of ten."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return np.array([lo])
    raw = (hi - lo) / most
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks = np.arange(first, hi + step * 1e-9, step)
    return np.round(ticks, 12)


def _tick_label(v: float, step: float) -> str:
    if step >= 1 and float(v).is_integer():
        return f"{int(v)}"
    decimals = max(0, -math.floor(math.log10(step) + 1e-12)) + (1 if round(step / 10 ** math.floor(
        math.log10(step)), 6) == 2.5 else 0)
    return f"{v:.{decimals}f}"


class _Axes:
    """A plotting box: data limits mapped to a rectangle, left and bottom spines, ticks."""

    def __init__(self, c: _Canvas, x: float, y: float, w: float, h: float, xlim, ylim):
        self.c, self.x, self.y, self.w, self.h = c, x, y, w, h
        self.xlim, self.ylim = (float(xlim[0]), float(xlim[1])), (float(ylim[0]), float(ylim[1]))

    def px(self, v):
        lo, hi = self.xlim
        return self.x + (np.asarray(v, dtype=np.float64) - lo) / ((hi - lo) or 1.0) * self.w

    def py(self, v):
        lo, hi = self.ylim
        return self.y + self.h - (np.asarray(v, dtype=np.float64) - lo) / ((hi - lo) or 1.0) * self.h

    def spines(self) -> None:
        self.c.line(self.x, self.y + self.h, self.x + self.w, self.y + self.h)
        self.c.line(self.x, self.y, self.x, self.y + self.h)

    def xticks(self, size: float = 9) -> None:
        ticks = _ticks(*self.xlim)
        step = float(ticks[1] - ticks[0]) if ticks.size > 1 else 1.0
        for v in ticks:
            px = float(self.px(v))
            self.c.line(px, self.y + self.h, px, self.y + self.h + 3.5)
            self.c.text(px, self.y + self.h + 14, _tick_label(float(v), step), size=size, anchor="middle",
                        middle=False)

    def yticks(self, size: float = 9) -> None:
        ticks = _ticks(*self.ylim)
        step = float(ticks[1] - ticks[0]) if ticks.size > 1 else 1.0
        for v in ticks:
            py = float(self.py(v))
            self.c.line(self.x - 3.5, py, self.x, py)
            self.c.text(self.x - 5, py, _tick_label(float(v), step), size=size, anchor="end")

    def category_xticks(self, labels: Sequence[str], positions, *, rotate: float = 0, size: float = 10) -> None:
        for label, v in zip(labels, positions):
            px = float(self.px(v))
            self.c.line(px, self.y + self.h, px, self.y + self.h + 3.5)
            if rotate:
                self.c.text(px, self.y + self.h + 6, label, size=size, anchor="end", rotate=-rotate)
            else:
                self.c.text(px, self.y + self.h + 10, label, size=size, anchor="middle")

    def category_yticks(self, labels: Sequence[str], positions, *, size: float = 10) -> None:
        for label, v in zip(labels, positions):
            py = float(self.py(v))
            self.c.line(self.x - 3.5, py, self.x, py)
            self.c.text(self.x - 5, py, label, size=size, anchor="end")


def _as_2d(values, names) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    arr = arr[:, None] if arr.ndim == 1 else arr
    if arr.shape[1] != len(names):
        raise ParameterError(f"names has {len(names)} entries for {arr.shape[1]} columns")
    return arr


def _widest_tick(lo: float, hi: float, size: float = 9) -> float:
    ticks = _ticks(lo, hi)
    step = float(ticks[1] - ticks[0]) if ticks.size > 1 else 1.0
    return max(_text_width(_tick_label(float(v), step), size) for v in ticks)


def histograms_before_after(original, masked, names: Sequence[str], *, max_bins: int = 30,
                            columns: int = 4) -> str:
    """One small multiple per quasi-identifier: the original's histogram and the release's,
    on the same bins (from the original's and release's common range), as step outlines."""
    names = list(names)
    X, Y = _as_2d(original, names), _as_2d(masked, names)
    p = max(len(names), 1)
    cols = min(columns, p)
    rows = math.ceil(p / cols)
    panel_h = 2.8 * 72
    c = _Canvas(panel_h * rows + 0.6 * 72)
    c.text(8, 14, "Quasi-identifiers before and after", size=12)
    # the legend, top right
    c.rect(_WIDTH - 190, 8, 16, 10, _ORIGINAL, opacity=0.35)
    c.text(_WIDTH - 170, 13, "original", size=10)
    c.line(_WIDTH - 100, 13, _WIDTH - 84, 13, stroke=_RELEASE, width=1.6)
    c.text(_WIDTH - 80, 13, "release", size=10)
    top = 0.6 * 72
    cell_w = (_WIDTH - 16) / cols
    for j, name in enumerate(names):
        left, y0 = 8 + (j % cols) * cell_w, top + (j // cols) * panel_h
        x, y = X[:, j], Y[:, j]
        x, y = x[np.isfinite(x)], y[np.isfinite(y)]
        if x.size + y.size == 0:
            c.text(left + cell_w / 2, y0 + 8, f"{name} (no values)", size=12, anchor="middle")
            continue
        lo = float(min(x.min() if x.size else np.inf, y.min() if y.size else np.inf))
        hi = float(max(x.max() if x.size else -np.inf, y.max() if y.size else -np.inf))
        if not hi > lo:
            lo, hi = lo - 0.5, hi + 0.5
        n_bins = min(max_bins, max(5, int(np.sqrt(x.size + y.size))))
        # equal widths given as a count and a range: numpy's fast path, no sort
        hx, bins = np.histogram(x, n_bins, range=(lo, hi))
        hy = np.histogram(y, n_bins, range=(lo, hi))[0]
        top_count = float(max(hx.max(), hy.max(), 1)) * 1.05
        pad = _widest_tick(0, top_count) + 10
        ax = _Axes(c, left + pad, y0 + 22, cell_w - pad - 14, panel_h - 22 - 34, (lo, hi), (0, top_count))
        c.text(ax.x + ax.w / 2, y0 + 8, str(name), size=12, anchor="middle")
        px, base = ax.px(bins), float(ax.py(0))
        outline = [(float(px[0]), base)]
        for i, count in enumerate(hx):
            hy_px = float(ax.py(count))
            outline += [(float(px[i]), hy_px), (float(px[i + 1]), hy_px)]
        outline.append((float(px[-1]), base))
        c.path(outline, fill=_ORIGINAL, opacity=0.35, close=True)
        steps = []
        for i, count in enumerate(hy):
            hy_px = float(ax.py(count))
            steps += [(float(px[i]), hy_px), (float(px[i + 1]), hy_px)]
        c.path(steps, stroke=_RELEASE, width=1.6)
        ax.spines()
        ax.xticks()
        ax.yticks()
    return c.svg()


def _correlation(A: np.ndarray) -> np.ndarray:
    from ._utility import correlation

    return correlation(A)


def _diverging(v: float) -> str:
    """RdBu_r at v in [-1, 1]: interpolated between ColorBrewer's 11 colours."""
    t = (min(max(v, -1.0), 1.0) + 1) / 2 * (len(_RDBU_R) - 1)
    i = min(int(t), len(_RDBU_R) - 2)
    f = t - i
    a, b = _RDBU_R[i], _RDBU_R[i + 1]
    rgb = [round(int(a[k:k + 2], 16) * (1 - f) + int(b[k:k + 2], 16) * f) for k in (1, 3, 5)]
    return "#" + "".join(f"{v:02x}" for v in rgb)


def correlation_before_after(original, masked, names: Sequence[str], *, annotate_up_to: int = 12) -> str:
    """Two heat maps side by side: the Pearson correlation matrices of the original and of the
    release (blue negative, red positive, grey where undefined), values written in the cells
    when there are at most ``annotate_up_to`` columns."""
    names = [str(n) for n in names]
    X, Y = _as_2d(original, names), _as_2d(masked, names)
    p = len(names)
    size = 9 if p > 8 else 10
    label_w = max((_text_width(n, size) for n in names), default=0) + 10
    side = min(_WIDTH / 2 - 60 - label_w, (1.2 + 0.45 * p) * 72 - 30)
    c = _Canvas(side + 30 + label_w * 0.87 + 16)
    for panel, (A, title) in enumerate(((X, "original"), (Y, "release"))):
        C = _correlation(A)
        x0 = 10 + label_w + panel * (_WIDTH / 2 - 40)
        c.text(x0 + side / 2, 12, f"Correlation, {title}", size=12, anchor="middle")
        cell = side / max(p, 1)
        for i in range(p):
            for k in range(p):
                v = C[i, k]
                c.rect(x0 + k * cell, 26 + i * cell, cell + 0.3, cell + 0.3,
                       _diverging(float(v)) if np.isfinite(v) else "#cccccc")
                if p <= annotate_up_to:
                    c.text(x0 + (k + 0.5) * cell, 26 + (i + 0.5) * cell, "—" if not np.isfinite(v) else f"{v:.2f}",
                           size=8 if p > 8 else 9, anchor="middle",
                           fill="#ffffff" if np.isfinite(v) and abs(v) > 0.6 else "#000000")
        for i, name in enumerate(names):
            c.text(x0 - 5, 26 + (i + 0.5) * cell, name, size=size, anchor="end")
            c.text(x0 + (i + 0.5) * cell, 26 + side + 6, name, size=size, anchor="end", rotate=-60)
    # the colour bar, right
    bx, by, bh = _WIDTH - 70, 26, side
    for s in range(40):
        c.rect(bx, by + bh * s / 40, 12, bh / 40 + 0.3, _diverging(1 - 2 * (s + 0.5) / 40))
    for v in (-1.0, -0.5, 0.0, 0.5, 1.0):
        c.text(bx + 16, by + bh * (1 - v) / 2, f"{v:.1f}", size=9)
    c.text(bx + 48, by + bh / 2, "Pearson correlation", size=10, anchor="middle", rotate=90)
    return c.svg()


def class_size_histogram(sizes, *, k: int | None = None, max_bars: int = 40, count: str = "records") -> str:
    """Records (``count="records"``) or classes (``count="classes"``) by the size of their
    equivalence class: one bar per size up to ``max_bars`` distinct sizes, then sizes grouped
    in geometric ranges; with ``k``, bars of sizes below k are drawn in orange."""
    s = np.asarray(sizes, dtype=np.int64).ravel()
    if s.size and s.min() < 1:
        raise ParameterError("class sizes must be positive integers")
    if count not in ("records", "classes"):
        raise ParameterError(f"count must be 'records' or 'classes'; got {count!r}")
    c = _Canvas(3.6 * 72)
    if s.size == 0:
        c.text(_WIDTH / 2, c.height / 2, "no classes", size=11, anchor="middle")
        return c.svg()
    values, counts = np.unique(s, return_counts=True)
    records = values * counts if count == "records" else counts
    if values.size <= max_bars:
        labels = [str(v) for v in values]
        heights = records
    else:
        edges = np.unique(np.geomspace(values[0], values[-1] + 1, max_bars + 1).astype(np.int64))
        which = np.searchsorted(edges, values, side="right") - 1
        heights = np.bincount(which, weights=records, minlength=edges.size - 1)[: edges.size - 1]
        labels = [f"{a}-{b - 1}" if b - 1 > a else str(a) for a, b in zip(edges[:-1], edges[1:])]
        keep = heights > 0
        labels, heights = [lab for lab, m in zip(labels, keep) if m], heights[keep]
    colors = [_RELEASE if k is not None and lab.split("-")[0].isdigit() and int(lab.split("-")[0]) < k
              else _ORIGINAL for lab in labels]
    title = f"{count.capitalize()} by class size ({s.size} classes, smallest {int(s.min())})"
    if k is not None:
        title += f"; k = {k}"
    rotate = 60 if len(labels) > 20 else 0
    size = 9 if len(labels) > 20 else 10
    bottom = (max(_text_width(lab, size) for lab in labels) * 0.87 + 34) if rotate else 40
    top_value = float(max(np.max(heights), 1)) * 1.05
    pad = _widest_tick(0, top_value) + 34
    ax = _Axes(c, pad, 26, _WIDTH - pad - 12, c.height - 26 - bottom, (-0.6, len(labels) - 0.4), (0, top_value))
    c.text(ax.x + ax.w / 2, 12, title, size=12, anchor="middle")
    width = ax.w / (len(labels) + 0.2) * 0.8
    for i, (h, colour) in enumerate(zip(heights, colors)):
        top_px = float(ax.py(h))
        c.rect(float(ax.px(i)) - width / 2, top_px, width, float(ax.py(0)) - top_px, colour)
    ax.spines()
    ax.yticks()
    ax.category_xticks(labels, range(len(labels)), rotate=rotate, size=size)
    c.text(ax.x + ax.w / 2, c.height - 8, "class size", size=11, anchor="middle")
    c.text(12, ax.y + ax.h / 2, count, size=11, anchor="middle", rotate=-90)
    return c.svg()


def _flatten(points: Mapping) -> list[tuple[str, str, float]]:
    """(group, name, value) for every finite number in a flat or a two-level dict."""
    out = []
    for key, value in points.items():
        if isinstance(value, Mapping):
            for name, v in value.items():
                if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and np.isfinite(v):
                    out.append((str(key), str(name), float(v)))
        elif isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) and np.isfinite(value):
            out.append(("", str(key), float(value)))
    return out


def risk_utility_summary(points: Mapping, *, limits: tuple[float, float] | None = None) -> str:
    """Named risk and utility figures as horizontal bars, one panel per group.

    ``points``: ``{"risk": {name: value}, "utility": {name: value}}`` (any group names), or a
    flat ``{name: value}``; non-numeric and undefined (None, NaN) entries are skipped. Each bar
    carries its value; risks are drawn in orange, everything else in blue. ``limits``: a fixed
    axis range (the report's shares: 0 to 1), so that one measure is drawn on the same scale in
    every report; None fits the axis to the values.
    """
    if not isinstance(points, Mapping):
        raise ParameterError("points must be a dict of named figures")
    items = _flatten(points)
    groups = list(dict.fromkeys(g for g, _, _ in items)) or [""]
    most = max(max(1, sum(1 for g, _, _ in items if g == grp)) for grp in groups)
    row_h = 0.38 * 72
    c = _Canvas(0.8 * 72 + row_h * most)
    panel_w = _WIDTH / len(groups)
    for number, grp in enumerate(groups):
        rows = [(n, v) for g, n, v in items if g == grp]
        x0 = number * panel_w
        if not rows:
            c.text(x0 + panel_w / 2, c.height / 2, "no figures", size=11, anchor="middle")
            continue
        color = _RELEASE if "risk" in grp.lower() else _ORIGINAL
        names = [n for n, _ in rows]
        values = np.array([v for _, v in rows])
        span = max(float(np.abs(values).max()), 1e-12) if limits is None else limits[1] - limits[0]
        if limits is not None:
            xlim = (limits[0], limits[1] + 0.18 * span)
        else:
            low = min(0.0, float(values.min()))
            xlim = (low - (0.15 * span if low < 0 else 0), max(0.0, float(values.max())) + 0.18 * span)
        pad = max(_text_width(n, 10) for n in names) + 14
        ax = _Axes(c, x0 + pad, 26, panel_w - pad - 16, row_h * len(rows), xlim, (-0.5, len(rows) - 0.5))
        if grp:
            c.text(ax.x + ax.w / 2, 12, grp, size=12, anchor="middle")
        for i, (_, v) in enumerate(rows):
            y = float(ax.py(len(rows) - 1 - i))  # the first figure on top
            zero, end = float(ax.px(0.0)), float(ax.px(v))
            c.rect(min(zero, end), y - row_h * 0.4, abs(end - zero), row_h * 0.8, color)
            label = f"{100 * v:.3g} %" if limits == (0.0, 1.0) else f"{v:.4g}"
            c.text(end + (3 if v >= 0 else -3), y, label, size=9, anchor="start" if v >= 0 else "end")
        ax.spines()
        ax.xticks()
        ax.category_yticks(names, [len(rows) - 1 - i for i in range(len(rows))])
    return c.svg()


def risk_utility_scatter(points: Sequence[Mapping]) -> str:
    """The risk-utility map: one point per release (``label``, ``risk``, ``loss``), numbered in
    the order given (the report's table names them), the release itself (label "release") in
    orange; both axes fixed from 0 to 1 (shares), so that maps of different releases read alike."""
    c = _Canvas(4.2 * 72, width=_WIDTH / 2)
    ax = _Axes(c, 56, 26, c.width - 56 - 14, c.height - 26 - 44, (0, 1), (0, 1))
    c.text(ax.x + ax.w / 2, 12, "The release and its neighbours", size=12, anchor="middle")
    ax.spines()
    ax.xticks()
    ax.yticks()
    c.text(ax.x + ax.w / 2, c.height - 8, "risk (expected share of records re-identified)", size=10, anchor="middle")
    c.text(12, ax.y + ax.h / 2, "loss (information lost per quasi-identifier)", size=10, anchor="middle",
           rotate=-90)
    for number, p in enumerate(points, start=1):
        own = p["label"] == "release"
        x, y = float(ax.px(p["risk"])), float(ax.py(p["loss"]))
        c.circle(x, y, 4.4 if own else 3.1, _RELEASE if own else _ORIGINAL)
        # neighbours crowd on fixed axes: numbered here, named in the table beside
        c.text(x + 4, y - 3 - 7 * (number % 2), str(number), size=8, middle=False)
    return c.svg()
