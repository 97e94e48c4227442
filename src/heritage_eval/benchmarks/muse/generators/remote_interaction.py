"""Task 11 — Remote Interaction: two linked multiple-choice turns about a non-contact
interaction "A interacts with B" (looking at, offering to, calling, pointing).

Turn 1 (entity): given A (text + box), which option (text + box) is B?
Turn 2 (evidence): which option pairs the right evidence with B's box? B is not revealed
in turn 2; the model's own turn-1 answer is in the history.

Distractor types (paper, plus one documented extension): ``other_interaction`` entities
/ evidence of other interactions in the same image; ``same_image_entity`` (turn 1 only;
an extension, since an image usually holds a single interaction) another boxed person or
object of the image; ``cross_image`` an entity / evidence of another image whose text
differs and whose box overlaps B's box by at most ``max_cross_iou`` (IoU and coverage);
``mismatched_pair`` a text shown with a box that is not its own.

Text-only plausibility is levelled too: when B is a person, the real distractor and the
wrong texts are people where possible (persons first, then things), so the truth is not
the lone person among objects. Mismatched pairs must not give the answer away by their
structure (a true text reused
with a wrong box *and* the true box reused with a wrong text marks the truth as the one
option sharing something with two others). With ``n_options >= 4`` and
``mismatched_pair`` allowed, a turn is built as two symmetric pairs: the truth
``(t, B)`` and ``(w1, B)``; one real distractor ``(t1, b1)`` and ``(w2, b1)``, where
``w1``, ``w2`` are wrong texts (other entities of the image / other evidence) whose own
box does not overlap the box they are shown with, and the real distractor's text differs
from the truth's where possible (several boys in one picture would otherwise pair the
truth with its namesake). Each pair shares exactly one box, so
no text-only rule can tell which pair holds the answer. Turn 2 reuses turn 1's boxes
(B and the real distractor's box), so "a box seen in turn 1" is no hint either. Further
options (``n_options > 4``) share nothing with the others. Every same-image distractor
box passes :func:`~..options.too_close` against B's box (``max_overlap``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from heritage_eval.benchmarks.muse.annotation import PERSON_CATEGORIES, Box, RemoteInteraction
from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.generators.base import Generated
from heritage_eval.benchmarks.muse.options import (
    CORRECT,
    Candidate,
    assemble,
    pick_distractors,
    too_close,
)
from heritage_eval.benchmarks.muse.prompts import (
    choice_format,
    join,
    option_lines,
    template,
)
from heritage_eval.benchmarks.muse.questions import Question, QuestionTurn

TASK = "remote_interaction"
MISMATCH = "mismatched_pair"
#: Label of the subject A's box in drawn images (not an option letter).
SUBJECT_LABEL = "S"
#: A wrong text with its own box (``None`` when it has none in this image).
Text = tuple[str, Box | None]


def shares_nothing(cand: Candidate, chosen: Sequence[Candidate]) -> bool:
    """False when ``cand`` repeats the text or the box of a chosen option."""
    return not any(c.text == cand.text or (c.box is not None and c.box == cand.box)
                   for c in chosen)


def _kind(text: str) -> str:
    return "person" if text.capitalize() in PERSON_CATEGORIES else "thing"


def _same_kind_first(items: Sequence[Text], kind: str, rng: random.Random) -> list[Text]:
    """``items`` in a random order, those of ``kind`` (person / thing) first."""
    shuffled = rng.sample(list(items), len(items))
    return [t for t in shuffled if _kind(t[0]) == kind] + \
        [t for t in shuffled if _kind(t[0]) != kind]


def _wrong_text(texts: Sequence[Text], box: Box, used: set[str], limit: float
                ) -> str | None:
    for text, own in texts:
        if text in used:
            continue
        if own is not None and (too_close(own, box, limit) or too_close(box, own, limit)):
            continue
        return text
    return None


def build_options(truth: Candidate, pools: Mapping[str, Sequence[Candidate]],
                  texts: Sequence[Text], allowed: Sequence[str], n: int, limit: float,
                  rng: random.Random, pair_box: Box | None = None,
                  fallback: Mapping[str, Sequence[Candidate]] | None = None
                  ) -> list[Candidate]:
    """Distractors for ``truth`` (module docstring): two symmetric pairs when possible,
    else ``n - 1`` real distractors (from ``fallback`` when given, else ``pools``).
    ``texts`` (wrong texts with their own boxes) are tried in a random order;
    ``pair_box``, when given, is the box of the real distractor's pair (turn 2 reuses
    turn 1's)."""
    real = [t for t in allowed if t != MISMATCH]
    if MISMATCH in allowed and n >= 4 and truth.box is not None:
        first = (pick_distractors(pools, real, 1, rng, [truth],
                                  lambda c, _: c.text != truth.text)
                 or pick_distractors(pools, real, 1, rng, [truth]))
        order = _same_kind_first(texts, _kind(truth.text or ""), rng)
        if first:
            d1 = first[0]
            b1 = pair_box or d1.box
            if pair_box is not None:
                d1 = Candidate(d1.distractor_type, text=d1.text, box=pair_box)
            used = {truth.text or "", d1.text or ""}
            w1 = _wrong_text(order, truth.box, used, limit)
            w2 = _wrong_text(order, b1, used | {w1 or ""}, limit) if b1 else None
            if w1 and w2 and b1 is not None and b1 != truth.box:
                chosen = [d1, Candidate(MISMATCH, text=w1, box=truth.box),
                          Candidate(MISMATCH, text=w2, box=b1)]
                return chosen + pick_distractors(pools, real, n - 4, rng,
                                                 [truth, *chosen], shares_nothing)
    return pick_distractors(pools if fallback is None else fallback, real, n - 1, rng, [truth])


