"""Prompt pieces shared by the MUSE generators (our own wording).

Boxes are shown to the model as normalized COCO coordinates in the prompt text, always
(as in the paper); with ``draw_boxes`` a copy of the image with the boxes drawn is sent as
well. Every prompt ends with a strict answer-format block: tagged lines such as
``[option] B``, ``[emotion] H``, ``[count] 3`` — except, with ``answer_style="paper"`` (the
default), the tasks whose paper prompt asks for the bare letter (App. B.1 cultural
identification, B.2 jigsaw puzzle; :data:`LETTER_ONLY_TASKS`): :func:`letter_format`.
The parser reads both forms for every task.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from heritage_eval.benchmarks.muse.annotation import Box
from heritage_eval.benchmarks.muse.questions import OptionRecord
from heritage_eval.core.prompt_templates import TemplateSet

BOX_NOTE = ("Bounding boxes are written [x, y, width, height]: (x, y) is the top-left "
            "corner, and every value is a fraction between 0 and 1 of the image width "
            "(x, width) or height (y, height).")
DRAWN_NOTE = "The second image repeats the artwork with these boxes drawn and labelled."
#: The shared templates a ``muse generate --prompts FILE`` can replace (the ``muse``
#: section of ``heritage-eval prompts dump``); generators read them through
#: :func:`template` when they build a prompt. Task questions are worded in each generator.
TEMPLATES = TemplateSet("muse", {"box_note": BOX_NOTE, "drawn_note": DRAWN_NOTE})


def template(name: str) -> str:
    """The shared template ``name`` in use (``box_note``, ``drawn_note``)."""
    return TEMPLATES.get(name)


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


#: ``paper``: the paper's per-task answer forms where it gives them (App. B.1–B.3);
#: ``tagged``: a ``[option] <letter>`` line for every multiple-choice task.
AnswerStyle = Literal["paper", "tagged"]
#: Tasks whose paper prompt asks for a single capital letter and nothing else.
LETTER_ONLY_TASKS: tuple[str, ...] = ("cultural_identification", "jigsaw_puzzle")


def letter_format(n_options: int) -> str:
    """Answer-format block asking for the bare option letter (paper App. B.1–B.2 form),
    e.g. ``… one of A, B, C or D …`` for 4 options."""
    letters = [chr(ord("A") + i) for i in range(n_options)]
    listed = ", ".join(letters[:-1]) + f" or {letters[-1]}" if n_options > 1 else letters[0]
    return ("Exactly one option is right. Reply with its capital letter only "
            f"({listed}): no other text, punctuation or explanation.")


def answer_block(task: str, style: AnswerStyle, n_options: int, tag: str = "option") -> str:
    """The answer-format block of a multiple-choice turn of ``task``:
    :func:`letter_format` for :data:`LETTER_ONLY_TASKS` under the ``paper`` style, else
    :func:`choice_format` with ``tag``."""
    if style == "paper" and task in LETTER_ONLY_TASKS:
        return letter_format(n_options)
    return choice_format(tag, n_options)


def open_format(tag: str, what: str) -> str:
    """Answer-format block for an open answer on one tagged line."""
    return f"Answer with exactly one line and nothing else:\n[{tag}] <{what}>"


def join(*blocks: str) -> str:
    """Join non-empty prompt blocks with blank lines."""
    return "\n\n".join(b for b in blocks if b)
