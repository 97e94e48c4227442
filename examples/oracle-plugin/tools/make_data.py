"""Regenerate the bundled demo set: ``src/oracle_demo/data/glyphs.jsonl`` and its PNGs.

The images are *synthetic*: a modern CJK font's character drawn white on a dark,
speckled ground, slightly rotated and eroded, so that it looks like a small rubbing.
They are not oracle-bone forms; the set exists to exercise the plug-in path, not to
measure anything. Deterministic (fixed seed) for a given font file.

Usage: ``python tools/make_data.py [FONT_FILE]`` (default: the first CJK font that
``fc-match :lang=zh`` names). Needs Pillow.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

#: (id, character, period): Dong Zuobin's periods I (Wu Ding) and V (Di Yi-Di Xin).
GLYPHS = [("ob-001", "人", "I"), ("ob-002", "日", "I"), ("ob-003", "月", "I"),
          ("ob-004", "山", "I"), ("ob-005", "水", "V"), ("ob-006", "火", "V"),
          ("ob-007", "木", "V"), ("ob-008", "羊", "V")]
SIDE = 64  # pixels
OUT = Path(__file__).resolve().parents[1] / "src" / "oracle_demo" / "data"


def default_font() -> str:
    """The file of the font ``fc-match :lang=zh`` picks."""
    return subprocess.run(["fc-match", "-f", "%{file}", ":lang=zh"], check=True,
                          capture_output=True, text=True).stdout.strip()


def glyph_image(char: str, font: ImageFont.FreeTypeFont, rng: random.Random) -> Image.Image:
    """One ``SIDE`` x ``SIDE`` greyscale "rubbing" of ``char``."""
    img = Image.new("L", (SIDE, SIDE), 40)
    draw = ImageDraw.Draw(img)
    for _ in range(60):  # speckles of the stone / bone surface
        x, y = rng.randrange(SIDE), rng.randrange(SIDE)
        draw.point((x, y), fill=rng.randrange(20, 90))
    draw.text((SIDE / 2, SIDE / 2), char, fill=225, font=font, anchor="mm")
    img = img.rotate(rng.uniform(-8, 8), fillcolor=40)
    return img.filter(ImageFilter.MinFilter(3)) if rng.random() < 0.5 else img


def main(argv: list[str]) -> int:
    font = ImageFont.truetype(argv[0] if argv else default_font(), size=46)
    rng = random.Random(7)
    (OUT / "images").mkdir(parents=True, exist_ok=True)
    lines = []
    for sid, char, period in GLYPHS:
        rel = f"images/{sid}.png"
        glyph_image(char, font, rng).save(OUT / rel, optimize=True)
        lines.append(json.dumps({"id": sid, "image": rel, "answer": char, "period": period},
                                ensure_ascii=False))
    (OUT / "glyphs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} glyphs to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