def _prefer_kind(pools: dict[str, list[Candidate]], kind: str) -> dict[str, list[Candidate]]:
    """Only the candidates naming the same kind (person / thing) as the truth, when there
    are any (a lone person among objects would give the answer away); else all."""
    same = {k: [c for c in v if _kind(c.text or "") == kind] for k, v in pools.items()}
    return same if any(same.values()) else pools


def _entity_turn(ctx: ImageContext, inter: RemoteInteraction, n: int,
                 rng: random.Random) -> QuestionTurn:
    ann, corpus, p = ctx.ann, ctx.corpus, ctx.params.remote_interaction
    b_text, b_box = ann.entity_text(inter.b), ann.region(inter.b).box
    skip = {inter.a, inter.b}
    other_ids = list(dict.fromkeys(r for o in ann.remote_interactions if o != inter
                                   for r in (o.a, o.b) if r not in skip))
    entities = [(r.id, ann.entity_text(r.id), r.box) for r in ann.entities()
                if r.id not in skip]
    near = [(t, b) for i, t, b in entities
            if i in other_ids and not too_close(b, b_box, p.max_overlap)]
    same = [(t, b) for i, t, b in entities
            if i not in other_ids and not too_close(b, b_box, p.max_overlap)]
    here = {t for _, t, _ in entities} | {b_text, ann.entity_text(inter.a)}
    cross = corpus.sample_other(corpus.entities, ann.image_id, 3, rng,
                                lambda e: e[1] not in here
                                and not too_close(e[2], b_box, p.max_cross_iou)
                                and _kind(e[1]) == _kind(b_text))
    cross = cross or corpus.sample_other(corpus.entities, ann.image_id, 3, rng,
                                         lambda e: e[1] not in here
                                         and not too_close(e[2], b_box, p.max_cross_iou))
    pools = _prefer_kind({
        "other_interaction": [Candidate("other_interaction", text=t, box=b) for t, b in near],
        "same_image_entity": [Candidate("same_image_entity", text=t, box=b) for t, b in same],
        "cross_image": [Candidate("cross_image", text=t, box=b) for _, t, b in cross],
    }, _kind(b_text))
    names = sorted({t for _, t, _ in corpus.entities if t not in here})
    texts: list[Text] = [(t, b) for _, t, b in entities if t != b_text]
    texts += [(t, None) for t in names]
    correct = Candidate(CORRECT, text=b_text, box=b_box)
    distractors = build_options(correct, pools, list(dict.fromkeys(texts)),
                                p.distractor_types, p.n_options, p.max_overlap, rng)
    options, answer = assemble(correct, distractors, rng)
    a_box = ann.region(inter.a).box
    images = ctx.images_for(f"{TASK}_{n}_entity", [(SUBJECT_LABEL, a_box)])
    drawn = (" " + template("drawn_note") + f" The given entity's box is labelled {SUBJECT_LABEL}."
             if len(images) > 1 else "")
    prompt = join(
        f"In this artwork the {ann.entity_text(inter.a)} in bounding box {ctx.fmt(a_box)} "
        "interacts with someone or something without touching it (for example by looking at "
        "it, pointing, calling or holding something out to it). Which option gives that "
        "entity and its bounding box?",
        template("box_note") + drawn,
        "Options:\n" + option_lines(options, ctx.params.box_decimals),
        choice_format("option", len(options)))
    return QuestionTurn(task=TASK, prompt=prompt, images=images, answer_format="choice",
                        tag="option", options=options, answer=answer,
                        params=ctx.task_params(TASK, part="entity"))


