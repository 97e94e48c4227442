"""Task 9 — Object Count: how many instances of a named object the artwork shows; the
answer is a number (exact match; the parser accepts digits and number words). One
question per annotated count, in name order."""

from __future__ import annotations

from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.generators.base import Generated
from heritage_eval.benchmarks.muse.prompts import join
from heritage_eval.benchmarks.muse.questions import Question, QuestionTurn

TASK = "object_count"


def generate(ctx: ImageContext) -> Generated:
    """One question per ``object_counts`` entry."""
    out = Generated()
    if not ctx.ann.object_counts:
        return out.skip(TASK, "no object count")
    for n, (name, count) in enumerate(sorted(ctx.ann.object_counts.items())):
        prompt = join(
            f"How many instances of \"{name}\" can be seen in this artwork? Count every one, "
            "including those that are small or partly hidden.",
            "Answer with exactly one line and nothing else:\n[count] <a whole number>")
        turn = QuestionTurn(task=TASK, prompt=prompt, images=[ctx.image_ref],
                            answer_format="number", tag="count", answer=count,
                            params=ctx.task_params(TASK))
        out.questions.append(Question(id=ctx.qid(TASK, n), image_id=ctx.ann.image_id,
                                      turns=[turn], metadata={"object": name}))
    return out
