"""One answer parser for every benchmark: option letters, tagged open answers, JSON.

The rule — what is accepted, refused and flagged, with its order of precedence — is
written down in ``docs/answer-extraction.md``. Modules:

- :mod:`.parsing_base`: :class:`Parsed` (value, reason, method, flags), answer blocks,
  JSON objects, ``<res>`` block flags;
- :mod:`.parsing_choice`: :func:`parse_choice` (option labels), with the written forms
  of a declaration in :mod:`.parsing_forms`;
- :mod:`.parsing_values`: counts (:func:`~.parsing_values.parse_number`) and relative
  positions;
- :mod:`.answer_text`: the normalisation steps (invisible format characters and reasoning
  dropped, markdown / LaTeX wrappers removed, full-width folded, quotes around a label
  removed).

Each function returns a :class:`Parsed`: ``value`` (a label, an int, a text or a dict) or
``None`` with ``reason`` saying why nothing valid was found, and ``flags`` naming anything
unusual met on the way (several answer blocks, a revision, a hedge …). The caller turns a
failed parse into the ``unparsed`` outcome (counted wrong and in the invalid rate) and
puts the flags into ``details["parse_flags"]``; nothing here ever guesses an option.
"""

from __future__ import annotations

import re

from heritage_eval.core.answer_text import clean_answer, fold_width, normalize_text, prepare_answer
from heritage_eval.core.answer_text import strip_markup as strip_markup  # re-exported
from heritage_eval.core.parsing_base import (
    SEVERAL_BLOCKS,
    Parsed,
    _fail,
    _tag_contents,
    block_flags,
    flag_details,
    parse_json_object,
)
from heritage_eval.core.parsing_choice import BOX_TOLERANCE, parse_choice
from heritage_eval.core.parsing_values import MAX_COUNT, parse_number, parse_position

__all__ = ["BOX_TOLERANCE", "MAX_COUNT", "Parsed", "_fail", "_tag_contents", "block_flags",
           "clean_answer", "flag_details", "fold_width", "normalize_text",
           "parse_choice", "parse_json_object", "parse_number", "parse_position",
           "parse_tagged", "prepare_answer", "strip_markup"]


def parse_tagged(text: str, tag: str) -> Parsed:
    """The open answer after ``[tag]`` (e.g. ``[visual clues] the raised brows …``).

    Decision: if no ``[tag]`` is present and the answer carries no other bracketed tag,
    the whole cleaned answer is taken (``method="untagged"``): open answers are scored by
    meaning, and a model that omits the tag still answered the question. An answer that
    only carries *other* tags (``[emotion] Joy`` when visual clues were asked) or is empty
    is unparsed. Several ``[tag]`` sections are joined with a space and flagged
    ``several_blocks``.
    """
    body = clean_answer(text)
    if not body:
        return _fail("empty response")
    parts = [p for p in _tag_contents(body, [tag]) if p]
    if parts:
        return Parsed(" ".join(parts), None, "tag",
                      (SEVERAL_BLOCKS,) if len(parts) > 1 else ())
    if _tag_contents(body, [tag]):
        return _fail(f"[{tag}] present but empty")
    other = re.findall(r"\[([^\]\n]{1,40})\]", body)
    if other:
        return _fail(f"expected [{tag}], found only [{other[0]}]")
    return Parsed(body, None, "untagged")
