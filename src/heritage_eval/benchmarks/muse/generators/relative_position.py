"""Task 10 — Relative Position: where entity A is relative to entity B, in A's own frame
of reference (A's left/right and front/back, not the viewer's), on three dimensions:
lateral left/none/right, depth front/none/back, vertical above/none/under. One turn,
answer format ``position`` with three tagged lines."""

from __future__ import annotations

from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.generators.base import Generated, box_note
from heritage_eval.benchmarks.muse.prompts import join
from heritage_eval.benchmarks.muse.questions import Question, QuestionTurn

TASK = "relative_position"

FORMAT = ("Answer with exactly these three lines and nothing else:\n"
          "[lateral] <left, none or right>\n"
          "[depth] <front, none or back>\n"
          "[vertical] <above, none or under>")


def generate(ctx: ImageContext) -> Generated:
    """One question per annotated relative position."""
    out = Generated()
    ann = ctx.ann
    if not ann.relative_positions:
        return out.skip(TASK, "no relative position")
    for n, rel in enumerate(ann.relative_positions):
        a, b = ann.region(rel.a), ann.region(rel.b)
        images = ctx.images_for(f"{TASK}_{n}", [("A", a.box), ("B", b.box)])
        prompt = join(
            f"A is the {ann.entity_text(rel.a)} in bounding box {ctx.fmt(a.box)}; B is the "
            f"{ann.entity_text(rel.b)} in bounding box {ctx.fmt(b.box)}.",
            box_note(images),
            "Describe where A is relative to B as A would put it, from A's own viewpoint "
            "(A's own left and right, and the direction A faces as front):\n"
            "- lateral: along A's own left-right axis, is A to the left of B, to the right "
            "of B, or neither (none)?\n"
            "- depth: is A in front of B, behind B (back), or neither (none)?\n"
            "- vertical: is A physically higher (above), lower (under), or at the same "
            "level (none)?",
            FORMAT)
        answer = {"lateral": rel.lateral, "depth": rel.depth, "vertical": rel.vertical}
        turn = QuestionTurn(task=TASK, prompt=prompt, images=images,
                            answer_format="position", tag=None, answer=answer,
                            params=ctx.task_params(TASK, a_box=a.box.coco(),
                                                   b_box=b.box.coco()))
        out.questions.append(Question(id=ctx.qid(TASK, n), image_id=ann.image_id,
                                      turns=[turn], metadata={"a": rel.a, "b": rel.b}))
    return out
