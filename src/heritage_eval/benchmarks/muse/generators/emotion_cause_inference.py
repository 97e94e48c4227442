"""Task 4 — Emotion Cause Inference: open answer, why the person feels the emotion the
model identified (fourth turn). Reference: the annotators' emotion cause."""

from __future__ import annotations

from heritage_eval.benchmarks.muse.annotation import Character
from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.prompts import join, open_format
from heritage_eval.benchmarks.muse.questions import QuestionTurn

TASK = "emotion_cause_inference"


def make_turn(ctx: ImageContext, person: Character) -> QuestionTurn:
    """The turn for ``person``; requires ``person.emotion_cause`` (``ValueError``)."""
    if not person.emotion_cause:
        raise ValueError(f"person {person.id} has no emotion cause")
    prompt = join(
        "Given the artwork, that person and the clues you described, what most likely "
        "causes the emotion you identified? Explain from what the picture shows.",
        open_format("emotion cause", "the most likely cause, in one sentence"))
    return QuestionTurn(task=TASK, prompt=prompt, answer_format="open", tag="emotion cause",
                        answer=person.emotion_cause, params=ctx.task_params(TASK))
