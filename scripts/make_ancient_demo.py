"""Render the bundled Ancient-Bench demo set (9 media x 3 images) from open fonts.

Output (official release layout)::

    <out>/<category>/conv.jsonl      {"image": "<category>_00000N.jpg", "human_gt": "<text>"}
    <out>/<category>/images/<category>_00000N.jpg
    <out>/MANIFEST.json              seed, library/font fingerprint, sha256 of every file

Texts are pre-modern, public-domain classics (Analects, Laozi, Thousand Character Classic,
Book of Odes, Lantingji xu, ...) in traditional characters, laid out in vertical columns
read right to left. ``human_gt`` holds exactly the rendered characters, one line per
column, the rightmost column first. Each medium has its own look (bone, bronze rubbing,
bamboo strip, silk, red seal, stele rubbing, cliff stone, woodblock page, brush on paper),
made with procedural textures (numpy / OpenCV) seeded per sample, so a fixed ``--seed``
and the same library versions give byte-identical JPEG files (quality 85, <= 900 px).

Usage: ``python scripts/make_ancient_demo.py [--out DIR] [--seed N]``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _demo_io as dio
import _render_common as rc

G = np.random.Generator
Arr = np.ndarray

#: category -> three samples, each (font key, columns right to left).
SAMPLES: dict[str, list[tuple[str, list[str]]]] = {
    "oracle_bone_artifacts": [  # divination formulas
        ("cwyen", ["癸卯卜", "貞旬亡", "禍"]),
        ("cwyen", ["貞今夕", "其雨"]),
        ("microhei", ["丙午卜", "王占曰", "吉"])],
    "bronze_rubbings": [  # dedication formulas of bronze vessels
        ("cwyen", ["其萬年", "子子孫孫", "永寶用"]),
        ("notosans_bold", ["王命作", "寶尊彝", "用享孝"]),
        ("cwheib", ["唯王正月", "初吉丁亥", "作此寶鼎", "其永用之"])],
    "bamboo_wooden_slips": [  # Analects 1.1, Laozi 1, Thousand Character Classic
        ("ukai", ["學而時習之不亦說乎有朋自遠方來"]),
        ("cwfs", ["道可道非常道名可名非常名"]),
        ("cwkai", ["天地玄黃宇宙洪荒日月盈昃辰宿列張"])],
    "silk_manuscripts": [  # Laozi 8, 33, 2
        ("cwming", ["上善若水水善", "利萬物而不爭", "處眾人之所惡", "故幾於道"]),
        ("ukai", ["知人者智自知", "者明勝人者有", "力自勝者強"]),
        ("uming", ["天下皆知美之", "為美斯惡已皆", "知善之為善斯", "不善已"])],
    "seals": [  # auspicious seal legends; right column first
        ("cwheib", ["長樂", "未央"]),
        ("notoserif_bold", ["壽如", "金石"]),
        ("cwyen", ["千秋", "萬歲"])],
    "inscription_rubbings": [  # Great Learning, Loushi ming, Mencius
        ("uming", ["大學之道在明", "明德在親民在", "止於至善知止"]),
        ("notoserif_bold", ["山不在高有仙", "則名水不在深", "有龍則靈斯是", "陋室惟吾德馨"]),
        ("cwkai", ["天時不如地利", "地利不如人和", "得道者多助失", "道者寡助"])],
    "cliff_carvings": [
        ("ukai", ["高山流水"]),
        ("notoserif_bold", ["海納百川", "有容乃大"]),
        ("cwkai", ["雲深", "不知處"])],
    "traditional_chinese_book_editions": [  # Peach Blossom Spring, Thousand Characters, Red Cliff
        ("uming", ["晉太元中武陵人捕魚為業", "緣溪行忘路之遠近忽逢桃", "花林夾岸數百步中無雜樹",
                   "芳草鮮美落英繽紛漁人甚", "異之復前行欲窮其林"]),
        ("cwming", ["天地玄黃宇宙洪荒日月盈昃", "辰宿列張寒來暑往秋收冬藏",
                    "閏餘成歲律呂調陽雲騰致雨", "露結為霜金生麗水玉出崑岡",
                    "劍號巨闕珠稱夜光果珍李柰", "菜重芥薑海鹹河淡鱗潛羽翔"]),
        ("notoserif", ["壬戌之秋七月既望蘇子", "與客泛舟遊於赤壁之下", "清風徐來水波不興舉酒",
                       "屬客誦明月之詩歌窈窕", "之章少焉月出於東山之", "上徘徊於斗牛之間白露",
                       "橫江水光接天"])],
    "calligraphys": [  # Lantingji xu, Odes: Guanju, Jianjia
        ("ukai", ["永和九年歲在癸丑", "暮春之初會于會稽", "山陰之蘭亭修禊事", "也群賢畢至少長咸"]),
        ("cwkai", ["關關雎鳩在河之洲", "窈窕淑女君子好逑", "參差荇菜左右流之", "窈窕淑女寤寐求之"]),
        ("cwfs", ["蒹葭蒼蒼白露為霜", "所謂伊人在水一方", "溯洄從之道阻且長"])],
}

CATEGORIES = list(SAMPLES)


def _bone(key: str, cols: list[str], rng: G, v: int) -> Arr:
    """Carved strokes on a cracked, yellowed bone plate set on a dark backdrop."""
    mask = rc.layout_columns(cols, key, char=62, pitch_x=86, pitch_y=80, margin=(76, 78),
                             rng=rng, jitter=6, tilt=9, scale_jitter=0.12)
    mask = rc.morph(mask, -1 if key == "cwyen" else 0)
    h, w = mask.shape
    ground = rc.tint(rc.fractal_noise(rng, h, w), (170, 142, 100), (226, 208, 172))
    ground = rc.apply_ink(ground, rc.cracks(rng, h, w, 7, 2), (95, 70, 45), 0.7)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    ellipse = ((xx - w / 2) / (w * 0.56)) ** 2 + ((yy - h / 2) / (h * 0.58)) ** 2
    outside = (ellipse + 0.35 * rc.fractal_noise(rng, h, w, (48, 12)) > 1.1).astype(np.float32)
    img = rc.apply_ink(ground, mask, (70, 45, 25), 0.85)
    img = rc.apply_ink(img, rc.blur(outside, 1.5), (34, 32, 30))
    return rc.add_noise(rng, rc.blur(img, 0.9), 6)


def _bronze(key: str, cols: list[str], rng: G, v: int) -> Arr:
    """Ink-squeeze rubbing of a vessel inscription: pale worn graphs on mottled black."""
    mask = rc.layout_columns(cols, key, char=58, pitch_x=80, pitch_y=74, margin=(60, 56),
                             rng=rng, jitter=5, tilt=6, scale_jitter=0.1)
    h, w = mask.shape
    wear = (rc.fractal_noise(rng, h, w, (16, 4)) > 0.3 + 0.05 * v).astype(np.float32)
    mask = mask * wear * (0.55 + 0.45 * rc.fractal_noise(rng, h, w, (32, 8)))
    ground = rc.tint(rc.fractal_noise(rng, h, w, (48, 12, 3)), (22, 22, 24), (92, 90, 88))
    img = rc.apply_ink(ground, mask, (228, 226, 218))
    img = rc.apply_ink(img, rc.speckles(rng, h, w, 1.2, 1), (200, 200, 195), 0.6)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    rim = ((xx - w / 2) / (w * 0.56)) ** 2 + ((yy - h / 2) / (h * 0.56)) ** 2
    paper = (rim + 0.25 * rc.fractal_noise(rng, h, w, (40, 10)) > 1.15).astype(np.float32)
    img = rc.apply_ink(img, rc.blur(paper, 2.0), (232, 228, 218))
    return rc.add_noise(rng, rc.blur(img, 1.1), 10)


def _bamboo(key: str, cols: list[str], rng: G, v: int) -> Arr:
    """One narrow bamboo strip with fibres and faded brown ink on a dark table."""
    mask = rc.layout_columns(cols, key, char=40, pitch_x=56, pitch_y=50, margin=(8, 34),
                             rng=rng, jitter=2, tilt=3, scale_jitter=0.06)
    h, w = mask.shape
    tex = 0.6 * rc.streaks(rng, h, w, length=140) + 0.4 * rc.fractal_noise(rng, h, w, (24, 6))
    ground = rc.tint(tex, (142, 104, 58), (214, 180, 122))
    edge = np.abs(np.linspace(-1, 1, w, dtype=np.float32)) ** 4
    ground = ground * (1 - 0.45 * edge)[None, :, None]
    fade = 0.34 + 0.45 * rc.fractal_noise(rng, h, w, (30, 8)) - 0.06 * v
    fibres = (rc.streaks(rng, h, w, length=12) > 0.22 + 0.04 * v).astype(np.float32)
    strip = rc.apply_ink(ground, rc.blur(mask * fibres, 0.8) * fade, (44, 30, 18))
    strip = rc.apply_ink(strip, rc.cracks(rng, h, w, 3 + v, 1), (90, 64, 36), 0.7)
    stain = np.clip((rc.fractal_noise(rng, h, w, (60, 15)) - 0.6) * 3, 0, 1)
    strip = rc.apply_ink(strip, stain, (84, 60, 34), 0.7)
    pad = 22
    img = np.full((h, w + 2 * pad, 3), (40, 38, 37), np.float32)
    img[:, pad:pad + w] = strip
    return rc.add_noise(rng, rc.blur(img, 1.0), 6)


def _silk(key: str, cols: list[str], rng: G, v: int) -> Arr:
    """Browned silk with weave, stains, red column rules and faded ink."""
    mask = rc.layout_columns(cols, key, char=42, pitch_x=60, pitch_y=52, margin=(40, 40),
                             rng=rng, jitter=2, tilt=2, scale_jitter=0.05)
    h, w = mask.shape
    ground = rc.tint(rc.fractal_noise(rng, h, w, (64, 16, 4)), (118, 84, 50), (188, 152, 108))
    yy, xx = np.mgrid[0:h, 0:w]
    weave = (((xx % 3) == 0) | ((yy % 3) == 0)).astype(np.float32)
    ground = ground * (1 - 0.07 * weave[..., None])
    stains = np.clip((rc.fractal_noise(rng, h, w, (90, 30)) - 0.6) * 3, 0, 1)
    ground = rc.apply_ink(ground, stains, (80, 52, 30), 0.6)
    rules = np.zeros((h, w), np.float32)
    for i in range(len(cols) + 1):
        x = w - 40 - 60 * i
        rules[20:h - 20, x:x + 1] = 1.0
    ground = rc.apply_ink(ground, rules, (170, 60, 40), 0.5)
    fade = 0.36 + 0.45 * rc.fractal_noise(rng, h, w, (40, 10)) - 0.06 * v
    img = rc.apply_ink(ground, mask * fade, (30, 20, 14))
    holes = (rc.fractal_noise(rng, h, w, (24, 6)) > 0.86 - 0.02 * v).astype(np.float32)
    img = rc.apply_ink(img, rc.blur(holes, 1.2), (38, 28, 20))
    return rc.add_noise(rng, rc.blur(img, 1.2), 8)


def _seal(key: str, cols: list[str], rng: G, v: int) -> Arr:
    """A 2x2 red seal impression: red graphs (v 0, 2) or reserved white graphs (v 1)."""
    cell, border, pad, gw, gh = 108, 14, 56, 84, 102  # glyphs narrower than cells
    side = 2 * cell + 2 * border
    mask = np.zeros((side, side), np.float32)
    for ci, col in enumerate(cols):
        for ri, ch in enumerate(col):
            g = rc.glyph(key, ch, 150, 200)
            ys, xs = np.nonzero(g > 0.1)
            g = g[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
            g = cv2.resize(g, (gw, gh), interpolation=cv2.INTER_AREA)
            x0 = border + (1 - ci) * cell + (cell - gw) // 2
            y0 = border + ri * cell + (cell - gh) // 2
            mask[y0:y0 + gh, x0:x0 + gw] = g
    frame = np.zeros_like(mask)
    cv2.rectangle(frame, (3, 3), (side - 4, side - 4), 1.0, 7)
    red = np.maximum(mask, frame) if v != 1 else np.clip(1 - mask, 0, 1)
    voids = (rc.fractal_noise(rng, side, side, (12, 3)) > 0.78 - 0.04 * v).astype(np.float32)
    red = red * (1 - voids) * (0.8 + 0.2 * rc.fractal_noise(rng, side, side, (20,)))
    angle = float(rng.uniform(-3, 3))
    mat = cv2.getRotationMatrix2D((side / 2, side / 2), angle, 1.0)
    red = cv2.warpAffine(red, mat, (side, side))
    h = w = side + 2 * pad
    full = np.zeros((h, w), np.float32)
    full[pad:pad + side, pad:pad + side] = red
    paper = rc.tint(rc.fractal_noise(rng, h, w, (40, 10)), (214, 200, 172), (240, 232, 212))
    img = rc.apply_ink(paper, full, (182, 36, 32), 0.95)
    return rc.add_noise(rng, rc.blur(img, 0.8), 4)


def _stele(key: str, cols: list[str], rng: G, v: int) -> Arr:
    """Stele rubbing: white graphs worn by the stone, pits and cracks, on black ink."""
    mask = rc.layout_columns(cols, key, char=58, pitch_x=78, pitch_y=72, margin=(50, 50),
                             rng=rng, jitter=2, tilt=2, scale_jitter=0.04)
    h, w = mask.shape
    mask = mask * (rc.fractal_noise(rng, h, w, (12, 3)) > 0.36 + 0.04 * v).astype(np.float32)
    ground = rc.tint(rc.fractal_noise(rng, h, w, (60, 15, 4)), (14, 14, 16), (70, 70, 72))
    img = rc.apply_ink(ground, mask, (224, 222, 214), 0.95)
    img = rc.apply_ink(img, rc.speckles(rng, h, w, 1.5, 2), (180, 180, 176), 0.7)
    img = rc.apply_ink(img, rc.cracks(rng, h, w, 6 + 2 * v, 2), (200, 198, 192), 0.8)
    return rc.add_noise(rng, rc.blur(img, 1.4 + 0.2 * v), 14)


def _cliff(key: str, cols: list[str], rng: G, v: int) -> Arr:
    """Large graphs cut into rough, lichen-spotted rock, seen by their groove shadows."""
    mask = rc.layout_columns(cols, key, char=118, pitch_x=150, pitch_y=142, margin=(60, 60),
                             rng=rng, jitter=4, tilt=3, scale_jitter=0.06)
    h, w = mask.shape
    ground = rc.tint(rc.fractal_noise(rng, h, w, (128, 32, 8, 2), 0.6), (88, 84, 78),
                     (182, 174, 160))
    lichen = np.clip((rc.fractal_noise(rng, h, w, (50, 12)) - 0.62) * 4, 0, 1)
    ground = rc.apply_ink(ground, lichen, (110, 122, 84), 0.55)
    ground = rc.apply_ink(ground, rc.cracks(rng, h, w, 6, 3), (60, 56, 52), 0.8)
    shadow = np.roll(mask, (3, 3), axis=(0, 1))
    light = np.roll(mask, (-2, -2), axis=(0, 1))
    img = rc.apply_ink(ground, light * (1 - mask), (225, 220, 210), 0.35)
    img = rc.apply_ink(img, shadow * (1 - light), (40, 36, 32), 0.45)
    groove = (150, 52, 40) if v == 2 else (96, 90, 84)
    wear = 0.5 + 0.5 * rc.fractal_noise(rng, h, w, (20, 5))
    img = rc.apply_ink(img, mask * wear, groove, 0.35)
    return rc.add_noise(rng, rc.blur(img, 1.6), 12)


def _edition(key: str, cols: list[str], rng: G, v: int) -> Arr:
    """Woodblock-printed page: ruled frame and column lines, black ink on yellowed paper."""
    px, py, m = 54, 48, 36
    ncol = len(cols) + 2  # two blank ruled columns at the left, as on a real half-folio
    mask = rc.layout_columns(cols, key, char=38, pitch_x=px, pitch_y=py, margin=(m, m),
                             rng=rng, jitter=1, tilt=0.5)
    wide = np.zeros((mask.shape[0], mask.shape[1] + 2 * px), np.float32)
    wide[:, 2 * px:] = mask
    h, w = wide.shape
    lines = np.zeros((h, w), np.float32)
    cv2.rectangle(lines, (m - 14, m - 14), (w - m + 13, h - m + 13), 1.0, 4)
    cv2.rectangle(lines, (m - 7, m - 7), (w - m + 6, h - m + 6), 1.0, 1)
    for i in range(1, ncol):
        x = m + px * i
        lines[m - 7:h - m + 6, x:x + 1] = 1.0
    paper = rc.tint(rc.fractal_noise(rng, h, w, (80, 20, 5)), (206, 184, 140), (236, 222, 190))
    paper = rc.apply_ink(paper, rc.speckles(rng, h, w, 0.6, 1), (150, 130, 100), 0.4)
    ink = rc.morph(wide, 1 if key == "uming" else 0) * (0.85 + 0.15 * rc.fractal_noise(
        rng, h, w, (8,)))
    img = rc.apply_ink(paper, np.maximum(ink, lines * 0.9), (26, 22, 20))
    holes = rc.blur(rc.speckles(rng, h, w, 0.05, 7), 1.0)
    img = rc.apply_ink(img, holes, (120, 96, 66), 0.8)
    return rc.add_noise(rng, rc.blur(img, 0.6), 4)


def _calligraphy(key: str, cols: list[str], rng: G, v: int) -> Arr:
    """Brush writing on xuan paper: irregular placement, ink bleed and dry patches."""
    mask = rc.layout_columns(cols, key, char=60, pitch_x=74, pitch_y=58, margin=(56, 50),
                             rng=rng, jitter=6, tilt=10, scale_jitter=0.22, drift=3.0 + v)
    h, w = mask.shape
    paper = rc.tint(0.7 * rc.fractal_noise(rng, h, w, (90, 20)) + 0.3 * rc.streaks(
        rng, h, w, vertical=bool(v % 2), length=40), (214, 202, 172), (242, 236, 218))
    full = rc.morph(mask, 1 + v // 2)
    bleed = rc.blur(full, 2.5) * 0.45
    dry = 0.55 + 0.45 * rc.fractal_noise(rng, h, w, (6, 2))
    img = rc.apply_ink(paper, bleed, (60, 54, 48))
    img = rc.apply_ink(img, full * dry, (22, 20, 18), 0.95)
    return rc.add_noise(rng, rc.blur(img, 0.9), 5)


RENDERERS: dict[str, Callable[[str, list[str], G, int], Arr]] = {
    "oracle_bone_artifacts": _bone, "bronze_rubbings": _bronze, "bamboo_wooden_slips": _bamboo,
    "silk_manuscripts": _silk, "seals": _seal, "inscription_rubbings": _stele,
    "cliff_carvings": _cliff, "traditional_chinese_book_editions": _edition,
    "calligraphys": _calligraphy,
}

MAX_SIDE = 900


def font_keys() -> list[str]:
    """Every font key the demo set uses."""
    return sorted({key for samples in SAMPLES.values() for key, _ in samples})


def check_fonts() -> None:
    """Locate every font and check it has every glyph; raises FontMissingError / ValueError."""
    for samples in SAMPLES.values():
        for key, cols in samples:
            rc.locate_font(key)
            missing = rc.missing_glyphs(key, "".join(cols))
            if missing:
                raise ValueError(f"font {key} lacks glyphs {missing!r}")


def generate(out: Path, seed: int = 0) -> list[Path]:
    """Render all 27 images and conv.jsonl files under ``out``; returns the files written."""
    check_fonts()
    written: list[Path] = []
    jobs = [(cat, i, key, cols) for cat in CATEGORIES
            for i, (key, cols) in enumerate(SAMPLES[cat])]
    rows: dict[str, list[dict[str, str]]] = {cat: [] for cat in CATEGORIES}
    for cat, i, key, cols in tqdm(jobs, desc="ancient demo", file=sys.stderr):
        name = f"{cat}_{i + 1:06d}.jpg"
        rng = rc.rng_for(seed, f"{cat}/{name}", "render")
        img = rc.fit_long_side(rc.to_image(RENDERERS[cat](key, cols, rng, i)), MAX_SIDE)
        path = out / cat / "images" / name
        dio.save(img, path)
        written.append(path)
        rows[cat].append({"image": name, "human_gt": "\n".join(cols)})
    for cat in CATEGORIES:
        dio.write_json(out / cat / "conv.jsonl", rows[cat], lines=True)
        written.append(out / cat / "conv.jsonl")
    return dio.write_manifest(out, "scripts/make_ancient_demo.py", seed, font_keys(), written)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; returns the exit status."""
    return dio.demo_main(argv, __doc__, "ancient_bench", generate)


if __name__ == "__main__":
    raise SystemExit(main())
