"""The report's figures, each an inline SVG string (matplotlib's SVG backend; no file, no link).

Figures are sized to be read at 1280 px wide: 13.33 in at 96 px per inch, text of 11-12 pt.
Bars and heat maps stay small in SVG (heat maps are embedded images, histograms have at most
``max_bins`` bins); the only URLs in the text are XML namespace names.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import math
import re
import threading
from typing import Mapping, Sequence

import numpy as np

from ..exceptions import ParameterError

WIDTH_IN = 1280 / 96  # inches, so that the SVG's natural width is 1280 px
_ORIGINAL, _RELEASE = "#4c72b0", "#dd8452"
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)


_LOCK = threading.Lock()  # matplotlib's rcParams are global: one figure is drawn at a time


def _matplotlib():
    try:
        import matplotlib
    except ImportError as exc:  # an optional dependency (the "bench" extra)
        raise ParameterError("figures need matplotlib: pip install matplotlib") from exc
    return matplotlib


@contextlib.contextmanager
def _drawing():
    """The module's style, under the lock. Figures are built from ``matplotlib.figure.Figure``
    (no pyplot: no global figure registry, no GUI backend, safe in the web server's threads)."""
    mpl = _matplotlib()
    with _LOCK, mpl.rc_context(_style()):
        yield


def _subplots(rows: int, cols: int, figsize, **kw):
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    return fig, fig.subplots(rows, cols, **kw)


def _style():
    return {
        "font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "legend.fontsize": 10,
        "svg.fonttype": "none",  # text stays text: smaller, selectable, scales cleanly
        "svg.hashsalt": "incrowd",  # ids that do not change from run to run
        "font.family": "sans-serif", "font.sans-serif": ["DejaVu Sans"],  # one name per text element
        "axes.spines.top": False, "axes.spines.right": False,
    }


def _to_svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    return _inline(buf.getvalue())


_PROLOG = re.compile(r"^.*?(?=<svg)", re.S)
_DECIMALS = re.compile(r"(\d+\.\d{2})\d+")


def _inline(svg: str) -> str:
    """Ready to paste into HTML: no XML prolog or DOCTYPE (a DTD URL), no RDF metadata (it names
    creativecommons.org and purl.org), SVG 2 ``href`` instead of the xlink namespace, and
    coordinates in tags rounded to 1/100 px (text content is left as drawn)."""
    svg = _PROLOG.sub("", svg, count=1)
    svg = _METADATA.sub("", svg)
    svg = svg.replace(' xmlns:xlink="http://www.w3.org/1999/xlink"', "").replace("xlink:href=", "href=")
    svg = re.sub(r"<[^>]+>", lambda m: _DECIMALS.sub(r"\1", m.group(0)), svg)
    # ids unique per figure: several figures share one HTML document, and matplotlib's ids
    # (hashes of clip boxes and markers) repeat across figures
    prefix = "f" + hashlib.sha1(svg.encode()).hexdigest()[:8] + "-"
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)
    svg = re.sub(r'url\(#([^)]+)\)', lambda m: f"url(#{prefix}{m.group(1)})", svg)
    return re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}{m.group(1)}"', svg)


def _as_2d(values, names) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    arr = arr[:, None] if arr.ndim == 1 else arr
    if arr.shape[1] != len(names):
        raise ParameterError(f"names has {len(names)} entries for {arr.shape[1]} columns")
    return arr


