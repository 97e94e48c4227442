"""K-way questions on the real sample: determinism, structure over many seeds, errors,
description modes, and scoring of parsed / unparsed / failed answers."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from heritage_eval.benchmarks.hcsu.discrimination import (
    DiscriminationConfig,
    build_questions,
)
from heritage_eval.benchmarks.hcsu.loader import load_hcsu
from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError, same_character, select_targets
from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
from heritage_eval.benchmarks.hcsu.scoring import (
    average_accuracy,
    cross_domain_note,
    discrimination_records,
    summarize_discrimination,
)
from heritage_eval.benchmarks.hcsu.tables import discrimination_table
from heritage_eval.core.runner import ItemResult
from heritage_eval.core.types import ImagePart, Response, TextPart
from tests.hcsu.conftest import REAL


def _questions(real: HcsuDataset, **kw: object) -> list:  # type: ignore[type-arg]
    cfg = DiscriminationConfig(**{"k": 2, **kw})  # type: ignore[arg-type]
    return build_questions(real, select_targets(real, cfg.per_class, cfg.seed), cfg)


def _dump(plan: list) -> str:  # type: ignore[type-arg]
    return "\n".join(p.question.conversation().model_dump_json() for p in plan)


def test_same_seed_gives_byte_identical_questions(real: HcsuDataset) -> None:
    a, b = _questions(real, seed=7), _questions(real, seed=7)
    assert _dump(a) == _dump(b)
    assert _dump(a) != _dump(_questions(real, seed=8))
    # a question does not depend on which other targets are built (per-sample seeding)
    single = build_questions(real, [a[40].target], DiscriminationConfig(k=2, seed=7))
    assert _dump(single) == _dump([a[40]])


def test_question_structure_over_many_seeds(real: HcsuDataset) -> None:
    orders = set()
    for seed in range(40):
        for pool, k in (("domain", 2), ("all", 4)):
            for p in _questions(real, seed=seed, k=k, pool=pool):
                q = p.question
                keys = [c.class_key for c in q.candidates]
                assert len(set(keys)) == k and keys.count(q.class_key) == 1
                assert q.labels == list("ABCD"[:k])
                assert q.class_of(q.answer) == q.class_key
                if pool == "domain":
                    assert all(key.split("/")[0] == q.domain for key in keys)
                for c in q.candidates:
                    assert c.image != q.target_image  # never the target itself
                    ref_char = c.image.rsplit("/", 1)[1].split("_")[0]
                    # every real class has other characters, so no same-character reference
                    assert not same_character(ref_char, q.char)
                    assert c.description == real.classes[c.class_key].description
                orders.add(q.answer)
    assert orders == {"A", "B", "C", "D"}  # the true class lands on every position


def test_k_larger_than_the_domain_allows_stops_clearly(real: HcsuDataset) -> None:
    with pytest.raises(HcsuConfigError, match=r"K=8 .* offers only 1 .* at most 2 or use "
                                              r"--distractor-pool all"):
        _questions(real, k=8)
    with pytest.raises(HcsuConfigError, match=r"K=5 .* offers only 3 .* at most 4"):
        _questions(real, k=5, pool="all")


def test_request_carries_target_then_k_references_in_label_order(real: HcsuDataset) -> None:
    q = _questions(real, k=4, pool="all")[3].question
    conv = q.conversation()
    parts = conv.turns[0].content
    images = [p.path for p in parts if isinstance(p, ImagePart)]
    assert images == [q.target_image] + [c.image for c in q.candidates]
    text = "\n".join(p.text for p in parts if isinstance(p, TextPart))
    positions = [text.index(f"Candidate {c.label}\nStyle description: {c.description}")
                 for c in q.candidates]
    assert positions == sorted(positions)
    assert "expert in Chinese calligraphy history and script identification" in conv.system
    assert conv.payload["options"] == ["A", "B", "C", "D"]
    assert conv.payload["candidates"]["A"]["image"] == q.candidates[0].image


def test_random_and_generated_description_modes(real: HcsuDataset) -> None:
    for p in _questions(real, descriptions="random", seed=3):
        for c in p.question.candidates:
            assert c.description_from != c.class_key
            assert c.description == real.classes[c.description_from].description
    gen = {"佚名-隶书": "g1", "李斯-篆书": "g2", "Tie/文徵明-楷书": "g3"}
    with pytest.raises(HcsuConfigError, match="1 class\\(es\\) lack the generated"):
        _questions(real, descriptions="generated", generated=gen)
    gen["王羲之-行书"] = "g4"
    plan = _questions(real, descriptions="generated", generated=gen)
    shown = {c.class_key: c.description for p in plan for c in p.question.candidates}
    assert shown == {"Bei/佚名-隶书": "g1", "Bei/李斯-篆书": "g2", "Tie/文徵明-楷书": "g3",
                     "Tie/王羲之-行书": "g4"}


def test_scoring_hand_checked(real: HcsuDataset) -> None:
    plan = _questions(real)
    bei = [p for p in plan if p.target.domain == "Bei"][:4]
    tie = [p for p in plan if p.target.domain == "Tie"][:2]
    missing = dataclasses.replace(tie[1], question=None, error="image file not found: x")
    q = [p.question for p in bei + tie[:1]]
    wrong = next(lab for lab in q[1].labels if lab != q[1].answer)
    answers = {q[0].sample_id: f"The answer is {q[0].answer}.",    # right
               q[1].sample_id: wrong,                              # wrong
               q[2].sample_id: "I cannot tell.",                   # unparsed
               q[4].sample_id: q[4].answer}                        # right (Tie)
    results = {k: ItemResult(k, [Response(text=v)]) for k, v in answers.items()}
    results[q[3].sample_id] = ItemResult(q[3].sample_id, [Response(text=None, error="HTTP 500")])
    recs = discrimination_records([*bei, tie[0], missing], results)
    assert [r["outcome"] for r in recs] == ["scored", "scored", "unparsed", "error", "scored",
                                           "error"]
    per = summarize_discrimination(recs)
    # Bei: 3 answered (1 right, 1 wrong, 1 unparsed) -> accuracy 1/3, invalid 1/3, 1 error
    assert per["Bei"]["n"] == 3 and per["Bei"]["n_error"] == 1
    assert per["Bei"]["accuracy"] == pytest.approx(1 / 3)
    assert per["Bei"]["invalid_rate"] == pytest.approx(1 / 3)
    # Tie: 1 answered, right -> 1.0; the missing image is an error row
    assert per["Tie"]["accuracy"] == 1.0 and per["Tie"]["n_error"] == 1
    assert average_accuracy(per) == pytest.approx((1 / 3 + 1) / 2)


def _row(domain: str, true: str, pred: str | None) -> dict[str, object]:
    return {"domain": domain, "class": true, "predicted_class": pred,
            "outcome": "scored" if pred else "unparsed"}


def test_cross_domain_answers_are_counted_and_explained() -> None:
    # Bei targets a, a, b answered a, Tie/x (a class of the other domain), b.
    # accuracy 2/3; labels = Bei's true classes {a, b}: precision a 1/1, b 1/1 -> 1.0,
    # recall a 1/2, b 1/1 -> 0.75: precision above accuracy because the cross-domain
    # answer enters no Bei class's precision. One cross-domain answer.
    recs = [_row("Bei", "Bei/a", "Bei/a"), _row("Bei", "Bei/a", "Tie/x"),
            _row("Bei", "Bei/b", "Bei/b")]
    per = summarize_discrimination(recs)
    assert per["Bei"]["accuracy"] == pytest.approx(2 / 3)
    assert per["Bei"]["macro_precision"] == pytest.approx(1.0)
    assert per["Bei"]["macro_recall"] == pytest.approx(0.75)
    assert per["Bei"]["n_cross_domain"] == 1
    note = cross_domain_note(per)
    assert "enters no class's precision" in note and "Cross-domain answers: Bei 1" in note
    table = discrimination_table([{"model": "m", "k": 4, "distractor_pool": "all",
                                   "per_domain": per, "avg_accuracy": None}])
    assert "Bei X-dom." in table and " 1 |" in table  # numbers are right-aligned


def test_random_descriptions_are_a_derangement(real: HcsuDataset) -> None:
    # 4 classes with distinct expert texts: for any target, 3 texts are not its class's,
    # so K = 2 (domain pool) and K = 3 (all) are possible; K = 4 is not.
    true_seen = 0
    for seed in range(30):
        for k, pool in ((2, "domain"), (3, "all")):
            for p in _questions(real, descriptions="random", seed=seed, k=k, pool=pool):
                q = p.question
                shown = [c.description for c in q.candidates]
                assert len(set(shown)) == k  # all distinct
                for c in q.candidates:  # nobody shows its own class's text
                    assert c.description != real.classes[c.class_key].description
                    assert c.description == real.classes[c.description_from].description
                # the true class's text is never shown on any candidate
                assert real.classes[q.class_key].description not in shown
                true_seen += 1
    assert true_seen == 30 * 2 * 109
    with pytest.raises(HcsuConfigError, match="needs 4 distinct expert descriptions"):
        _questions(real, descriptions="random", k=4, pool="all")


def test_a_corrupt_image_moves_no_other_question(real: HcsuDataset, tmp_path: Path) -> None:
    # break one PNG of a copy of the two Tie classes (half of its bytes). The rule
    # (schema.StyleClass.images): references are drawn from every annotated image, so
    # every question that does not draw the broken file is the one the repaired data
    # gives (reference: the plan on the intact copy); one that draws it, and the target
    # itself, is that sample's data error naming the file, never a different question.
    # (Before: the file left the pool and the seeded draws of other targets moved.)
    root = tmp_path / "rel"
    shutil.copytree(REAL / "tie", root / "tie")
    shutil.copyfile(REAL / "tie_annotations.json", root / "tie_annotations.json")
    intact = load_hcsu(root)
    bad = root / "tie" / "王羲之-行书" / "之_1.png"
    bad.write_bytes(bad.read_bytes()[:2000])
    ds = load_hcsu(root)
    assert any("corrupt or unreadable image" in p and "之_1.png" in p for p in ds.problems)
    errors = 0
    for seed in range(20):
        for p, good in zip(_questions(ds, seed=seed), _questions(intact, seed=seed),
                           strict=True):
            assert good.question is not None and p.target.id == good.target.id
            touches = p.target.id == "Tie/王羲之-行书/之_1" or any(
                c.image.endswith("王羲之-行书/之_1.png") for c in good.question.candidates)
            if touches:
                assert p.question is None and "之_1.png" in (p.error or "")
                errors += 1
            else:
                assert p.question == good.question
    assert 20 <= errors < 20 * 10  # the target in every seed, a few draws besides


def test_advice_when_no_k_fits() -> None:
    # break-it finding: with every image corrupt the advice was "lower --k to at most 1",
    # but K-way needs K >= 2
    from heritage_eval.benchmarks.hcsu.discrimination import KTooLargeError

    err = KTooLargeError(8, 1, "class A has no usable image", "domain")
    assert "at most 1" not in str(err)
    assert "no K fits this data" in str(err) and "validate hcsu" in str(err)
    assert KTooLargeError(8, 5, "r", "all").advice("--k") == "lower --k to at most 5"
