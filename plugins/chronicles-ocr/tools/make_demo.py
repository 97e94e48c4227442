"""Regenerate the bundled Chronicles-OCR demo set in the official data layout.

Writes ``src/chronicles_ocr/demo/Chronicles_OCR.jsonl`` and
``src/chronicles_ocr/demo/images/<script>/<name>.png``: three images for each of the
seven scripts (甲骨文 金文 篆书 隶书 楷书 行书 草书), 21 in all.

The images are *synthetic renderings*: characters of openly licensed CJK fonts
(Noto CJK, AR PL UKai, cwTeX, all shipped by Debian) drawn in columns read from right
to left on a plain ground with a few marks. No font here is an oracle-bone, bronze or
seal face, so those three scripts only *look* the part (bone-coloured ground with
cracks, a dark rubbing, a red seal); they are not real artifacts and measure nothing.

Each row has the official fields: ``image_path`` (relative to the jsonl's folder),
``font_type`` (the script), ``annotation`` (the modern characters in reading order,
with ``[UNK]`` / ``□`` where a glyph is undeciphered or damaged); the three ancient
scripts add ``spotting`` (``[{"bbox": {"x1", "y1", "x2", "y2"}, "modern_char"}]``,
integer pixels of the square each glyph was drawn into, so known exactly) and
``width`` / ``height``. Glyphs are drawn in traditional forms, annotated in simplified
ones (``modern_char``), as an editor of an ancient text would.

Deterministic: every random choice comes from ``random.Random(f"{SEED}:{name}")``; the
json does not depend on the font files (boxes are the drawing cells), the pixels do.

Usage: ``python plugins/chronicles-ocr/tools/make_demo.py [OUT_DIR]`` (needs Pillow and
the Debian packages fonts-noto-cjk, fonts-arphic-ukai, fonts-cwtex-*).
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

SEED = 20260511
OUT = Path(__file__).resolve().parents[1] / "src" / "chronicles_ocr" / "demo"
FONTS = Path("/usr/share/fonts")
UNK_LABELS = ("[UNK]", "□")

#: A glyph: (form drawn, modern character written in the annotation). A modern
#: character of "[UNK]" / "□" marks an undeciphered or damaged glyph.
Glyph = tuple[str, str]


@dataclass(frozen=True)
class Style:
    """How one script is drawn: font (file, face index, size as a share of the cell),
    ink / ground colours, horizontal stretch of the cell, shear of the glyph."""

    font: str
    index: int
    ink: tuple[int, int, int]
    ground: tuple[int, int, int]
    stretch: float = 1.0
    shear: float = 0.0
    size: float = 0.86
    marks: str = "none"  # "cracks", "rubbing", "seal", "paper"


STYLES: dict[str, Style] = {
    "甲骨文": Style("truetype/cwtex/cwyen.ttf", 0, (92, 60, 34), (226, 208, 172), marks="cracks"),
    "金文": Style("opentype/noto/NotoSerifCJK-Bold.ttc", 2, (214, 210, 196), (46, 48, 44),
                marks="rubbing"),
    "篆书": Style("opentype/noto/NotoSansCJK-Regular.ttc", 2, (178, 34, 30), (246, 238, 222),
                marks="seal"),
    "隶书": Style("opentype/noto/NotoSerifCJK-Bold.ttc", 2, (24, 22, 20), (238, 230, 210),
                stretch=1.3, size=0.8, marks="paper"),
    "楷书": Style("truetype/arphic/ukai.ttc", 0, (18, 18, 18), (242, 236, 220), marks="paper"),
    "行书": Style("truetype/cwtex/cwkai.ttf", 0, (20, 20, 26), (236, 228, 206), shear=0.18,
                marks="paper"),
    "草书": Style("truetype/arphic/ukai.ttc", 0, (30, 24, 20), (240, 232, 214), shear=0.34,
                marks="paper"),
}


@dataclass(frozen=True)
class Item:
    """One image: its script, file stem, columns (right to left, each top to bottom),
    size in pixels, cell side, gaps, and an annotation override (punctuation …).
    ``even``: snap every coordinate to an even number (images whose 0–1000 scaled
    coordinates must be integers, for the IoU probes); ``damaged``: glyphs (column,
    row) half wiped out."""

    script: str
    name: str
    columns: tuple[tuple[Glyph, ...], ...]
    width: int
    height: int
    cell: int
    gap: int = 6
    annotation: str | None = None
    even: bool = False
    damaged: tuple[tuple[int, int], ...] = ()


def g(drawn: str, modern: str | None = None) -> tuple[Glyph, ...]:
    """Glyphs of ``drawn`` (one per character) annotated with ``modern`` (same length;
    default: the same characters)."""
    mods = list(drawn if modern is None else modern)
    assert len(mods) == len(drawn), (drawn, modern)
    return tuple(zip(drawn, mods, strict=True))


def unk(drawn: str, label: str = "[UNK]") -> tuple[Glyph, ...]:
    """One undeciphered glyph: drawn as ``drawn``, annotated as ``label``."""
    return ((drawn, label),)


ITEMS: tuple[Item, ...] = (
    # 甲骨文: a divination formula; a charge with one undeciphered graph; a fragment
    # whose graphs are all undeciphered (no recognition target).
    Item("甲骨文", "jiaguwen-01", (g("癸卯卜貞", "癸卯卜贞"), g("旬亡禍", "旬亡祸")),
         200, 250, 44, even=True),
    Item("甲骨文", "jiaguwen-02", (g("王占曰吉"), g("其") + unk("鬯") + g("雨")), 173, 262, 48),
    Item("甲骨文", "jiaguwen-03", (unk("夒") + unk("龠", "□") + unk("卣"),), 120, 200, 52),
    # 金文: a closing formula with repeated characters; a gift record; a damaged line.
    Item("金文", "jinwen-01", (g("子子孫孫", "子子孙孙"), g("永寶用", "永宝用")), 250, 400, 70,
         gap=10, even=True),
    Item("金文", "jinwen-02", (g("王賜貝十", "王赐贝十"), g("朋用乍")), 211, 337, 56),
    Item("金文", "jinwen-03", (g("對揚", "对扬"), unk("亯", "□") + g("休")), 160, 230, 58),
    # 篆书: a square seal (read right column first), a tile legend, a mirror legend.
    Item("篆书", "zhuanshu-01", (g("受命於天", "受命于天"), g("既壽永昌", "既寿永昌")),
         200, 200, 38, gap=4, even=True),
    Item("篆书", "zhuanshu-02", (g("千秋"), g("萬歲", "万岁")), 150, 150, 56),
    Item("篆书", "zhuanshu-03", (g("長毋相忘", "长毋相忘"),), 80, 290, 58),
    # 隶书
    Item("隶书", "lishu-01", (g("天地玄黃", "天地玄黄"), g("宇宙洪荒")), 190, 250, 48),
    Item("隶书", "lishu-02", (g("大吉羊"), g("宜侯王")), 180, 190, 50),
    Item("隶书", "lishu-03", (g("延年益壽", "延年益□"), g("長樂未央", "长乐未央")), 190, 250, 48,
         damaged=((0, 3),)),
    # 楷书 (one annotation keeps the editor's punctuation)
    Item("楷书", "kaishu-01", (g("學而時", "学而时"), g("習之不", "习之不"), g("亦說乎", "亦说乎")),
         200, 180, 50),
    Item("楷书", "kaishu-02", (g("有朋自遠方", "有朋自远方"), g("來不亦樂乎", "来不亦乐乎")),
         140, 290, 50, annotation="有朋自远方来，不亦乐乎"),
    Item("楷书", "kaishu-03", (g("人不知"), g("而不慍", "而不愠")), 140, 180, 50),
    # 行书
    Item("行书", "xingshu-01", (g("永和九年"), g("歲在癸丑", "岁在癸丑")), 150, 240, 50),
    Item("行书", "xingshu-02", (g("群賢畢至", "群贤毕至"), g("少長咸集", "少长咸集")),
         150, 240, 50),
    Item("行书", "xingshu-03", (g("此地有崇"), g("山峻嶺", "山峻岭")), 150, 240, 50),
    # 草书
    Item("草书", "caoshu-01", (g("床前明"), g("月光")), 140, 190, 52),
    Item("草书", "caoshu-02", (g("白日依"), unk("山") + g("盡", "尽")), 140, 190, 52,
         damaged=((1, 0),)),
    Item("草书", "caoshu-03", (g("春眠不"), g("覺曉", "觉晓")), 140, 190, 52),
)

ANCIENT = ("甲骨文", "金文", "篆书")
PINYIN = {"甲骨文": "jiaguwen", "金文": "jinwen", "篆书": "zhuanshu", "隶书": "lishu",
          "楷书": "kaishu", "行书": "xingshu", "草书": "caoshu"}


def layout(item: Item, rng: random.Random) -> list[tuple[Glyph, tuple[int, int, int, int]]]:
    """Where each glyph goes, in reading order: ``(glyph, (x1, y1, x2, y2))`` in pixels.

    Columns are centred as a block, the first one on the right; each glyph cell is
    ``cell * stretch`` wide and ``cell`` high, jittered by up to 2 px."""
    style = STYLES[item.script]
    cw = round(item.cell * style.stretch)
    ncol = len(item.columns)
    nrow = max(len(c) for c in item.columns)
    block_w = ncol * cw + (ncol - 1) * item.gap
    block_h = nrow * item.cell + (nrow - 1) * item.gap
    left = (item.width - block_w) // 2
    top = (item.height - block_h) // 2
    assert left >= 4 and top >= 4, f"{item.name}: cells do not fit"
    out = []
    for ci, column in enumerate(item.columns):
        x0 = left + (ncol - 1 - ci) * (cw + item.gap)
        for ri, glyph in enumerate(column):
            x = x0 + rng.choice((-2, 0, 2))
            y = top + ri * (item.cell + item.gap) + rng.choice((-2, 0, 2))
            if item.even:
                x, y = x - x % 2, y - y % 2
            box = (x, y, x + cw, y + item.cell)
            assert box[0] >= 0 and box[2] <= item.width and box[3] <= item.height, item.name
            out.append((glyph, box))
    return out


def _font(style: Style, px: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONTS / style.font), size=px, index=style.index)


def _has_glyph(font: ImageFont.FreeTypeFont, ch: str) -> bool:
    """False when ``font`` would draw ``ch`` as its missing-glyph box."""
    def ink(c: str) -> bytes:
        tile = Image.new("L", (int(font.size * 1.5),) * 2, 0)
        ImageDraw.Draw(tile).text((2, 2), c, fill=255, font=font)
        return tile.tobytes()

    return ink(ch) != ink("\ue000")


def glyph_tile(ch: str, style: Style, w: int, h: int) -> Image.Image:
    """An ``L`` mask ``w`` x ``h`` with ``ch`` drawn in it (stretched, sheared)."""
    side = h
    font = _font(style, round(side * style.size))
    if not _has_glyph(font, ch):
        raise SystemExit(f"font {style.font} has no glyph for {ch!r}")
    tile = Image.new("L", (side, side), 0)
    ImageDraw.Draw(tile).text((side / 2, side / 2), ch, fill=255, font=font, anchor="mm")
    if style.shear:
        tile = tile.transform(tile.size, Image.Transform.AFFINE,
                              (1, style.shear, -style.shear * side / 2, 0, 1, 0),
                              resample=Image.Resampling.BILINEAR)
    if w != side:
        tile = tile.resize((w, h), Image.Resampling.BILINEAR)
    return tile


def ground(item: Item, rng: random.Random) -> Image.Image:
    """The plain ground of one image with its marks (cracks, speckles, seal frame)."""
    style = STYLES[item.script]
    img = Image.new("RGB", (item.width, item.height), style.ground)
    draw = ImageDraw.Draw(img)
    w, h = item.width, item.height
    shade = tuple(max(0, c - 38) for c in style.ground)
    light = tuple(min(255, c + 30) for c in style.ground)
    if style.marks == "cracks":
        for _ in range(3):
            x, y = rng.randrange(w), rng.randrange(h)
            pts = [(x, y)]
            for _ in range(5):
                x += rng.randint(-25, 25)
                y += rng.randint(-25, 25)
                pts.append((x, y))
            draw.line(pts, fill=shade, width=1)
    if style.marks in ("rubbing", "cracks", "paper"):
        n = 220 if style.marks == "rubbing" else 60
        for _ in range(n):
            x, y = rng.randrange(w), rng.randrange(h)
            draw.point((x, y), fill=light if style.marks == "rubbing" else shade)
    if style.marks == "seal":
        draw.rectangle((2, 2, w - 3, h - 3), outline=style.ink, width=3)
    return img


def render(item: Item) -> tuple[Image.Image, list[dict[str, object]], str]:
    """The image, its spotting list and its annotation."""
    rng = random.Random(f"{SEED}:{item.name}")
    style = STYLES[item.script]
    placed = layout(item, rng)
    img = ground(item, rng)
    damaged = set()
    for ci, column in enumerate(item.columns):
        for ri, _glyph in enumerate(column):
            if (ci, ri) in item.damaged:
                damaged.add(sum(len(c) for c in item.columns[:ci]) + ri)
    spotting: list[dict[str, object]] = []
    tokens: list[str] = []
    for k, (glyph, (x1, y1, x2, y2)) in enumerate(placed):
        tile = glyph_tile(glyph[0], style, x2 - x1, y2 - y1)
        img.paste(Image.new("RGB", tile.size, style.ink), (x1, y1), tile)
        if k in damaged:  # a worn patch over the lower part of the glyph
            ImageDraw.Draw(img).ellipse((x1 + 4, y1 + (y2 - y1) // 3, x2 - 4, y2 - 2),
                                        fill=style.ground)
        tokens.append(glyph[1])
        spotting.append({"bbox": {"x1": x1, "y1": y1, "x2": x2, "y2": y2},
                         "modern_char": glyph[1]})
    return img, spotting, item.annotation or "".join(tokens)


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else OUT
    rows = []
    for item in ITEMS:
        img, spotting, annotation = render(item)
        assert PINYIN[item.script] in item.name
        rel = f"images/{item.script}/{item.name}.png"
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        img.convert("P", palette=Image.Palette.ADAPTIVE, colors=32).save(out / rel, optimize=True)
        row: dict[str, object] = {"image_path": rel, "font_type": item.script,
                                  "annotation": annotation}
        if item.script in ANCIENT:
            row.update(spotting=spotting, width=item.width, height=item.height)
        rows.append(json.dumps(row, ensure_ascii=False))
    (out / "Chronicles_OCR.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {len(rows)} rows and images to {out} ({size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
