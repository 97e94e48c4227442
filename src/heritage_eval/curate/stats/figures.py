"""PNG figures of ``stats``: bar panels, histogram grids, pie + stacked-bar grids.

Drawn with matplotlib's object API (:class:`matplotlib.figure.Figure`, Agg renderer; no
pyplot state), saved atomically (temporary file + rename). Han characters need a CJK
font: ``setup_fonts`` picks one with :func:`heritage_eval.report.fonts.cjk_family` (or any
family whose name says CJK / Han / Hei / Song / Kai / Ming); without one, labels are
shown by their English names (:func:`.glossary.english`) so that no box glyph is drawn.
"""

from __future__ import annotations

import math
import os
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from matplotlib import rcParams
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullLocator

from heritage_eval.core.atomic_write import file_mode
from heritage_eval.curate.stats.glossary import english
from heritage_eval.report.fonts import cjk_family

DPI = 130
#: Bars in one panel before the rest are summed into "(others)".
MAX_BARS = 30
Labeler = Callable[[str], str]


def setup_fonts() -> str | None:
    """Use an installed CJK font for every figure drawn after this call (DejaVu Sans as
    fallback for Latin text); returns its family name, or ``None`` when there is none."""
    found = cjk_family()
    rcParams["font.family"] = "sans-serif"
    rcParams["font.sans-serif"] = ([found] if found else []) + ["DejaVu Sans"]
    return found


def labeler(cjk_font: str | None, english_names: Mapping[str, str] | None = None) -> Labeler:
    """The function giving a label's text in a figure: unchanged with a CJK font, else
    the English name (``english_names`` first, e.g. calligrapher names)."""
    if cjk_font:
        return lambda s: s
    names = dict(english_names or {})
    return lambda s: english(s, names.get(s))


