"""Task 7 — Cultural Identification: the culture of a boxed cultural element.

Negatives come from culture-label clusters other than the true label's
(:mod:`..clusters`: k-means over label embeddings, paper 15 clusters, clamped for small
label sets), one label per cluster (clusters in random order) before any cluster is
reused. Labels too similar to the truth by embedding cosine
(``max_negative_cosine``) and labels of the image's other cultural elements (true of
the artwork, if not of the box) are never negatives. Each question records the cluster of
every option and whether the fallback pool was needed (``negative_pool``).
"""

from __future__ import annotations

from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.generators.base import Generated, boxed_choice_turn
from heritage_eval.benchmarks.muse.options import CORRECT, Candidate, assemble, pick_distractors
from heritage_eval.benchmarks.muse.prompts import answer_block
from heritage_eval.benchmarks.muse.questions import Question

TASK = "cultural_identification"


def generate(ctx: ImageContext) -> Generated:
    """One question per cultural element."""
    out = Generated()
    clusters = ctx.resources.culture
    if not ctx.ann.cultural_elements:
        return out.skip(TASK, "no cultural element")
    if clusters is None:
        raise RuntimeError("culture clusters were not built")
    p = ctx.params.cultural_identification
    own_labels = {e.label for e in ctx.ann.cultural_elements}
    for n, elem in enumerate(ctx.ann.cultural_elements):
        rng = ctx.rng(TASK, n)
        others = clusters.other_clusters(elem.label)
        pools = {f"cluster_{c}": [Candidate("other_cluster", text=t) for t in labels
                                  if t not in own_labels]
                 for c, labels in others.items()}
        correct = Candidate(CORRECT, text=elem.label)
        distractors = pick_distractors(pools, sorted(pools), p.n_options - 1, rng,
                                       taken=[correct])
        if len(distractors) < p.n_options - 1:
            out.skip(TASK, "too few labels in other clusters")
            continue
        options, answer = assemble(correct, distractors, rng)
        images = ctx.images_for(f"{TASK}_{n}", [("", elem.box)])
        params = ctx.task_params(
            TASK, box=elem.box.coco(), n_clusters_used=clusters.n_clusters,
            negative_pool="dataset+fallback" if clusters.pool_used else "dataset",
            option_clusters={o.label: clusters.cluster_of[o.text or ""] for o in options})
        turn = boxed_choice_turn(
            TASK, "Which culture is most closely connected with what is shown inside the "
            f"bounding box {ctx.fmt(elem.box)} of this artwork?", images, options, answer,
            params, answer_format=answer_block(TASK, ctx.params.answer_style, len(options)))
        out.questions.append(Question(id=ctx.qid(TASK, n), image_id=ctx.ann.image_id,
                                      turns=[turn], metadata={"culture_id": elem.id}))
    return out
