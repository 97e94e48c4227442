"""The options of ``heritage-eval score chronicles-ocr``: :class:`ScoreOptions`, the
run's options plus where the recorded answers are.

Its own module, apart from the scoring code (:mod:`chronicles_ocr.scoring`), because
``score chronicles-ocr --help`` needs only this class (the plug-in declares it as
``score_options``): the records, judges and the engine are imported when the command
runs, not when its options are built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from chronicles_ocr.options import Options
from heritage_eval.plugin import UsageError, opt


class ScoreOptions(Options):
    """Options of ``score chronicles-ocr``: the run's (``--data``, ``--tasks``,
    ``--scripts``, ``--protocol``, ``--seed``) plus where the recorded answers are."""

    predictions: Annotated[Path, opt(
        "the official infer_results folder: <model_tag>/results.jsonl per model (or one "
        "results.jsonl; its folder's name is the tag)", metavar="DIR")]
    models: Annotated[tuple[str, ...] | str | None, opt(
        "only these model tags (default: every subfolder holding results.jsonl); several "
        "as 'a,b' or 'a b'", metavar="TAG")] = None

    def model_tags(self) -> tuple[str, ...] | None:
        """The chosen tags: every value split on commas, spaces around a piece and empty
        pieces dropped, a tag named twice kept once (``None``: every tag). Raises
        ``UsageError`` when ``models`` is given but names no tag."""
        if self.models is None:
            return None
        values = [self.models] if isinstance(self.models, str) else self.models
        tags = tuple(dict.fromkeys(p.strip() for v in values for p in v.split(",")
                                   if p.strip()))
        if not tags:
            raise UsageError("--models: no model tag given")
        return tags
