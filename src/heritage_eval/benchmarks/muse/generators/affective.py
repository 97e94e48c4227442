"""Tasks 1–4 as one dialogue per boxed person: object classification → emotion detection
→ visual clue identification → emotion cause inference. Each turn's question and the
model's own answer stay in the history; each turn is scored on its own.

``depth`` (1–4) is how many turns are wanted (the tasks selected, see ``generate``); a
person whose annotation lacks what a later turn needs (emotion, visual clues, emotion cause)
gets the dialogue up to the last turn it supports, and the missing turn is counted as
skipped. The artwork (and drawn box) is attached to the first turn only.
"""

from __future__ import annotations

from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.generators import (
    emotion_cause_inference,
    emotion_detection,
    object_classification,
    visual_clue_identification,
)
from heritage_eval.benchmarks.muse.generators.base import Generated
from heritage_eval.benchmarks.muse.questions import Question, QuestionTurn
from heritage_eval.benchmarks.muse.taxonomy import AFFECTIVE_DIALOGUE

GROUP = "affective_dialogue"


def generate(ctx: ImageContext, depth: int = 4) -> Generated:
    """One dialogue of up to ``depth`` turns per character of the image."""
    out = Generated()
    if not ctx.ann.characters:
        for task in AFFECTIVE_DIALOGUE[:depth]:
            out.skip(task, "no person box")
        return out
    for n, person in enumerate(ctx.ann.characters):
        rng = ctx.rng(GROUP, n)
        turns: list[QuestionTurn] = [object_classification.make_turn(ctx, person, n, rng)]
        missing = None
        if depth >= 2:
            if person.emotion is None:
                missing = (1, "person without emotion")
            else:
                turns.append(emotion_detection.make_turn(ctx, person, rng))
        if depth >= 3 and missing is None:
            if not person.visual_clues:
                missing = (2, "person without visual clues")
            else:
                turns.append(visual_clue_identification.make_turn(ctx, person))
        if depth >= 4 and missing is None:
            if not person.emotion_cause:
                missing = (3, "person without emotion cause")
            else:
                turns.append(emotion_cause_inference.make_turn(ctx, person))
        if missing is not None:
            for task in AFFECTIVE_DIALOGUE[missing[0]:depth]:
                out.skip(task, missing[1])
        out.questions.append(Question(
            id=ctx.qid(GROUP, n), image_id=ctx.ann.image_id, turns=turns,
            metadata={"person_id": person.id, "person_box": person.box.coco(),
                      "turn_tasks": [t.task for t in turns]}))
    return out
