"""Task 12 — Scene Classification: the scene label of the whole artwork.

Negatives: one label from each of ``n_options - 1`` scene categories other than the true
label's (:mod:`..scenes`), categories chosen at random; the options record their category
in the question params.
"""

from __future__ import annotations

from heritage_eval.benchmarks.muse.context import ImageContext
from heritage_eval.benchmarks.muse.generators.base import Generated
from heritage_eval.benchmarks.muse.options import CORRECT, Candidate, assemble, pick_distractors
from heritage_eval.benchmarks.muse.prompts import choice_format, join, option_lines
from heritage_eval.benchmarks.muse.questions import Question, QuestionTurn

TASK = "scene_classification"


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
    own = tax.category_of[scene]
    pools = {cat: [Candidate("other_scene_category", text=label) for label in labels
                   if label.casefold() != scene.casefold()]
             for cat, labels in tax.labels_by_category().items() if cat != own}
    correct = Candidate(CORRECT, text=scene)
    distractors = pick_distractors(pools, sorted(pools), p.n_options - 1, rng, taken=[correct])
    if len(distractors) < p.n_options - 1:
        return out.skip(TASK, "too few scene categories")
    options, answer = assemble(correct, distractors, rng)
    prompt = join("Which label best describes the overall scene of this artwork?",
                  "Options:\n" + option_lines(options),
                  choice_format("option", len(options)))
    params = ctx.task_params(TASK, option_categories={o.label: tax.category_of[o.text or ""]
                                                      for o in options})
    turn = QuestionTurn(task=TASK, prompt=prompt, images=[ctx.image_ref],
                        answer_format="choice", tag="option", options=options, answer=answer,
                        params=params)
    out.questions.append(Question(id=ctx.qid(TASK, 0), image_id=ctx.ann.image_id,
                                  turns=[turn], metadata={"scene_category": own}))
    return out