def _evidence_turn(ctx: ImageContext, inter: RemoteInteraction, entity: QuestionTurn,
                   rng: random.Random) -> QuestionTurn:
    ann, corpus, p = ctx.ann, ctx.corpus, ctx.params.remote_interaction
    b_box = ann.region(inter.b).box
    near = [(o.evidence, ann.region(o.b).box) for o in ann.remote_interactions
            if o != inter and o.evidence != inter.evidence]
    others = corpus.sample_other(corpus.interactions, ann.image_id, p.n_options + 1, rng,
                                 lambda e: e[1].evidence != inter.evidence)
    pair_box = next((_box(o.box) for o in entity.options
                     if o.distractor_type not in (CORRECT, MISMATCH) and o.box
                     and any(m.distractor_type == MISMATCH and m.box == o.box
                             for m in entity.options)), None)
    # shown with its own box, a cross-image candidate must barely overlap B's box; shown
    # with turn 1's distractor box (pair_box), only its text matters
    cross = [(i.evidence, corpus.by_id[img].region(i.b).box) for img, i in others]
    same = [Candidate("other_interaction", text=t, box=b) for t, b in near
            if not too_close(b, b_box, p.max_overlap)]
    pools = {"other_interaction": same,
             "cross_image": [Candidate("cross_image", text=t, box=b) for t, b in cross
                             if not too_close(b, b_box, p.max_cross_iou)]}
    pair_pools = {"other_interaction": same,
                  "cross_image": [Candidate("cross_image", text=t, box=b) for t, b in cross]}
    texts: list[Text] = [*near, *[(i.evidence, None) for _, i in others]]
    correct = Candidate(CORRECT, text=inter.evidence, box=b_box)
    distractors = build_options(correct, pair_pools if pair_box else pools, texts,
                                p.distractor_types, p.n_options, p.max_overlap, rng,
                                pair_box=pair_box, fallback=pools)
    options, answer = assemble(correct, distractors, rng)
    prompt = join(
        "Which option states visible evidence of that interaction together with the bounding "
        "box of the entity it involves? Both the evidence and the box must be right.",
        "Options:\n" + option_lines(options, ctx.params.box_decimals),
        choice_format("option", len(options)))
    return QuestionTurn(task=TASK, prompt=prompt, answer_format="choice", tag="option",
                        options=options, answer=answer,
                        params=ctx.task_params(TASK, part="evidence"))


def _box(values: list[float]) -> Box:
    return Box(x=values[0], y=values[1], w=values[2], h=values[3])


def generate(ctx: ImageContext) -> Generated:
    """One two-turn question per annotated remote interaction."""
    out = Generated()
    if not ctx.ann.remote_interactions:
        return out.skip(TASK, "no remote interaction")
    for n, inter in enumerate(ctx.ann.remote_interactions):
        rng = ctx.rng(TASK, n)
        entity = _entity_turn(ctx, inter, n, rng)
        turns = [entity, _evidence_turn(ctx, inter, entity, rng)]
        if any(len(t.options) < 2 for t in turns):
            out.skip(TASK, "no distractor available")
            continue
        out.questions.append(Question(id=ctx.qid(TASK, n), image_id=ctx.ann.image_id,
                                      turns=turns, metadata={"a": inter.a, "b": inter.b}))
    return out
