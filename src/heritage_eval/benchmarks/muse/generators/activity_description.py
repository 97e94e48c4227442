"""Task 6 — Activity Description: choose the description of a boxed activity.

Distractor types (paper's ten): ``oa`` another activity's description (same image);
``oosi`` / ``oodi`` an object of the same / another image ("A straw hat."); ``oisi`` /
``oidi`` a person of the same / another image ("A girl."); ``so`` the true description
with two noun phrases swapped (:func:`~..textops.shift_objects`); ``ca_s`` / ``ca_d`` the
true description concatenated with 1–3 descriptions of the same / another image (our
reading of "concatenated descriptions": an over-inclusive option that contains the truth,
in random order); ``neg`` the annotators' negative descriptions of this activity; ``none``
"None of the above" (last). Cross-image picks avoid names present in this image.
"""

from __future__ import annotations

import random

from heritage_eval.benchmarks.muse.annotation import Activity
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
from heritage_eval.benchmarks.muse.textops import shift_objects, with_article

TASK = "activity_description"


def _concat(truth: str, others: list[str], rng: random.Random, kind: str) -> list[Candidate]:
    if not others:
        return []
    parts = [truth, *rng.sample(others, rng.randint(1, min(3, len(others))))]
    rng.shuffle(parts)
    return [Candidate(kind, text=" ".join(parts))]


def _pools(ctx: ImageContext, act: Activity, rng: random.Random) -> dict[str, list[Candidate]]:
    ann, corpus = ctx.ann, ctx.corpus
    truth = act.description or ""
    others = [o.description for o in ann.activities if o.id != act.id and o.description]
    names = {o.name.casefold() for o in ann.objects}
    cats = {c.category for c in ann.characters}
    far_objects = corpus.sample_other(corpus.object_names, ann.image_id, 3, rng,
                                      lambda e: e[1].casefold() not in names)
    far_people = corpus.sample_other(corpus.categories, ann.image_id, 3, rng,
                                     lambda e: e[1] not in cats)
    far_desc = [d for _, d in corpus.sample_other(corpus.descriptions, ann.image_id, 3, rng)]
    shifted = shift_objects(truth, rng)
    return {
        "oa": [Candidate("oa", text=d) for d in others],
        "oosi": [Candidate("oosi", text=with_article(o.name)) for o in ann.objects],
        "oodi": [Candidate("oodi", text=with_article(name)) for _, name in far_objects],
        "oisi": [Candidate("oisi", text=with_article(c)) for c in sorted(cats)],
        "oidi": [Candidate("oidi", text=with_article(c)) for _, c in far_people],
        "so": [Candidate("so", text=shifted)] if shifted else [],
        "ca_s": _concat(truth, others, rng, "ca_s"),
        "ca_d": _concat(truth, far_desc, rng, "ca_d"),
        "neg": [Candidate("neg", text=t) for t in act.negative_descriptions],
        "none": [none_candidate()],
    }


def generate(ctx: ImageContext) -> Generated:
    """One question per activity with a description."""
    out = Generated()
    p = ctx.params.activity_description
    acts = [a for a in ctx.ann.activities if a.description]
    if not acts:
        return out.skip(TASK, "no activity with a description")
    for n, act in enumerate(ctx.ann.activities):
        if not act.description:
            out.skip(TASK, "activity without a description")
            continue
        rng = ctx.rng(TASK, n)
        correct = Candidate(CORRECT, text=act.description)
        distractors = pick_distractors(_pools(ctx, act, rng), p.distractor_types,
                                       p.n_options - 1, rng, taken=[correct])
        if not distractors:
            out.skip(TASK, "no distractor available")
            continue
        options, answer = assemble(correct, distractors, rng)
        images = ctx.images_for(f"{TASK}_{n}", [("", act.box)])
        prompt = join(
            f"What is happening inside the bounding box {ctx.fmt(act.box)} of this artwork? "
            "Choose the description that fits that region.",
            BOX_NOTE + (" " + DRAWN_NOTE if len(images) > 1 else ""),
            "Options:\n" + option_lines(options),
            choice_format("option", len(options)))
        turn = QuestionTurn(task=TASK, prompt=prompt, images=images, answer_format="choice",
                            tag="option", options=options, answer=answer,
                            params=ctx.task_params(TASK, box=act.box.coco(),
                                                   n_options_used=len(options)))
        out.questions.append(Question(id=ctx.qid(TASK, n), image_id=ctx.ann.image_id,
                                      turns=[turn], metadata={"activity_id": act.id}))
    return out
