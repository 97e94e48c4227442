"""Task 11 — Remote Interaction: two linked multiple-choice turns about a non-contact
interaction "A interacts with B" (looking at, offering to, calling, pointing).

Turn 1 (entity): given A (text + box), which option (text + box) is B?
Turn 2 (evidence): which option pairs the right evidence with the right entity box?
B is not revealed in turn 2; the model's own turn-1 answer is in the history.

Distractor types (paper, plus one documented extension):
``other_interaction`` entities / evidence of other interactions in the same image;
``same_image_entity`` (turn 1 only; an extension, since an image usually holds a single
interaction) another boxed person or object of the image; ``mismatched_pair`` a true text
with a wrong box or a wrong text with the true box, drawn from the candidates and the
ground truth (in turn 2 the wrong boxes also come from the image's other people and
objects); ``cross_image`` an entity / evidence of another image whose text differs and
whose box overlaps the true box by IoU < ``max_cross_iou``.
"""

from __future__ import annotations

import random

from heritage_eval.benchmarks.muse.annotation import Box, RemoteInteraction
from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.generators.base import Generated
from heritage_eval.benchmarks.muse.options import CORRECT, Candidate, assemble, pick_distractors
from heritage_eval.benchmarks.muse.prompts import (
    BOX_NOTE,
    DRAWN_NOTE,
    choice_format,
    join,
    option_lines,
)
from heritage_eval.benchmarks.muse.questions import Question, QuestionTurn

TASK = "remote_interaction"


def _mismatched(true_text: str, true_box: Box, others: list[tuple[str, Box]],
                rng: random.Random) -> list[Candidate]:
    """Pairs mixing the true text with another box and another text with the true box."""
    out = [Candidate("mismatched_pair", text=true_text, box=b) for _, b in others]
    out += [Candidate("mismatched_pair", text=t, box=true_box) for t, _ in others]
    rng.shuffle(out)
    return out


def _entity_turn(ctx: ImageContext, inter: RemoteInteraction, n: int,
                 rng: random.Random) -> QuestionTurn:
    ann, corpus, p = ctx.ann, ctx.corpus, ctx.params.remote_interaction
    b_text, b_box = ann.entity_text(inter.b), ann.region(inter.b).box
    others_inter = [(ann.entity_text(r), ann.region(r).box) for o in ann.remote_interactions
                    if o != inter for r in (o.a, o.b) if r not in (inter.a, inter.b)]
    same_image = [(ann.entity_text(r.id), r.box) for r in ann.entities()
                  if r.id not in (inter.a, inter.b)]
    cross = corpus.sample_other(corpus.entities, ann.image_id, 3, rng,
                                lambda e: e[1] != b_text and e[2].iou(b_box) < p.max_cross_iou)
    pools = {
        "other_interaction": [Candidate("other_interaction", text=t, box=b)
                              for t, b in others_inter],
        "same_image_entity": [Candidate("same_image_entity", text=t, box=b)
                              for t, b in same_image],
        "mismatched_pair": _mismatched(b_text, b_box, others_inter + same_image, rng),
        "cross_image": [Candidate("cross_image", text=t, box=b) for _, t, b in cross],
    }
    correct = Candidate(CORRECT, text=b_text, box=b_box)
    distractors = pick_distractors(pools, p.distractor_types, p.n_options - 1, rng,
                                   taken=[correct])
    options, answer = assemble(correct, distractors, rng)
    a_box = ann.region(inter.a).box
    images = ctx.images_for(f"{TASK}_{n}_entity", [("A", a_box)])
    prompt = join(
        f"In this artwork the {ann.entity_text(inter.a)} in bounding box {ctx.fmt(a_box)} "
        "interacts with someone or something without touching it (for example by looking at "
        "it, pointing, calling or holding something out to it). Which option gives that "
        "entity and its bounding box?",
        BOX_NOTE + (" " + DRAWN_NOTE if len(images) > 1 else ""),
        "Options:\n" + option_lines(options, ctx.params.box_decimals),
        choice_format("option", len(options)))
    return QuestionTurn(task=TASK, prompt=prompt, images=images, answer_format="choice",
                        tag="option", options=options, answer=answer,
                        params=ctx.task_params(TASK, part="entity"))


def _evidence_turn(ctx: ImageContext, inter: RemoteInteraction,
                   rng: random.Random) -> QuestionTurn:
    ann, corpus, p = ctx.ann, ctx.corpus, ctx.params.remote_interaction
    b_box = ann.region(inter.b).box
    others_inter = [(o.evidence, ann.region(o.b).box) for o in ann.remote_interactions
                    if o != inter]
    entity_boxes = [("", r.box) for r in ann.entities()
                    if r.id not in (inter.a, inter.b)]
    mismatched = [c for c in _mismatched(inter.evidence, b_box,
                                         others_inter + entity_boxes, rng) if c.text]
    cross = corpus.sample_other(
        corpus.interactions, ann.image_id, 3, rng,
        lambda e: e[1].evidence != inter.evidence
        and corpus.by_id[e[0]].region(e[1].b).box.iou(b_box) < p.max_cross_iou)
    pools = {
        "other_interaction": [Candidate("other_interaction", text=t, box=b)
                              for t, b in others_inter],
        "mismatched_pair": mismatched,
        "cross_image": [Candidate("cross_image", text=i.evidence,
                                  box=corpus.by_id[img].region(i.b).box) for img, i in cross],
    }
    correct = Candidate(CORRECT, text=inter.evidence, box=b_box)
    distractors = pick_distractors(pools, p.distractor_types, p.n_options - 1, rng,
                                   taken=[correct])
    options, answer = assemble(correct, distractors, rng)
    prompt = join(
        "Which option states visible evidence of that interaction together with the bounding "
        "box of the entity it involves? Both the evidence and the box must be right.",
        "Options:\n" + option_lines(options, ctx.params.box_decimals),
        choice_format("option", len(options)))
    return QuestionTurn(task=TASK, prompt=prompt, answer_format="choice", tag="option",
                        options=options, answer=answer,
                        params=ctx.task_params(TASK, part="evidence"))


def generate(ctx: ImageContext) -> Generated:
    """One two-turn question per annotated remote interaction."""
    out = Generated()
    if not ctx.ann.remote_interactions:
        return out.skip(TASK, "no remote interaction")
    for n, inter in enumerate(ctx.ann.remote_interactions):
        rng = ctx.rng(TASK, n)
        turns = [_entity_turn(ctx, inter, n, rng), _evidence_turn(ctx, inter, rng)]
        if any(len(t.options) < 2 for t in turns):
            out.skip(TASK, "no distractor available")
            continue
        out.questions.append(Question(id=ctx.qid(TASK, n), image_id=ctx.ann.image_id,
                                      turns=turns, metadata={"a": inter.a, "b": inter.b}))
    return out
