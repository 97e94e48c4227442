"""Render the bundled HCSU demo set: single characters, one "hand" per open font.

Output (HCSU release layout)::

    <out>/tie/<calligrapher>-<script>/<char>_<n>.png   + <out>/tie_annotations.json
    <out>/bei/<calligrapher>-<script>/<char>_<n>.png   + <out>/bei_annotations.json
    <out>/MANIFEST.json                                seed, fingerprint, sha256 per file

Every style class is a digital font, never a historical calligrapher: the class names end
in 字库 ("font library") and ``calligrapher_en`` ends in "(font)". Tie images are dark ink
on buff paper with fibres; Bei images imitate an ink-squeeze rubbing (pale graphs on dark,
pitted stone with cracks). Ten characters occur in every class (one of them twice), so the
few-shot anti-leakage rule has shared characters to work on. Images are RGB PNG, 96-160 px
a side, seeded per file, so a fixed ``--seed`` and the same libraries give identical bytes.

Usage: ``python scripts/make_hcsu_demo.py [--out DIR] [--seed N]``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _demo_io as dio
import _render_common as rc

#: Characters every class has (the first one twice); then the pool extras are drawn from.
SHARED = "不之世有在山時長流人"
EXTRA = "以其也年上王高明月清天水日大"
N_EXTRA = 3
#: Grey levels per channel kept in the PNGs (64: invisible banding, ~2x smaller files).
LEVELS = 64


@dataclass(frozen=True)
class Hand:
    """One style class: a font rendered with a fixed stroke weight in one domain."""

    domain: str  # "tie" or "bei"
    font: str  # key in rc.FONTS
    calligrapher: str
    calligrapher_en: str
    script_type: str
    weight: int  # dilation (> 0) or erosion (< 0) radius in px at 128 px glyphs
    stroke_style: str
    ink_style: str
    description: str


_TIE_INK = ("Rendered, not written: near-black ink on buff paper with fine fibres and "
            "speckles; ink density varies a little across the stroke and edges are softened "
            "by a slight bleed; some images are deliberately worn (dry patches, blur).")
_BEI_INK = ("Rendered, not carved: pale grey graphs on a mottled dark ground imitating an "
            "ink-squeeze rubbing, with pits, hairline cracks and worn stroke edges; some "
            "images are deliberately heavily worn.")

HANDS: tuple[Hand, ...] = (
    Hand("tie", "ukai", "文鼎楷体字库", "AR PL UKai (font)", "楷书", 0,
         "Brush-like regular-script strokes drawn by the typeface: pointed entries, pressed "
         "hooks and tapering left-falling strokes, moderate and fairly even weight.", _TIE_INK,
         "A digital Kaiti (regular-script) typeface standing in for a hand: upright, "
         "balanced, slightly loose structure that copies the look of brush regular script; "
         "every instance of a character has the same skeleton, only the rendering varies."),
    Hand("tie", "cwkai", "cwTeX楷体字库", "cwTeX Kai (font)", "楷书", 1,
         "Regular-script strokes with heavier, rounder terminals than AR PL UKai, thickened "
         "by one pixel of dilation; dots are plump and horizontals rise gently.", _TIE_INK,
         "A second digital Kaiti typeface, rendered bold: compact, sturdy regular-script "
         "forms with dense interiors; a font, not a calligrapher, so proportions repeat "
         "exactly from character to character."),
    Hand("tie", "cwfs", "cwTeX仿宋字库", "cwTeX FangSong (font)", "仿宋", 0,
         "Thin, even strokes with small slanted serifs; horizontals tilt up to the right and "
         "verticals stay straight, as in printed imitation-Song type.", _TIE_INK,
         "A FangSong typeface: a print style that imitates Song-dynasty regular script, "
         "narrow and upright with light, uniform strokes; used here as a stand-in hand."),
    Hand("tie", "uming", "文鼎明体字库", "AR PL UMing (font)", "宋体", 1,
         "Printed Ming/Song-type strokes: thin horizontals, thick verticals, triangular "
         "serifs at the ends of horizontals, thickened here by one pixel of dilation.",
         _TIE_INK,
         "A Mingti (Song-style print) typeface, the look of woodblock and movable-type "
         "books rather than handwriting; square, geometric structure with strong "
         "horizontal/vertical contrast."),
    Hand("tie", "notoserif", "思源宋体字库", "Noto Serif CJK TC (font)", "宋体", 0,
         "Modern Song-style strokes: crisp thin horizontals with pronounced wedge serifs, "
         "firm verticals and sharp, clean hooks.", _TIE_INK,
         "A contemporary Song-style (serif) typeface with Traditional Chinese forms: large "
         "open interiors, even spacing and very regular proportions, clearly typeset "
         "rather than written."),
    Hand("bei", "cwyen", "cwTeX圆体字库", "cwTeX Yen (font)", "圆体", 0,
         "Uniform rounded strokes with round ends and no contrast between horizontals and "
         "verticals, which gives a faint echo of the even lines of seal script.", _BEI_INK,
         "A rounded sans-serif (Yuanti) typeface shown as a stone rubbing: soft, even "
         "lines and open structure; a font, so every shared character has the same form."),
    Hand("bei", "cwheib", "cwTeX粗黑字库", "cwTeX HeiBold (font)", "黑体", -1,
         "Very heavy sans-serif strokes of constant width with square ends, thinned by one "
         "pixel of erosion so that interiors stay open after wear.", _BEI_INK,
         "A bold Heiti (sans-serif) typeface shown as a rubbing: blocky, dense characters "
         "with tight interior spaces and a strong, monumental look."),
    Hand("bei", "zenhei", "文泉驿正黑字库", "WenQuanYi Zen Hei (font)", "黑体", 0,
         "Medium-weight sans-serif strokes of even width, squared terminals and simple "
         "straight hooks.", _BEI_INK,
         "A regular-weight Heiti typeface shown as a rubbing: plain, upright and "
         "evenly spaced, the most neutral of the Bei classes."),
    Hand("bei", "notosans_bold", "思源黑体粗字库", "Noto Sans CJK TC Bold (font)", "黑体", 0,
         "Bold sans-serif strokes with slightly flared, optically corrected ends and "
         "generous counters.", _BEI_INK,
         "A bold modern Heiti typeface with Traditional Chinese forms, shown as a rubbing: "
         "wide, squarish characters with large open interiors."),
    Hand("bei", "notoserif_bold", "思源宋体粗字库", "Noto Serif CJK TC Bold (font)", "宋体", 0,
         "Bold Song-style strokes: strong verticals, thinner horizontals ending in heavy "
         "triangular serifs, sharp hooks.", _BEI_INK,
         "A bold Song-style (serif) typeface shown as a stone rubbing: the contrast of "
         "thick verticals and thin horizontals survives the wear, like carved print-style "
         "inscriptions."),
)


def class_dir(hand: Hand) -> str:
    """Folder name ``<calligrapher>-<script>`` of a class."""
    return f"{hand.calligrapher}-{hand.script_type}"


def class_chars(hand: Hand, seed: int) -> list[str]:
    """Characters of one class in file order: shared ones, a repeat, seeded extras."""
    rng = rc.rng_for(seed, class_dir(hand), "characters")
    extras = [EXTRA[i] for i in sorted(rng.choice(len(EXTRA), N_EXTRA, replace=False))]
    return [*SHARED, SHARED[0], *extras]


def render(hand: Hand, ch: str, rng: np.random.Generator, worn: bool) -> np.ndarray:
    """One character image (H, W, 3) float 0–255; ``worn`` gives the heavy degradation."""
    h, w = (int(v) for v in rng.integers(96, 161, 2))
    side = min(h, w)
    g = rc.glyph(hand.font, ch, int(side * rng.uniform(0.78, 0.9)), max(h, w),
                 angle=float(rng.uniform(-3, 3)),
                 shift=(float(rng.uniform(-4, 4)), float(rng.uniform(-4, 4))))
    top, left = (max(h, w) - h) // 2, (max(h, w) - w) // 2
    mask = rc.morph(g[top:top + h, left:left + w], hand.weight)
    if hand.domain == "tie":
        paper = rc.tint(0.7 * rc.fractal_noise(rng, h, w, (48, 12)) + 0.3 * rc.streaks(
            rng, h, w, length=30), (196, 174, 132), (232, 216, 180))
        paper = rc.apply_ink(paper, rc.speckles(rng, h, w, 0.5, 1), (120, 100, 70), 0.5)
        dry = 0.8 + 0.2 * rc.fractal_noise(rng, h, w, (6, 2))
        if worn:
            dry = dry * (rc.fractal_noise(rng, h, w, (8, 2)) > 0.3)
        img = rc.apply_ink(paper, rc.blur(mask, 1.5) * 0.3, (70, 60, 48))
        img = rc.apply_ink(img, mask * dry, (24, 20, 18), 0.95)
        sigma = 1.6 if worn else 0.5
    else:
        stone = rc.tint(rc.fractal_noise(rng, h, w, (40, 10, 3)), (18, 18, 20), (78, 76, 74))
        wear = rc.fractal_noise(rng, h, w, (10, 3)) > (0.42 if worn else 0.22)
        img = rc.apply_ink(stone, mask * wear, (218, 215, 206), 0.95)
        img = rc.apply_ink(img, rc.speckles(rng, h, w, 1.5, 1), (170, 168, 162), 0.6)
        img = rc.apply_ink(img, rc.cracks(rng, h, w, 3 if worn else 1), (190, 188, 182), 0.7)
        sigma = 1.6 if worn else 0.8
    return rc.blur(img, sigma)


def generate(out: Path, seed: int = 0) -> list[Path]:
    """Render every class under ``out`` and write both annotation files; returns files."""
    for hand in HANDS:
        missing = rc.missing_glyphs(hand.font, SHARED + EXTRA)
        if missing:
            raise ValueError(f"font {hand.font} lacks glyphs {missing!r}")
    records: dict[str, list[dict[str, object]]] = {"tie": [], "bei": []}
    written: list[Path] = []
    jobs = [(hand, ch) for hand in HANDS for ch in class_chars(hand, seed)]
    counts: dict[tuple[str, str], int] = {}
    for hand, ch in tqdm(jobs, desc="hcsu demo", file=sys.stderr):
        n = counts[(class_dir(hand), ch)] = counts.get((class_dir(hand), ch), 0) + 1
        rel = f"{class_dir(hand)}/{ch}_{n}.png"
        rng = rc.rng_for(seed, f"{hand.domain}/{rel}", "render")
        worn = bool(rng.random() < 0.15)
        path = out / hand.domain / rel
        dio.save(rc.to_image(render(hand, ch, rng, worn), levels=LEVELS), path)
        written.append(path)
        records[hand.domain].append({
            "filename": rel, "char": ch, "calligrapher": hand.calligrapher,
            "calligrapher_en": hand.calligrapher_en, "dynasty": None, "birth_year": None,
            "death_year": None, "script_type": hand.script_type,
            "source_type": "Tie" if hand.domain == "tie" else "Bei",
            "quality": "blurry" if worn else "clear", "stroke_style": hand.stroke_style,
            "ink_style": hand.ink_style, "description": hand.description,
            "font": rc.FONTS[hand.font].family, "font_package": rc.FONTS[hand.font].package,
            "font_licence": rc.FONTS[hand.font].licence})
    for domain, recs in records.items():
        dio.write_json(out / f"{domain}_annotations.json", recs)
        written.append(out / f"{domain}_annotations.json")
    keys = sorted({h.font for h in HANDS})
    return dio.write_manifest(out, "scripts/make_hcsu_demo.py", seed, keys, written)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; returns the exit status."""
    return dio.demo_main(argv, __doc__, "hcsu", generate)


if __name__ == "__main__":
    raise SystemExit(main())
