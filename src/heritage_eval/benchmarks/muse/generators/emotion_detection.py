"""Task 2 — Emotion Detection: the emotion of the boxed person among the 11 MUSE labels
(second turn of the affective dialogue); options shuffled."""

from __future__ import annotations

import random

from heritage_eval.benchmarks.muse.annotation import EMOTIONS, Character
from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.options import CORRECT, Candidate, assemble, pick_distractors
from heritage_eval.benchmarks.muse.prompts import choice_format, join, option_lines
from heritage_eval.benchmarks.muse.questions import QuestionTurn

TASK = "emotion_detection"


def make_turn(ctx: ImageContext, person: Character, rng: random.Random) -> QuestionTurn:
    """The turn for ``person``; requires ``person.emotion`` (``ValueError`` otherwise)."""
    if person.emotion is None:
        raise ValueError(f"person {person.id} has no emotion")
    k = ctx.params.emotion_detection.n_options
    pool = [Candidate("other_emotion", text=e) for e in EMOTIONS if e != person.emotion]
    distractors = pick_distractors({"other_emotion": pool}, ["other_emotion"], k - 1, rng)
    options, answer = assemble(Candidate(CORRECT, text=person.emotion), distractors, rng)
    prompt = join(
        f"Same artwork, same person (bounding box {ctx.fmt(person.box)}). Which emotion "
        "does this person show?",
        "Options:\n" + option_lines(options),
        choice_format("emotion", len(options)))
    return QuestionTurn(task=TASK, prompt=prompt, answer_format="choice", tag="emotion",
                        options=options, answer=answer, params=ctx.task_params(TASK))
