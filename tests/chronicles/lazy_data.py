"""Generated Chronicles-OCR releases with data errors, for the lazy-load tests.

:func:`spoilt_release` writes a release of ``copies`` × the demo set
(:func:`~tests.chronicles.stream_data.write_release`) whose JSONL also holds, at places
drawn with ``random.Random(seed)``, every kind of line the loader words an error for
(not JSON, not an object, no image path, a script outside the seven, an image that is
missing, a repeated image path — of a good row and of a spoilt one), blank and
whitespace lines, a row whose annotation holds U+2028 and U+0085 (line boundaries for
``str.splitlines``, not for JSON Lines: the row is one line), and CRLF line ends on some
lines.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from tests.chronicles.stream_data import JSONL, write_release


def spoilt_lines(good: list[str], seed: int) -> list[str]:
    """``good`` (JSONL lines) with the error lines of the module docstring inserted."""
    rng = random.Random(seed)
    first = json.loads(good[0])
    bad_font = json.dumps({**first, "image_path": "images/x/odd.png", "font_type": "宋体"},
                          ensure_ascii=False)
    extra = [
        "{not json", "[1, 2]", "", "   ", json.dumps({"font_type": "甲骨文"}),
        bad_font, bad_font,  # a spoilt row, then its repeat
        rng.choice(good),  # a repeat of a good row
        json.dumps({**first, "image_path": "images/甲骨文/missing.png"}, ensure_ascii=False),
        json.dumps({**first, "image_path": "images/甲骨文/sep.png",
                    "annotation": "天\u2028下\x85地"}, ensure_ascii=False),
    ]
    lines = list(good)
    for line in extra:
        lines.insert(rng.randrange(len(lines) + 1), line)
    return lines


def spoilt_release(root: Path, copies: int, seed: int) -> Path:
    """The release folder (module docstring); returns it."""
    folder = write_release(root, copies)
    path = folder / JSONL
    good = [line for line in path.read_text(encoding="utf-8").splitlines() if line]
    rng = random.Random(seed + 1000)
    body = b"".join(line.encode("utf-8") + (b"\r\n" if rng.random() < 0.2 else b"\n")
                    for line in spoilt_lines(good, seed))
    path.write_bytes(body)
    return folder