def histograms_before_after(original, masked, names: Sequence[str], *, max_bins: int = 30,
                            columns: int = 4) -> str:
    """One small multiple per quasi-identifier: the original's histogram and the release's,
    on the same bins (from the original's and release's common range), as step outlines."""
    names = list(names)
    X, Y = _as_2d(original, names), _as_2d(masked, names)
    p = max(len(names), 1)
    cols = min(columns, p)
    rows = math.ceil(p / cols)
    with _drawing():
        fig, axes = _subplots(rows, cols, (WIDTH_IN, 2.8 * rows + 0.6), squeeze=False)
        for j, name in enumerate(names):
            ax = axes[j // cols][j % cols]
            x, y = X[:, j], Y[:, j]
            x, y = x[np.isfinite(x)], y[np.isfinite(y)]
            if x.size + y.size == 0:
                ax.set_title(f"{name} (no values)")
                continue
            lo = float(min(x.min() if x.size else np.inf, y.min() if y.size else np.inf))
            hi = float(max(x.max() if x.size else -np.inf, y.max() if y.size else -np.inf))
            if not hi > lo:
                lo, hi = lo - 0.5, hi + 0.5
            n_bins = min(max_bins, max(5, int(np.sqrt(x.size + y.size))))
            # counted here (equal widths given as a count and a range: numpy's fast path, no
            # sort) and drawn as stairs: matplotlib's hist is slow on a million rows
            hx, bins = np.histogram(x, n_bins, range=(lo, hi))
            hy = np.histogram(y, n_bins, range=(lo, hi))[0]
            ax.stairs(hx, bins, fill=True, alpha=0.35, color=_ORIGINAL, label="original")
            ax.stairs(hy, bins, linewidth=1.6, color=_RELEASE, label="release")
            ax.set_title(str(name))
            ax.tick_params(labelsize=9)
        for j in range(p, rows * cols):
            axes[j // cols][j % cols].set_visible(False)
        handles, labels = axes[0][0].get_legend_handles_labels()
        if handles:
            fig.legend(handles, labels, loc="upper right", ncols=2, frameon=False)
        fig.suptitle("Quasi-identifiers before and after", x=0.01, ha="left")
        fig.tight_layout(rect=(0, 0, 1, 0.97))
        return _to_svg(fig)


def _correlation(A: np.ndarray) -> np.ndarray:
    from ._utility import correlation

    return correlation(A)


def correlation_before_after(original, masked, names: Sequence[str], *, annotate_up_to: int = 12) -> str:
    """Two heat maps side by side: the Pearson correlation matrices of the original and of the
    release (blue negative, red positive, grey where undefined), values written in the cells
    when there are at most ``annotate_up_to`` columns."""
    names = [str(n) for n in names]
    X, Y = _as_2d(original, names), _as_2d(masked, names)
    p = len(names)
    side = min(WIDTH_IN / 2 - 0.5, 1.2 + 0.45 * p)
    with _drawing():
        fig, axes = _subplots(1, 2, (WIDTH_IN, side + 0.8))
        cmap = _matplotlib().colormaps["RdBu_r"].with_extremes(bad="#cccccc")
        image = None
        for ax, A, title in ((axes[0], X, "original"), (axes[1], Y, "release")):
            C = _correlation(A)
            image = ax.imshow(np.ma.masked_invalid(C), cmap=cmap, vmin=-1, vmax=1, interpolation="nearest")
            ax.set_title(f"Correlation, {title}")
            ax.set_xticks(range(p), names, rotation=60, ha="right", fontsize=9 if p > 8 else 10)
            ax.set_yticks(range(p), names, fontsize=9 if p > 8 else 10)
            if p <= annotate_up_to:
                for i in range(p):
                    for k in range(p):
                        v = C[i, k]
                        ax.text(k, i, "—" if not np.isfinite(v) else f"{v:.2f}", ha="center", va="center",
                                fontsize=8 if p > 8 else 9, color="white" if np.isfinite(v) and abs(v) > 0.6 else "black")
        fig.colorbar(image, ax=list(axes), shrink=0.8, label="Pearson correlation")
        return _to_svg(fig)


def class_size_histogram(sizes, *, k: int | None = None, max_bars: int = 40, count: str = "records") -> str:
    """Records (``count="records"``) or classes (``count="classes"``) by the size of their
    equivalence class: one bar per size up to ``max_bars`` distinct sizes, then sizes grouped
    in geometric ranges; with ``k``, bars of sizes below k are drawn in orange."""
    s = np.asarray(sizes, dtype=np.int64).ravel()
    if s.size and s.min() < 1:
        raise ParameterError("class sizes must be positive integers")
    if count not in ("records", "classes"):
        raise ParameterError(f"count must be 'records' or 'classes'; got {count!r}")
    with _drawing():
        fig, ax = _subplots(1, 1, (WIDTH_IN, 3.6))
        if s.size == 0:
            ax.text(0.5, 0.5, "no classes", ha="center", va="center", transform=ax.transAxes)
        else:
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
                labels, heights = [l for l, m in zip(labels, keep) if m], heights[keep]
            colors = [_RELEASE if k is not None and lab.split("-")[0].isdigit() and int(lab.split("-")[0]) < k
                      else _ORIGINAL for lab in labels]
            ax.bar(range(len(labels)), heights, color=colors)
            ax.set_xticks(range(len(labels)), labels, rotation=60 if len(labels) > 20 else 0,
                          fontsize=9 if len(labels) > 20 else 10)
            ax.set_xlabel("class size")
            ax.set_ylabel(count)
            title = f"{count.capitalize()} by class size ({s.size} classes, smallest {int(s.min())})"
            if k is not None:
                title += f"; k = {k}"
            ax.set_title(title)
        fig.tight_layout()
        return _to_svg(fig)


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
    heights = [max(1, sum(1 for g, _, _ in items if g == grp)) for grp in groups]
    with _drawing():
        fig, axes = _subplots(1, len(groups), (WIDTH_IN, 0.8 + 0.38 * max(heights)), squeeze=False)
        for ax, grp in zip(axes[0], groups):
            rows = [(n, v) for g, n, v in items if g == grp]
            color = _RELEASE if "risk" in grp.lower() else _ORIGINAL
            if not rows:
                ax.text(0.5, 0.5, "no figures", ha="center", va="center", transform=ax.transAxes)
                ax.set_axis_off()
                continue
            names = [n for n, _ in rows][::-1]
            values = np.array([v for _, v in rows][::-1])
            ax.barh(range(len(rows)), values, color=color)
            ax.set_yticks(range(len(rows)), names)
            span = max(float(np.abs(values).max()), 1e-12) if limits is None else limits[1] - limits[0]
            for i, v in enumerate(values):
                label = f"{100 * v:.3g} %" if limits == (0.0, 1.0) else f"{v:.4g}"
                ax.text(v + 0.01 * span * (1 if v >= 0 else -1), i, label, va="center",
                        ha="left" if v >= 0 else "right", fontsize=9)
            if limits is not None:
                ax.set_xlim(limits[0], limits[1] + 0.18 * span)
            else:
                low = min(0.0, float(values.min()))
                ax.set_xlim(low - (0.15 * span if low < 0 else 0), max(0.0, float(values.max())) + 0.18 * span)
            if grp:
                ax.set_title(grp)
        fig.tight_layout()
        return _to_svg(fig)


def risk_utility_scatter(points: Sequence[Mapping]) -> str:
    """The risk-utility map: one point per release (``label``, ``risk``, ``loss``), numbered in
    the order given (the report's table names them), the release itself (label "release") in
    orange; both axes fixed from 0 to 1 (shares), so that maps of different releases read alike."""
    with _drawing():
        fig, ax = _subplots(1, 1, (WIDTH_IN / 2, 4.2))
        for number, p in enumerate(points, start=1):
            own = p["label"] == "release"
            ax.scatter([p["risk"]], [p["loss"]], s=60 if own else 30, color=_RELEASE if own else _ORIGINAL,
                       zorder=3 if own else 2)
            # neighbours crowd on fixed axes: numbered here, named in the table beside
            ax.annotate(str(number), (p["risk"], p["loss"]), textcoords="offset points",
                        xytext=(4, 3 + 7 * (number % 2)), fontsize=8)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("risk (expected share of records re-identified)")
        ax.set_ylabel("loss (information lost per quasi-identifier)")
        ax.set_title("The release and its neighbours")
        fig.tight_layout()
        return _to_svg(fig)
