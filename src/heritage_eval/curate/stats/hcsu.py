"""HCSU dataset statistics: images per class and domain, scripts and dynasties (paper Fig. 3).

The release (or any collection in its layout) is read by the benchmark's own loader
(:func:`heritage_eval.benchmarks.hcsu.loader.load_hcsu`: annotation records checked,
every image verified by Pillow without decoding its pixels). Counted per domain (Bei =
stone rubbings, Tie = ink manuscripts; HCSU paper section 3.1): usable images, classes
(calligrapher-script pairs), calligraphers, images per script (the Fig. 3 pies) and per
dynasty and script (the Fig. 3 stacked bars), image sizes from the file headers
(:func:`heritage_eval.core.images.header_size`), and characters written by two or more
classes. An image the loader rejects (missing, corrupt) is a bad item naming its file and
annotation record; a malformed record is a bad item naming the record.
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from heritage_eval.benchmarks.hcsu.schema import DOMAINS, HcsuDataset, HcsuImage
from heritage_eval.core.images import header_size
from heritage_eval.core.tables import Cell, Column, Table
from heritage_eval.curate.stats.output import Problem
from heritage_eval.curate.stats.summary import counts, summarize

NONE = "(none)"
_RECORD = re.compile(r"^(\S+_annotations\.json record \d+): (.*)$", re.DOTALL)


@dataclass
class ClassStats:
    """One class: ``key`` ``"<domain>/<calligrapher>-<script>"``, its labels, ``images``
    (usable), ``unusable`` and the distinct characters of its usable images."""

    key: str
    domain: str
    calligrapher: str
    calligrapher_en: str | None
    script: str
    dynasty: str
    images: int = 0
    unusable: int = 0
    chars: set[str] = field(default_factory=set)


@dataclass
class HcsuStats:
    """Statistics of the collection at ``root``: ``classes`` by key, image ``sizes`` per
    domain (``(width, height)`` pixels), problems and warnings."""

    root: Path
    classes: dict[str, ClassStats]
    sizes: dict[str, list[tuple[int, int]]]
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def domains(self) -> list[str]:
        """Domains holding a class, in the order Bei, Tie (others after, sorted)."""
        present = {c.domain for c in self.classes.values()}
        return [d for d in DOMAINS if d in present] + sorted(present - set(DOMAINS))


def _split_problems(ds: HcsuDataset, result: HcsuStats) -> None:
    image_errors = {i.load_error for i in ds.images if i.load_error}
    for img in ds.images:
        if img.load_error:
            reason = img.load_error.replace(f": {img.path} ", " ")
            result.problems.append(Problem(str(img.path), reason))
    for text in ds.problems:
        if text in image_errors:
            continue
        if "(warning" in text:
            result.warnings.append(text)
            continue
        m = _RECORD.match(text)
        result.problems.append(Problem(m.group(1), m.group(2)) if m
                               else Problem(str(ds.root), text))


def _new_class(img: HcsuImage) -> ClassStats:
    rec = img.record
    extra = rec.model_extra or {}
    en = extra.get("calligrapher_en")
    return ClassStats(img.class_key, img.domain, rec.calligrapher,
                      str(en) if en else None, rec.script_type, rec.dynasty or NONE)


def collect(ds: HcsuDataset, progress: bool = True) -> HcsuStats:
    """Statistics of a loaded dataset (:func:`~heritage_eval.benchmarks.hcsu.loader.load_hcsu`).
    Reads each usable image's header once (progress bar on stderr); never raises for a
    bad image (a header that cannot be parsed is a bad item)."""
    result = HcsuStats(ds.root, {}, defaultdict(list))
    _split_problems(ds, result)
    dynasties: dict[str, Counter[str]] = defaultdict(Counter)
    for img in tqdm(ds.images, desc="stats hcsu", unit="img", file=sys.stderr,
                    dynamic_ncols=True, disable=not progress or None):
        cls = result.classes.get(img.class_key) or result.classes.setdefault(
            img.class_key, _new_class(img))
        if img.load_error:
            cls.unusable += 1
            continue
        size = header_size(img.path)
        if size is None:
            cls.unusable += 1
            result.problems.append(Problem(str(img.path), "unreadable image: the file "
                                           f"header could not be parsed ({img.source})"))
            continue
        cls.images += 1
        cls.chars.add(img.char)
        dynasties[img.class_key][img.record.dynasty or NONE] += 1
        result.sizes[img.domain].append(size)
    for key, cls in result.classes.items():  # the most frequent dynasty of the class
        if dynasties[key]:
            cls.dynasty = min(dynasties[key].items(), key=lambda kv: (-kv[1], kv[0]))[0]
    result.classes = dict(sorted(result.classes.items()))
    return result


def shared_characters(s: HcsuStats) -> list[str]:
    """Characters (``char``) found in the usable images of two or more classes, sorted."""
    seen = Counter(ch for c in s.classes.values() for ch in c.chars if ch.strip())
    return sorted(ch for ch, n in seen.items() if n >= 2)


def by_domain(s: HcsuStats, domain: str) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """``({script: images}, {dynasty: {script: images}})`` of one domain (Fig. 3)."""
    scripts: Counter[str] = Counter()
    stacks: dict[str, Counter[str]] = defaultdict(Counter)
    for c in s.classes.values():
        if c.domain == domain and c.images:
            scripts[c.script] += c.images
            stacks[c.dynasty][c.script] += c.images
    order = sorted(stacks, key=lambda d: (-sum(stacks[d].values()), d))
    return dict(sorted(scripts.items())), {d: dict(stacks[d]) for d in order}


def _class_record(c: ClassStats) -> dict[str, Any]:
    return {"domain": c.domain, "calligrapher": c.calligrapher,
            "calligrapher_en": c.calligrapher_en, "script": c.script, "dynasty": c.dynasty,
            "images": c.images, "unusable": c.unusable, "distinct_characters": len(c.chars)}


def to_json(s: HcsuStats, data: Path) -> dict[str, Any]:
    """``stats.json`` body: source, counts, per-domain and per-class records."""
    domains: dict[str, Any] = {}
    for d in s.domains():
        members = [c for c in s.classes.values() if c.domain == d]
        scripts, stacks = by_domain(s, d)
        sizes = s.sizes.get(d, [])
        domains[d] = {
            "images": sum(c.images for c in members), "classes": len(members),
            "calligraphers": len({c.calligrapher for c in members}),
            "scripts": scripts, "dynasties": counts(
                [dyn for c in members for dyn in [c.dynasty] * c.images]),
            "dynasty_by_script": stacks,
            "width_px": summarize([w for w, _ in sizes]).as_dict(),
            "height_px": summarize([h for _, h in sizes]).as_dict()}
    shared = shared_characters(s)
    return {"benchmark": "hcsu", "command": "stats hcsu",
            "source": {"data": str(data.resolve())},
            "counts": {"domains": len(domains), "classes": len(s.classes),
                       "images": sum(c.images for c in s.classes.values()),
                       "unusable_images": sum(c.unusable for c in s.classes.values()),
                       "calligraphers": len({c.calligrapher for c in s.classes.values()}),
                       "shared_characters": len(shared), "bad_items": len(s.problems)},
            "shared_characters": shared, "domains": domains,
            "classes": {k: _class_record(c) for k, c in s.classes.items()}}


def class_table(s: HcsuStats) -> Table:
    """One row per class: domain, class, calligrapher, script, dynasty, images,
    unusable images, distinct characters."""
    cols = [Column("domain", "Domain", kind="text"), Column("cls", "Class", kind="text"),
            Column("who", "Calligrapher", kind="text"), Column("script", "Script", kind="text"),
            Column("dyn", "Dynasty", kind="text"), Column("n", "Images", decimals=0),
            Column("bad", "Unusable", decimals=0), Column("chars", "Characters", decimals=0)]
    rows: list[dict[str, Cell | float | str | None]] = [
        {"domain": c.domain, "cls": c.key.split("/", 1)[1],
         "who": c.calligrapher + (f" ({c.calligrapher_en})" if c.calligrapher_en else ""),
         "script": c.script, "dyn": c.dynasty, "n": c.images, "bad": c.unusable,
         "chars": len(c.chars)} for c in s.classes.values()]
    return Table(cols, rows, title="HCSU: images per class (calligrapher-script)")


def domain_table(s: HcsuStats) -> Table:
    """One row per domain: images, classes, calligraphers, scripts, dynasties and image
    width / height (min / median / max pixels, from headers)."""
    cols = [Column("domain", "Domain", kind="text"), Column("n", "Images", decimals=0),
            Column("classes", "Classes", decimals=0), Column("who", "Calligraphers", decimals=0),
            Column("scripts", "Scripts", kind="text"), Column("dyn", "Dynasties", kind="text")]
    for key, group in (("w", "Width (px)"), ("h", "Height (px)")):
        cols += [Column(f"{key}_{p}", p, decimals=0, group=group)
                 for p in ("min", "median", "max")]
    rows: list[dict[str, Cell | float | str | None]] = []
    for d in s.domains():
        members = [c for c in s.classes.values() if c.domain == d]
        scripts, stacks = by_domain(s, d)
        row: dict[str, Cell | float | str | None] = {
            "domain": d, "n": sum(c.images for c in members), "classes": len(members),
            "who": len({c.calligrapher for c in members}),
            "scripts": ", ".join(f"{k} {v}" for k, v in scripts.items()),
            "dyn": ", ".join(f"{k} {sum(v.values())}" for k, v in stacks.items())}
        for key, idx in (("w", 0), ("h", 1)):
            sm = summarize([size[idx] for size in s.sizes.get(d, [])])
            row |= {f"{key}_min": sm.minimum, f"{key}_median": sm.median,
                    f"{key}_max": sm.maximum}
        rows.append(row)
    return Table(cols, rows, title="HCSU: images per domain",
                 footnotes=[f"{len(shared_characters(s))} character(s) are written by two "
                            "or more classes."])


def write_figures(s: HcsuStats, out: Path) -> list[str]:
    """Fig. 3-style PNGs: per domain a script pie over a dynasty x script stacked bar
    (``fig_scripts_dynasties.png``), and images per class (``fig_classes.png``)."""
    from heritage_eval.curate.stats import figures
    from heritage_eval.curate.stats.glossary import english

    font = figures.setup_fonts()
    names: dict[str, str] = {}
    for c in s.classes.values():
        if c.calligrapher_en:
            names[c.calligrapher] = c.calligrapher_en
            names[f"{c.calligrapher}-{c.script}"] = f"{c.calligrapher_en}-{english(c.script)}"
    label = figures.labeler(font, names)
    figures.pies_and_stacks(out / "fig_scripts_dynasties.png",
                            "HCSU: scripts (top) and dynasties by script (bottom)",
                            {d: by_domain(s, d) for d in s.domains()}, label)
    panels = [(f"{d}: images per class",
               {c.key.split("/", 1)[1]: c.images for c in s.classes.values() if c.domain == d},
               "images") for d in s.domains()]
    figures.bar_panels(out / "fig_classes.png", "HCSU: images per class", panels, label)
    return ["fig_scripts_dynasties.png", "fig_classes.png"]
