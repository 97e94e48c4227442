"""Ancient-Bench dataset statistics: the paper's Table 2 and Fig. 2 from a release folder.

Per medium (release folder, paper order; Ancient-Bench paper section 4.1, Table 2):
images, characters per image (min / median / max of the ground truth's tokens after the
project's normalisation, :func:`~heritage_eval.benchmarks.ancient_bench.normalize.target_tokens`:
punctuation and whitespace dropped, ``<unrecognizable>`` one token), image width and
height in pixels (min / median / max) and distinct source institutions (when the
``conv.jsonl`` lines carry ``institution``); script and period counts likewise.

Media are found, and each ``conv.jsonl`` is read, by the benchmark's own loader
(:func:`~heritage_eval.benchmarks.ancient_bench.loader.find_categories`,
:func:`~heritage_eval.benchmarks.ancient_bench.loader.load_category`), one medium at a
time. Image sizes come from the file header only
(:func:`heritage_eval.core.images.header_size`: no pixel decoded, no image kept), so a
5,000 x 15,000 scan costs the same as a thumbnail; a file whose header cannot be parsed
is a bad item. A file with a valid header but truncated pixel data is *not* detected here
(``heritage-eval validate ancient-bench`` decodes images).
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from heritage_eval.benchmarks.ancient_bench.categories import (
    MEDIA,
    RELEASE_SIZES,
    both_names,
    did_you_mean,
    medium_name,
    read_categories,
)
from heritage_eval.benchmarks.ancient_bench.loader import (
    find_categories,
    load_category,
    load_release,
)
from heritage_eval.benchmarks.ancient_bench.normalize import (
    PROTOCOLS,
    NormalizationFlags,
    target_tokens,
)
from heritage_eval.core.images import PDF_SUFFIXES, header_size
from heritage_eval.core.tables import Cell, Column, Table
from heritage_eval.core.types import Sample
from heritage_eval.curate.stats.output import Problem
from heritage_eval.curate.stats.summary import Summary, counts, summarize

METADATA = ("script", "period", "institution")


@dataclass
class MediumStats:
    """Values gathered for one medium (release folder ``category``).

    ``lines``: samples read from ``conv.jsonl`` (bad lines included); ``characters``:
    tokens per ground truth (lines with a non-empty ground truth); ``widths`` /
    ``heights``: pixels of every image whose header was read; ``metadata``: field ->
    value -> lines; ``problems``: bad items of this medium."""

    category: str
    lines: int = 0
    characters: list[int] = field(default_factory=list)
    widths: list[int] = field(default_factory=list)
    heights: list[int] = field(default_factory=list)
    metadata: dict[str, Counter[str]] = field(
        default_factory=lambda: {k: Counter() for k in METADATA})
    problems: int = 0

    @property
    def images(self) -> int:
        """Images whose size was read (the usable images)."""
        return len(self.widths)


@dataclass
class AncientStats:
    """Statistics of a release at ``root`` under normalisation ``protocol``."""

    root: Path
    protocol: str
    media: dict[str, MediumStats]
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _strip_where(sample: Sample) -> Problem:
    msg = sample.load_error or ""
    where = sample.source or sample.id
    return Problem(where, msg.removeprefix(f"{where}: "))


def _media(root: Path, categories: list[str] | None, warnings: list[str]) -> list[str]:
    found = find_categories(root)
    if not found:
        load_release(root)  # raises the loader's own error (with its parent hint)
    if categories is not None:  # one selection, read as run ancient-bench --categories
        wanted = read_categories(categories)
        missing = [c for c in wanted or () if c not in found]
        if missing:  # the closest folder or paper name suggested, as the loader does
            raise ValueError(f"media not found under {root}: {', '.join(missing)}"
                             f"{did_you_mean(missing, found)} (found: "
                             f"{', '.join(both_names(found))})")
        found = list(wanted or ())
    warnings.extend(f"unknown medium folder {c!r} (not one of the paper's 9 media): counted"
                    for c in found if c not in MEDIA)
    return found


def collect(root: str | Path, protocol: str = "official",
            categories: list[str] | None = None, progress: bool = True) -> AncientStats:
    """Gather the statistics of the release at ``root``.

    ``protocol``: a key of :data:`~heritage_eval.benchmarks.ancient_bench.normalize.PROTOCOLS`
    (``"official"`` default, ``"paper"``); ``categories``: media to include (folder or
    paper names in any case, each value may hold several separated by commas or spaces;
    :func:`~heritage_eval.benchmarks.ancient_bench.categories.read_categories`), counted
    in the paper's order whatever the order given; ``None``: every medium found. Bad
    lines, missing and unreadable images become :class:`~.output.Problem` entries
    (``file:line`` or the image path); the run goes on.
    Raises ``FileNotFoundError`` (no release there, from the loader) and ``ValueError``
    (unknown protocol, an empty selection such as ``[]`` or ``[","]``, a requested
    medium that is not there: named, with the closest medium found and the list).
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown normalisation protocol {protocol!r} "
                         f"(known: {', '.join(PROTOCOLS)})")
    flags = PROTOCOLS[protocol]
    base = Path(root)
    result = AncientStats(base, protocol, {})
    media = _media(base, categories, result.warnings)
    bar = tqdm(total=0, desc="stats ancient-bench", unit="img", file=sys.stderr,
               dynamic_ncols=True, disable=not progress or None)
    try:
        for cat in media:
            samples = load_category(base / cat, warnings=result.warnings, root=base)
            bar.total = (bar.total or 0) + len(samples)
            bar.refresh()
            stats = result.media[cat] = MediumStats(cat)
            for sample in samples:
                _add(stats, sample, flags, result)
                bar.update(1)
    finally:
        bar.close()
    return result


