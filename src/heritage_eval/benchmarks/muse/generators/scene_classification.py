"""Task 12 — Scene Classification: the scene label of the whole artwork.

Negatives (paper): one label from each of ``n_options - 1`` scene categories other than
the true label's (:mod:`..scenes`). So that the curator's specific label does not stand
out among generic ones (longer, more specific), negatives are drawn first from the
*dataset's own* scene labels of other images (categories holding such labels come first,
in random order), and only then from the shipped table, preferring table labels whose
word count lies within the dataset labels' range. Every option is shown normalised
(whitespace collapsed, first letter upper case). The options record their category in
the question params.

A label the taxonomy left *unassigned* (no category leads by ``min_margin``) is never a
negative, and its own question keeps going but takes no negative from any of its
candidate categories (``excluded_categories`` in the params; its option category is
``null``), so no wrong option can come from its true theme whichever candidate that is.
"""

from __future__ import annotations

import random

from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.generators.base import Generated
from heritage_eval.benchmarks.muse.options import CORRECT, Candidate, assemble
from heritage_eval.benchmarks.muse.prompts import choice_format, join, option_lines
from heritage_eval.benchmarks.muse.questions import Question, QuestionTurn
from heritage_eval.benchmarks.muse.scenes import SceneTaxonomy

TASK = "scene_classification"


def display(label: str) -> str:
    """``label`` as shown: whitespace collapsed, first letter upper case."""
    text = " ".join(label.split())
    return text[:1].upper() + text[1:]


def pick_negatives(tax: SceneTaxonomy, scene: str, k: int, rng: random.Random) -> list[str]:
    """Up to ``k`` labels, one per category other than ``scene``'s (see module
    docstring)."""
    excluded = tax.excluded_for(scene)
    dataset = {label for label in tax.how if label.casefold() != scene.casefold()}
    lengths = [len(label.split()) for label in tax.how] or [1]
    low, high = min(lengths), max(lengths)
    by_cat = {c: ls for c, ls in tax.labels_by_category().items() if c not in excluded}
    with_data = sorted(c for c, ls in by_cat.items() if dataset & set(ls))
    table_only = sorted(c for c in by_cat if c not in with_data)
    rng.shuffle(with_data)
    rng.shuffle(table_only)
    out: list[str] = []
    for cat in [*with_data, *table_only][:k]:
        labels = [lb for lb in by_cat[cat] if lb.casefold() != scene.casefold()]
        mine = sorted(set(labels) & dataset)
        fitting = [lb for lb in labels if low <= len(lb.split()) <= high]
        choices = mine or fitting or labels
        if choices:
            out.append(rng.choice(choices))
    return out


def generate(ctx: ImageContext) -> Generated:
    """One question per image with a scene label."""
    out = Generated()
    scene = ctx.ann.scene
    if not scene:
        return out.skip(TASK, "no scene label")
    tax = ctx.resources.scenes
    if tax is None:
        raise RuntimeError("scene categories were not built")
    p = ctx.params.scene_classification
    rng = ctx.rng(TASK, 0)
    negatives = pick_negatives(tax, scene, p.n_options - 1, rng)
    if len(negatives) < p.n_options - 1:
        return out.skip(TASK, "too few scene categories")
    shown = {display(scene): scene} | {display(label): label for label in negatives}
    if len(shown) < p.n_options:
        return out.skip(TASK, "scene labels equal after normalisation")
    correct = Candidate(CORRECT, text=display(scene))
    distractors = [Candidate("other_scene_category", text=display(lb)) for lb in negatives]
    options, answer = assemble(correct, distractors, rng)
    prompt = join("Which label best describes the overall scene of this artwork?",
                  "Options:\n" + option_lines(options),
                  choice_format("option", len(options)))
    cats = {o.label: tax.category_of.get(shown[o.text or ""]) for o in options}
    sources = {o.label: "dataset" if shown[o.text or ""] in tax.how else "table"
               for o in options}
    params = ctx.task_params(TASK, option_categories=cats, option_sources=sources,
                             excluded_categories=sorted(tax.excluded_for(scene)))
    turn = QuestionTurn(task=TASK, prompt=prompt, images=[ctx.image_ref],
                        answer_format="choice", tag="option", options=options, answer=answer,
                        params=params)
    out.questions.append(Question(id=ctx.qid(TASK, 0), image_id=ctx.ann.image_id,
                                  turns=[turn],
                                  metadata={"scene_category": tax.category_of.get(scene),
                                            "scene_assignment": tax.how[scene],
                                            "scene": scene}))
    return out
