"""Task 5 — Activity Localization: choose the box of a described activity.

Distractor types (paper): ``other_activity`` (another activity's box),
``person_or_object`` (a person or object box), ``sub_region`` (a random sub-box of the
true box, sides 40–70 % by default), ``random_region`` (a random box overlapping the true
box by IoU < 0.1) and ``none`` ("None of the above", always last). Annotated boxes are
used only when their IoU with the true box is below ``max_iou`` (a near-copy of the
answer would make two correct options). The activity is given by its description (its
label when it has none); boxes are listed as coordinates.
"""

from __future__ import annotations

import random

from heritage_eval.benchmarks.muse.annotation import Box
from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.generators.base import Generated
from heritage_eval.benchmarks.muse.options import (
    CORRECT,
    Candidate,
    assemble,
    none_candidate,
    pick_distractors,
)
from heritage_eval.benchmarks.muse.prompts import (
    BOX_NOTE,
    DRAWN_NOTE,
    choice_format,
    join,
    option_lines,
)
from heritage_eval.benchmarks.muse.questions import Question, QuestionTurn

TASK = "activity_localization"


def sub_region(box: Box, rng: random.Random, scale: tuple[float, float]) -> Box:
    """A random box inside ``box`` whose sides are ``scale`` fractions of its sides
    (rounded to 4 decimals)."""
    w = box.w * rng.uniform(*scale)
    h = box.h * rng.uniform(*scale)
    x = box.x + rng.uniform(0.0, box.w - w)
    y = box.y + rng.uniform(0.0, box.h - h)
    return Box(x=round(x, 4), y=round(y, 4), w=round(w, 4), h=round(h, 4))


def random_region(box: Box, rng: random.Random, max_iou: float = 0.1,
                  tries: int = 100) -> Box | None:
    """A random box (sides 10–50 % of the image) with IoU < ``max_iou`` against ``box``;
    ``None`` when none is found in ``tries`` draws."""
    for _ in range(tries):
        w, h = rng.uniform(0.1, 0.5), rng.uniform(0.1, 0.5)
        cand = Box(x=round(rng.uniform(0.0, 1.0 - w), 4), y=round(rng.uniform(0.0, 1.0 - h), 4),
                   w=round(w, 4), h=round(h, 4))
        if cand.iou(box) < max_iou:
            return cand
    return None


def generate(ctx: ImageContext) -> Generated:
    """One question per activity box."""
    out = Generated()
    p = ctx.params.activity_localization
    ann = ctx.ann
    if not ann.activities:
        return out.skip(TASK, "no activity box")
    for n, act in enumerate(ann.activities):
        rng = ctx.rng(TASK, n)
        correct = Candidate(CORRECT, box=act.box)
        rand = random_region(act.box, rng)
        pools = {
            "other_activity": [Candidate("other_activity", box=o.box) for o in ann.activities
                               if o.id != act.id and o.box.iou(act.box) < p.max_iou],
            "person_or_object": [Candidate("person_or_object", box=r.box)
                                 for r in ann.entities()
                                 if r.box.iou(act.box) < p.max_iou],
            "sub_region": [Candidate("sub_region", box=sub_region(act.box, rng,
                                                                  p.sub_region_scale))],
            "random_region": [Candidate("random_region", box=rand)] if rand else [],
            "none": [none_candidate()],
        }
        distractors = pick_distractors(pools, p.distractor_types, p.n_options - 1, rng,
                                       taken=[correct])
        if not distractors:
            out.skip(TASK, "no distractor available")
            continue
        options, answer = assemble(correct, distractors, rng)
        images = ctx.images_for(f"{TASK}_{n}", [(o.label, Box(x=o.box[0], y=o.box[1],
                                                                w=o.box[2], h=o.box[3]))
                                                 for o in options if o.box])
        what = act.description or act.label
        prompt = join(
            f"Which bounding box in this artwork contains the following activity?\n\"{what}\"",
            BOX_NOTE + (" " + DRAWN_NOTE if len(images) > 1 else ""),
            "Options:\n" + option_lines(options, ctx.params.box_decimals),
            choice_format("option", len(options)))
        turn = QuestionTurn(task=TASK, prompt=prompt, images=images, answer_format="choice",
                            tag="option", options=options, answer=answer,
                            params=ctx.task_params(TASK, n_options_used=len(options)))
        out.questions.append(Question(id=ctx.qid(TASK, n), image_id=ann.image_id,
                                      turns=[turn],
                                      metadata={"activity_id": act.id, "activity": what}))
    return out
