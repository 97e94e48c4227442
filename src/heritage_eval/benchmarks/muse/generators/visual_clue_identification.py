"""Task 3 — Visual Clue Identification: open answer, the visible evidence for the emotion
the model itself gave in turn 2 (its answer is in the dialogue history, and the prompt
names it as ``[emotion] <label>``, filled at run time by :mod:`.dialogue_fill`, paper
App. B.3). Reference: the annotators' visual clues; scored by embedding similarity."""

from __future__ import annotations

from heritage_eval.benchmarks.muse.annotation import Character
from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.generators.dialogue_fill import EMOTION_SLOT
from heritage_eval.benchmarks.muse.prompts import join, open_format
from heritage_eval.benchmarks.muse.questions import QuestionTurn

TASK = "visual_clue_identification"


def make_turn(ctx: ImageContext, person: Character) -> QuestionTurn:
    """The turn for ``person``; requires ``person.visual_clues`` (``ValueError``)."""
    if not person.visual_clues:
        raise ValueError(f"person {person.id} has no visual clues")
    prompt = join(
        f"Still looking at the person in bounding box {ctx.fmt(person.box)}: what can be "
        "seen in the picture that supports the emotion you identified? Point to concrete "
        "visible details such as the face, gaze, posture, gestures or nearby things.",
        f"[emotion] {EMOTION_SLOT}",
        open_format("visual clues", "the visible evidence, in one or two sentences"))
    return QuestionTurn(task=TASK, prompt=prompt, answer_format="open", tag="visual clues",
                        answer=person.visual_clues, params=ctx.task_params(TASK))
