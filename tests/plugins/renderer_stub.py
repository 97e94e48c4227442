"""Viewer renderers as a plug-in declares them, for test_renderer_lookup.py: a function
target, a module target (this module has ``render``), one that raises, one that is not
callable."""

from __future__ import annotations

from typing import Any

from heritage_eval.plugin import SampleRecord

NOT_CALLABLE = "a renderer target that names a string"


def render(record: SampleRecord, ctx: Any) -> str:
    """The answer, escaped, and the record's first image through ``ctx.figure``."""
    turn = record.scored_turn
    image = ctx.figure(record, turn.images[0].path, "glyph") if turn and turn.images else ""
    return f'<p class="stub">{ctx.escape(record.answer)}</p>{image}'


def broken(record: SampleRecord, ctx: Any) -> str:
    raise ValueError("odd <details>")
