"""Prompt pieces shared by the MUSE generators (our own wording).

Boxes are shown to the model as normalized COCO coordinates in the prompt text, always
(as in the paper); with ``draw_boxes`` a copy of the image with the boxes drawn is sent as
well. Every prompt ends with a strict answer-format block: tagged lines such as
``[option] B``, ``[emotion] H``, ``[count] 3``.
"""

from __future__ import annotations

from collections.abc import Sequence

from heritage_eval.benchmarks.muse.annotation import Box
from heritage_eval.benchmarks.muse.questions import OptionRecord

BOX_NOTE = ("Bounding boxes are written [x, y, width, height]: (x, y) is the top-left "
            "corner, and every value is a fraction between 0 and 1 of the image width "
            "(x, width) or height (y, height).")
DRAWN_NOTE = "The second image repeats the artwork with these boxes drawn and labelled."


def fmt_box(box: Box | Sequence[float], decimals: int = 3) -> str:
    """``[x, y, w, h]`` with ``decimals`` decimals, e.g. ``[0.227, 0.250, 0.773, 0.634]``."""
    values = box.coco() if isinstance(box, Box) else list(box)
    return "[" + ", ".join(f"{v:.{decimals}f}" for v in values) + "]"


def option_lines(options: Sequence[OptionRecord], decimals: int = 3) -> str:
    """One line per option: ``A. text [box]`` (box only when the option has one)."""
    lines = []
    for opt in options:
        parts = [p for p in (opt.text, fmt_box(opt.box, decimals) if opt.box else None) if p]
        lines.append(f"{opt.label}. {' '.join(parts)}")
    return "\n".join(lines)


def choice_format(tag: str, n_options: int) -> str:
    """Answer-format block for a multiple-choice turn answered with ``[tag] <letter>``."""
    last = chr(ord("A") + n_options - 1)
    return ("Answer with exactly one line and nothing else:\n"
            f"[{tag}] <one letter from A to {last}>")


def open_format(tag: str, what: str) -> str:
    """Answer-format block for an open answer on one tagged line."""
    return f"Answer with exactly one line and nothing else:\n[{tag}] <{what}>"


def join(*blocks: str) -> str:
    """Join non-empty prompt blocks with blank lines."""
    return "\n\n".join(b for b in blocks if b)