def _add(stats: MediumStats, sample: Sample, flags: NormalizationFlags,
         result: AncientStats) -> None:
    stats.lines += 1
    if sample.target and sample.target.strip():
        stats.characters.append(len(target_tokens(sample.target, flags)))
    for key in METADATA:
        value = sample.metadata.get(key)
        if value not in (None, ""):
            stats.metadata[key][str(value)] += 1
    if sample.load_error:
        stats.problems += 1
        result.problems.append(_strip_where(sample))
        return
    image = Path(sample.image or "")
    if image.suffix.lower() in PDF_SUFFIXES:
        result.warnings.append(f"{sample.source}: {image} is a PDF: its size is not counted")
        return
    size = header_size(image)
    if size is None:
        stats.problems += 1
        result.problems.append(Problem(str(image), "unreadable image: the file header "
                                       f"could not be parsed (line {sample.source})"))
        return
    stats.widths.append(size[0])
    stats.heights.append(size[1])


def _merged(media: dict[str, MediumStats]) -> MediumStats:
    total = MediumStats("overall")
    for m in media.values():
        total.lines += m.lines
        total.characters += m.characters
        total.widths += m.widths
        total.heights += m.heights
        total.problems += m.problems
        for key in METADATA:
            total.metadata[key].update(m.metadata[key])
    return total


def _sizes(m: MediumStats) -> dict[str, Any]:
    pixels = sorted(zip(m.widths, m.heights, strict=True), key=lambda s: (s[0] * s[1], s))
    return {"width_px": summarize(m.widths).as_dict(),
            "height_px": summarize(m.heights).as_dict(),
            "megapixels": summarize([w * h / 1e6 for w, h in pixels]).as_dict(),
            "smallest": f"{pixels[0][0]}x{pixels[0][1]}" if pixels else None,
            "largest": f"{pixels[-1][0]}x{pixels[-1][1]}" if pixels else None}


def medium_record(m: MediumStats) -> dict[str, Any]:
    """The JSON record of one medium (or of the overall merge)."""
    return {"medium": medium_name(m.category) if m.category != "overall" else "Overall",
            "lines": m.lines, "images": m.images, "bad_items": m.problems,
            "release_images": RELEASE_SIZES.get(m.category),
            "characters": summarize(m.characters).as_dict(), **_sizes(m),
            **{f"{k}s": counts(m.metadata[k].elements()) for k in METADATA}}


