"""Task 1 — Object Classification: the category (Woman/Man/Girl/Boy/Baby) of a boxed
person. First turn of the affective dialogue; options shuffled."""

from __future__ import annotations

import random

from heritage_eval.benchmarks.muse.annotation import PERSON_CATEGORIES, Character
from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.generators.base import boxed_choice_turn
from heritage_eval.benchmarks.muse.options import CORRECT, Candidate, assemble, pick_distractors
from heritage_eval.benchmarks.muse.questions import QuestionTurn

TASK = "object_classification"


def make_turn(ctx: ImageContext, person: Character, n: int, rng: random.Random) -> QuestionTurn:
    """The turn for ``person`` (``n``: its index, names the drawn-box asset)."""
    k = ctx.params.object_classification.n_options
    pool = [Candidate("other_category", text=c) for c in PERSON_CATEGORIES
            if c != person.category]
    distractors = pick_distractors({"other_category": pool}, ["other_category"], k - 1, rng)
    options, answer = assemble(Candidate(CORRECT, text=person.category), distractors, rng)
    images = ctx.images_for(f"person_{n}_box", [("", person.box)])
    return boxed_choice_turn(
        TASK, f"Look at the person inside the bounding box {ctx.fmt(person.box)} in this "
        "artwork. Which category describes this person best?", images, options, answer,
        ctx.task_params(TASK, person_box=person.box.coco()))