def save(fig: Figure, path: Path) -> None:
    """Write ``fig`` as PNG to ``path`` atomically (at :data:`DPI`; the figures use
    matplotlib's constrained layout, so nothing is cut off)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as fh, warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Glyph .* missing")
            fig.savefig(fh, format="png", dpi=DPI)
        os.chmod(tmp, file_mode())  # the umask's mode, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _top(counts: Mapping[str, int]) -> dict[str, int]:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(items) <= MAX_BARS:
        return dict(items)
    head = dict(items[:MAX_BARS - 1])
    head["(others)"] = sum(v for _, v in items[MAX_BARS - 1:])
    return head


def bar_panels(path: Path, title: str,
               panels: Sequence[tuple[str, Mapping[str, int], str]],
               label: Labeler = str, keep_order: bool = False) -> None:
    """Horizontal bar charts side by side, one per ``(subtitle, {label: count},
    x-axis label)``; bars sorted by count (``keep_order``: in the mapping's order), at
    most :data:`MAX_BARS` per panel, each bar annotated with its count."""
    tallest = max((len(_top(c)) for _, c, _ in panels), default=1)
    fig = Figure(figsize=(5.2 * len(panels), 1.2 + 0.32 * max(tallest, 3)),
                 layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (subtitle, counts, xlabel) in zip(axes, panels, strict=True):
        shown = dict(counts) if keep_order and len(counts) <= MAX_BARS else _top(counts)
        names = [label(k) for k in shown][::-1]
        values = list(shown.values())[::-1]
        ax.barh(range(len(values)), values, color="#4C72B0")
        ax.set_yticks(range(len(values)), names, fontsize=8)
        for i, v in enumerate(values):
            ax.text(v, i, f" {v}", va="center", fontsize=7)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_title(subtitle, fontsize=9)
        ax.margins(x=0.15)
        if not values:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
    fig.suptitle(title, fontsize=10)
    save(fig, path)


def _edges(values: Sequence[float], bins: int, log_x: bool, integer: bool) -> list[float]:
    """Bin edges covering every value (the largest included): ``bins`` equal steps
    (logarithmic with ``log_x``); whole-number values over a short range get one bin
    per value, centred on it."""
    lo, hi = min(values), max(values)
    if log_x:
        if hi <= lo:
            return [lo / 1.5, lo * 1.5]
        a, b = math.log10(lo), math.log10(hi)
        edges = [10 ** (a + k * (b - a) / bins) for k in range(bins + 1)]
        edges[0], edges[-1] = lo * (1 - 1e-9), hi * (1 + 1e-9)
        return edges
    if integer and hi - lo + 1 <= 2 * bins:
        return [lo - 0.5 + k for k in range(int(hi - lo) + 2)]
    if hi <= lo:
        return [lo - 0.5, lo + 0.5]
    return [lo + k * (hi - lo) / bins for k in range(bins)] + [hi * (1 + 1e-9) + 1e-12]


def histogram_grid(path: Path, title: str, groups: Mapping[str, Sequence[float]],
                   xlabel: str, log_x: bool = False, bins: int = 20,
                   label: Labeler = str, ylabel: str = "images") -> None:
    """One histogram per group (e.g. per medium) in a grid of up to 3 columns, each
    titled ``"<group> (n=N)"``, all on the same bins and x axis so that groups compare.
    ``log_x``: logarithmic bins and axis (values must be > 0; others are left out).
    Whole-number data over a short range get one bar per value."""
    names = list(groups)
    cols = min(3, max(1, len(names)))
    rows = max(1, math.ceil(len(names) / cols))
    kept = {n: [v for v in groups[n] if not log_x or v > 0] for n in names}
    every = [v for vs in kept.values() for v in vs]
    integer = all(float(v).is_integer() for v in every)
    edges = _edges(every, bins, log_x, integer) if every else None
    # tick labels at 1, 2, 5 x 10^k over a short log range, at powers of 10 otherwise
    subs = (1.0, 2.0, 5.0) if every and log_x and max(every) < 100 * min(every) else (1.0,)
    fig = Figure(figsize=(4.0 * cols, 2.6 * rows + 0.6), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True)
    for i, ax in enumerate(axes.flat):
        if i >= len(names):
            ax.set_visible(False)
            continue
        values = kept[names[i]]
        ax.set_title(f"{label(names[i])} (n={len(values)})", fontsize=9)
        if log_x:
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(LogLocator(subs=subs))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_locator(NullLocator())
        if values and edges:
            ax.hist(values, bins=edges, color="#4C72B0", edgecolor="white", linewidth=0.4)
        else:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.tick_params(labelsize=7, labelbottom=True)
    fig.suptitle(title, fontsize=10)
    save(fig, path)


#: One domain of :func:`pies_and_stacks`: ``({script: n}, {dynasty: {script: n}})``.
DomainCounts = tuple[Mapping[str, int], Mapping[str, Mapping[str, int]]]


def pies_and_stacks(path: Path, title: str, domains: Mapping[str, DomainCounts],
                    label: Labeler = str) -> None:
    """The HCSU Fig. 3 layout: one column per domain; top, a pie of the script shares;
    bottom, images per dynasty stacked by script. ``domains``: name -> (``{script:
    images}``, ``{dynasty: {script: images}}``)."""
    names = list(domains)
    scripts = sorted({s for pie, _ in domains.values() for s in pie})
    colours = {s: f"C{i % 10}" for i, s in enumerate(scripts)}
    fig = Figure(figsize=(4.4 * max(1, len(names)), 7.0), layout="constrained")
    axes = fig.subplots(2, max(1, len(names)), squeeze=False)
    for j, name in enumerate(names):
        pie, stacks = domains[name]
        top, bottom = axes[0][j], axes[1][j]
        shares = [s for s in scripts if pie.get(s)]
        top.pie([pie[s] for s in shares], labels=[label(s) for s in shares],
                colors=[colours[s] for s in shares], autopct="%1.0f%%",
                textprops={"fontsize": 8}, startangle=90, counterclock=False)
        top.set_title(f"{name}: scripts ({sum(pie.values())} images)", fontsize=9)
        dynasties = list(stacks)
        base = [0] * len(dynasties)
        for s in scripts:
            heights = [stacks[d].get(s, 0) for d in dynasties]
            if any(heights):
                bottom.bar(range(len(dynasties)), heights, bottom=base, color=colours[s],
                           label=label(s))
                base = [b + h for b, h in zip(base, heights, strict=True)]
        bottom.set_xticks(range(len(dynasties)), [label(d) for d in dynasties],
                          rotation=30, ha="right", fontsize=8)
        bottom.set_ylabel("images", fontsize=8)
        bottom.set_title(f"{name}: dynasties", fontsize=9)
        bottom.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncols=2,
                      frameon=False)
    fig.suptitle(title, fontsize=10)
    save(fig, path)
