"""Task 6 — Activity Description: choose the description of a boxed activity.

Distractor types (paper's ten): ``oa`` another activity's description (same image);
``oosi`` / ``oodi`` an object of the same / another image, ``oisi`` / ``oidi`` a person
of the same / another image, each as a short grammatical phrase ("A straw hat.", "Some
flowers.", :func:`~..textops.object_phrase`); ``so`` the true description with two noun
phrases of the same slot swapped (:func:`~..textops.shift_objects`; left out, with the
reason in the question params, when no safe swap exists); ``ca_s`` / ``ca_d`` 1–3
*other* descriptions of the same image (2–3, since one equals ``oa``) / of one other
image concatenated and cut at a clause boundary to about ``ca_length_ratio`` × the true
description's length (:func:`~..textops.concatenate`); ``neg`` the annotators' negative
descriptions of this activity; ``none`` "None of the above" (last; sometimes the answer,
see :func:`~..options.choose_with_none`).

So that no option gives itself away without the image: no option's text contains another
option's text or the truth (case-folded); at most ``max_short_options`` (default 1)
short-phrase options are shown while sentence-length distractors remain, so the truth
does not stand out as one of few sentences; and a same-image activity, person or object
whose box overlaps the queried box too much (:func:`~..options.too_close`,
``max_overlap``) is not used, since its description would also fit the region.
Cross-image picks avoid names present in this image.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from weakref import WeakKeyDictionary

from heritage_eval.benchmarks.muse.annotation import Activity, Box
from heritage_eval.benchmarks.muse.context import Corpus, ImageContext
from heritage_eval.benchmarks.muse.generators.base import (
    Generated,
    boxed_choice_turn,
    others_than,
)
from heritage_eval.benchmarks.muse.options import (
    CORRECT,
    Candidate,
    Compatible,
    assemble,
    choose_with_none,
    too_close,
)
from heritage_eval.benchmarks.muse.questions import Question
from heritage_eval.benchmarks.muse.textops import concatenate, object_phrase, shift_objects

TASK = "activity_description"
#: Distractor types shown as a short phrase ("A straw hat.") rather than a sentence.
SHORT_TYPES = frozenset({"oosi", "oodi", "oisi", "oidi"})


def _fold(text: str | None) -> str:
    return " ".join((text or "").casefold().split())


def no_containment(cand: Candidate, chosen: Sequence[Candidate]) -> bool:
    """False when ``cand``'s text contains, or is contained in, a chosen option's text."""
    t = _fold(cand.text)
    return not any(t in u or u in t for u in (_fold(c.text) for c in chosen) if t and u)


def short_capped(limit: int) -> Compatible:
    """:func:`no_containment`, and at most ``limit`` short-phrase options
    (:data:`SHORT_TYPES`) among the chosen ones."""
    def ok(cand: Candidate, chosen: Sequence[Candidate]) -> bool:
        if cand.distractor_type in SHORT_TYPES and \
                sum(c.distractor_type in SHORT_TYPES for c in chosen) >= limit:
            return False
        return no_containment(cand, chosen)

    return ok


def _concat(kind: str, source: list[str], lowest: int, limit: int,
            rng: random.Random) -> list[Candidate]:
    if len(source) < lowest:
        return []
    parts = rng.sample(source, rng.randint(lowest, min(3, len(source))))
    return [Candidate(kind, text=concatenate(parts, limit))]


#: Per corpus: activity descriptions per image id (corpus order) and those ids sorted.
_BY_IMAGE: WeakKeyDictionary[Corpus, tuple[dict[str, list[str]], list[str]]] = \
    WeakKeyDictionary()


def _descriptions_by_image(corpus: Corpus) -> tuple[dict[str, list[str]], list[str]]:
    """Grouped once per corpus (was once per activity: quadratic in the images)."""
    got = _BY_IMAGE.get(corpus)
    if got is None:
        by_image: dict[str, list[str]] = {}
        for image_id, desc in corpus.descriptions:
            by_image.setdefault(image_id, []).append(desc)
        got = _BY_IMAGE[corpus] = (by_image, sorted(by_image))
    return got


def _other_image_descriptions(ctx: ImageContext, rng: random.Random) -> list[str]:
    """The descriptions of one other image (seeded choice among the images, other than
    this one, that have any; sorted by id); empty when there is none."""
    by_image, ids = _descriptions_by_image(ctx.corpus)
    others = others_than(ids, ctx.ann.image_id)
    if not others:
        return []
    return by_image[rng.choice(others)]


def _pools(ctx: ImageContext, act: Activity, rng: random.Random
           ) -> tuple[dict[str, list[Candidate]], dict[str, str]]:
    ann, corpus, p = ctx.ann, ctx.corpus, ctx.params.activity_description
    truth = act.description or ""

    def far(box: Box) -> bool:
        return not too_close(box, act.box, p.max_overlap)

    others = [o.description for o in ann.activities
              if o.id != act.id and o.description and far(o.box)]
    names = {o.name.casefold() for o in ann.objects}
    cats = {c.category for c in ann.characters}
    far_objects = corpus.sample_other(corpus.object_names, ann.image_id, 3, rng,
                                      lambda e: e[1].casefold() not in names)
    far_people = corpus.sample_other(corpus.categories, ann.image_id, 3, rng,
                                     lambda e: e[1] not in cats)
    shifted, so_note = shift_objects(truth, rng)
    limit = round(p.ca_length_ratio * len(truth))
    pools = {
        "oa": [Candidate("oa", text=d) for d in others],
        "oosi": [Candidate("oosi", text=object_phrase(o.name)) for o in ann.objects
                 if far(o.box)],
        "oodi": [Candidate("oodi", text=object_phrase(name)) for _, name in far_objects],
        "oisi": [Candidate("oisi", text=object_phrase(c.category)) for c in ann.characters
                 if far(c.box)],
        "oidi": [Candidate("oidi", text=object_phrase(c)) for _, c in far_people],
        "so": [Candidate("so", text=shifted)] if shifted else [],
        "ca_s": _concat("ca_s", others, 2, limit, rng),
        "ca_d": _concat("ca_d", _other_image_descriptions(ctx, rng), 1, limit, rng),
        "neg": [Candidate("neg", text=t) for t in act.negative_descriptions],
    }
    notes = {"so": so_note if shifted else f"left out: {so_note}"}
    return pools, notes


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
        pools, notes = _pools(ctx, act, rng)
        correct, distractors, none_answer = choose_with_none(
            Candidate(CORRECT, text=act.description), pools, p.distractor_types,
            p.n_options, p.none_correct_rate, rng,
            compatible=short_capped(p.max_short_options), fill=no_containment)
        if not any(not d.is_none for d in distractors):
            out.skip(TASK, "no distractor available")
            continue
        options, answer = assemble(correct, distractors, rng)
        images = ctx.images_for(f"{TASK}_{n}", [("", act.box)])
        turn = boxed_choice_turn(
            TASK, f"What is happening inside the bounding box {ctx.fmt(act.box)} of this "
            "artwork? Choose the description that fits that region.", images, options, answer,
            ctx.task_params(TASK, box=act.box.coco(), n_options_used=len(options),
                            so_swap=notes["so"]))
        meta = {"activity_id": act.id, "none_correct": none_answer,
                "true_description": act.description}
        out.questions.append(Question(id=ctx.qid(TASK, n), image_id=ctx.ann.image_id,
                                      turns=[turn], metadata=meta))
    return out
