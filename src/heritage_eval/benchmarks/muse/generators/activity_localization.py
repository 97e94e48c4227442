"""Task 5 — Activity Localization: choose the box of a described activity.

Distractor types (paper): ``other_activity`` (another activity's box),
``person_or_object`` (a person or object box), ``sub_region`` (a random sub-box of the
true box, sides 40–70 % by default), ``random_region`` (a random box about the size of
the true box, overlapping it by IoU < 0.1) and ``none`` ("None of the above": always
last when allowed, and the answer with probability ``none_correct_rate``, default
1 / n_options — the true box is then left out; see
:func:`~..options.choose_with_none`). Every distractor box must be
really wrong: its IoU with the true box and the share of the true box it covers are at
most ``max_overlap`` (:func:`~..options.too_close`), so a box containing the activity is
never offered as a wrong answer. The activity is given by its description (its label
when it has none); boxes are listed as coordinates.
"""

from __future__ import annotations

import random

from heritage_eval.benchmarks.muse.annotation import Box
from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.generators.base import Generated, boxed_choice_turn
from heritage_eval.benchmarks.muse.options import (
    CORRECT,
    Candidate,
    assemble,
    choose_with_none,
    too_close,
)
from heritage_eval.benchmarks.muse.questions import Question

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
    """A random box with IoU < ``max_iou`` against ``box`` that covers at most ``max_iou``
    of it. Its sides are first drawn around the true box's (× 0.75–1.33, so box size does
    not single out the answer), then, when no such box fits, 10–50 % of the image;
    ``None`` when ``tries`` draws of each kind fail."""
    for attempt in range(2 * tries):
        if attempt < tries:
            w = min(1.0, box.w * rng.uniform(0.75, 1.33))
            h = min(1.0, box.h * rng.uniform(0.75, 1.33))
        else:
            w, h = rng.uniform(0.1, 0.5), rng.uniform(0.1, 0.5)
        cand = Box(x=round(rng.uniform(0.0, 1.0 - w), 4), y=round(rng.uniform(0.0, 1.0 - h), 4),
                   w=round(w, 4), h=round(h, 4))
        if cand.iou(box) < max_iou and cand.coverage(box) <= max_iou:
            return cand
    return None


def _box(values: list[float]) -> Box:
    return Box(x=values[0], y=values[1], w=values[2], h=values[3])


def generate(ctx: ImageContext) -> Generated:
    """One question per activity box."""
    out = Generated()
    p = ctx.params.activity_localization
    ann = ctx.ann
    if not ann.activities:
        return out.skip(TASK, "no activity box")
    for n, act in enumerate(ann.activities):
        rng = ctx.rng(TASK, n)
        truth = Candidate(CORRECT, box=act.box)
        rand = random_region(act.box, rng)
        sub = sub_region(act.box, rng, p.sub_region_scale)

        def wrong(b: Box, truth: Box = act.box) -> bool:
            return not too_close(b, truth, p.max_overlap)

        pools = {
            "other_activity": [Candidate("other_activity", box=o.box) for o in ann.activities
                               if o.id != act.id and wrong(o.box)],
            "person_or_object": [Candidate("person_or_object", box=r.box)
                                 for r in ann.entities() if wrong(r.box)],
            "sub_region": [Candidate("sub_region", box=sub)] if wrong(sub) else [],
            "random_region": [Candidate("random_region", box=rand)] if rand else [],
        }
        correct, distractors, none_answer = choose_with_none(
            truth, pools, p.distractor_types, p.n_options, p.none_correct_rate, rng)
        if not any(not d.is_none for d in distractors):
            out.skip(TASK, "no distractor available")
            continue
        options, answer = assemble(correct, distractors, rng)
        images = ctx.images_for(f"{TASK}_{n}", [(o.label, _box(o.box))
                                                 for o in options if o.box])
        what = act.description or act.label
        turn = boxed_choice_turn(
            TASK, f"Which bounding box in this artwork contains the following activity?\n"
            f"\"{what}\"", images, options, answer,
            ctx.task_params(TASK, n_options_used=len(options)), ctx.params.box_decimals)
        meta = {"activity_id": act.id, "activity": what, "true_box": act.box.coco(),
                "none_correct": none_answer}
        out.questions.append(Question(id=ctx.qid(TASK, n), image_id=ann.image_id,
                                      turns=[turn], metadata=meta))
    return out