def to_json(s: AncientStats) -> dict[str, Any]:
    """``stats.json`` body (without the writer's provenance): source, protocol, counts,
    one record per medium and the overall record."""
    overall = _merged(s.media)
    return {"benchmark": "ancient-bench", "command": "stats ancient-bench",
            "source": {"data": str(s.root.resolve())},
            "normalization": {"protocol": s.protocol,
                              "flags": PROTOCOLS[s.protocol].model_dump()},
            "counts": {"media": len(s.media), "lines": overall.lines,
                       "images": overall.images, "bad_items": len(s.problems)},
            "media": {cat: medium_record(m) for cat, m in s.media.items()},
            "overall": medium_record(overall)}


def _num(col: str, label: str, group: str) -> Column:
    return Column(col, label, decimals=0, group=group)


def _range(prefix: str, summary: Summary) -> dict[str, float | None]:
    return {f"{prefix}_min": summary.minimum, f"{prefix}_med": summary.median,
            f"{prefix}_max": summary.maximum}


def table2(s: AncientStats) -> Table:
    """Table 2 layout: one row per medium then Overall; characters, width and height as
    min / median / max (a median of an even count may end in .5 and prints rounded half
    to even); institutions: distinct values (— when no line names one)."""
    cols = [Column("medium", "Medium", kind="text"), Column("folder", "Folder", kind="text"),
            Column("images", "Images", decimals=0), Column("bad", "Bad", decimals=0)]
    for key, group in (("chars", "Characters"), ("w", "Width (px)"), ("h", "Height (px)")):
        cols += [_num(f"{key}_min", "min", group), _num(f"{key}_med", "median", group),
                 _num(f"{key}_max", "max", group)]
    cols.append(Column("inst", "Institutions", decimals=0))
    rows: list[dict[str, Cell | float | str | None]] = []
    for m in [*s.media.values(), _merged(s.media)]:
        overall = m.category == "overall"
        inst = m.metadata["institution"]
        rows.append({"medium": "Overall" if overall else medium_name(m.category),
                     "folder": "" if overall else m.category, "images": m.images,
                     "bad": m.problems, **_range("chars", summarize(m.characters)),
                     **_range("w", summarize(m.widths)), **_range("h", summarize(m.heights)),
                     "inst": len(inst) if inst else None})
    return Table(cols, rows, title="Ancient-Bench: statistics per medium",
                 footnotes=[f"Characters: tokens of the ground truth after the "
                            f"'{s.protocol}' normalisation (punctuation and spaces "
                            "dropped). Width/height from image headers."])


def write_figures(s: AncientStats, out: Path) -> list[str]:
    """Fig. 2-style PNGs: images (and scripts / periods when annotated) per medium,
    text length per medium, image size (megapixels, log scale) per medium."""
    from heritage_eval.curate.stats import figures

    figures.setup_fonts()
    names = {medium_name(c): m for c, m in s.media.items()}
    overall = _merged(s.media)
    panels: list[tuple[str, dict[str, int], str]] = [
        ("images per medium", {k: m.images for k, m in names.items()}, "images")]
    for key in ("script", "period"):
        if overall.metadata[key]:
            panels.append((f"{key}s", counts(overall.metadata[key].elements()), "lines"))
    figures.bar_panels(out / "fig_media.png", "Ancient-Bench: collection overview", panels,
                       keep_order=True)
    figures.histogram_grid(out / "fig_text_length.png",
                           "Ancient-Bench: characters per image, by medium",
                           {k: m.characters for k, m in names.items()}, "characters")
    figures.histogram_grid(out / "fig_resolution.png",
                           "Ancient-Bench: image size by medium (log scale)",
                           {k: [w * h / 1e6 for w, h in zip(m.widths, m.heights, strict=True)]
                            for k, m in names.items()}, "megapixels", log_x=True)
    return ["fig_media.png", "fig_text_length.png", "fig_resolution.png"]
