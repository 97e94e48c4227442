"""N-shot description requests: anti-leakage over many seeds, determinism, impossible
settings, word counts, and scoring without a metric (unscored, never 0)."""

from __future__ import annotations

import pytest

from heritage_eval.benchmarks.hcsu.description import (
    DescriptionConfig,
    build_requests,
    word_count,
)
from heritage_eval.benchmarks.hcsu.description_scoring import (
    add_bertscore,
    add_judgments,
    description_records,
    summarize_description,
)
from heritage_eval.benchmarks.hcsu.judging import RICHNESS, TERMINOLOGY
from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError, same_character, select_targets
from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
from heritage_eval.benchmarks.hcsu.tables import description_table, discrimination_table
from heritage_eval.core.runner import ItemResult
from heritage_eval.core.types import ImagePart, Outcome, Response
from heritage_eval.metrics.flags import MetricValue
from heritage_eval.metrics.judge import Judgment


def _plan(real: HcsuDataset, **kw: object) -> list:  # type: ignore[type-arg]
    cfg = DescriptionConfig(**kw)  # type: ignore[arg-type]
    return build_requests(real, select_targets(real, cfg.per_class, cfg.seed), cfg)


def test_traditional_and_simplified_forms_are_one_character() -> None:
    # OpenCC t2s: 長 -> 长, 時 -> 时, 國 -> 国 (checked against the Unicode Unihan data)
    assert same_character("長", "长") and same_character("時", "时")
    assert same_character("國", "国") and not same_character("國", "四")


def test_anti_leakage_over_many_seeds(real: HcsuDataset) -> None:
    seen_classes: set[tuple[str, str]] = set()
    for seed in range(60):
        for shots, pool in ((2, "domain"), (3, "all"), (8, "all")):
            for p in _plan(real, seed=seed, shots=shots, pool=pool):
                r = p.request
                assert len(r.shots) == shots
                assert len({s.image for s in r.shots}) == shots
                for s in r.shots:
                    assert s.class_key != r.class_key
                    assert not same_character(s.char, r.char)  # the paper's rule
                    assert s.description != r.reference
                    assert s.description == real.classes[s.class_key].description
                    if pool == "domain":
                        assert s.class_key.split("/")[0] == r.domain
                    seen_classes.add((r.class_key, s.class_key))
                if shots == 3 and pool == "all":  # three other classes exist: all used
                    assert len({s.class_key for s in r.shots}) == 3
    assert len(seen_classes) == 12  # every ordered pair of the 4 classes occurs


def test_chars_shared_by_all_classes_never_leak(real: HcsuDataset) -> None:
    # SOURCES.md: 不 世 有 在 山 時 長 流 occur in all four classes
    shared = set("不世有在山時長流")
    plan = _plan(real, shots=8, pool="all")
    targets = [p for p in plan if p.target.char in shared]
    assert len(targets) >= 32
    for p in targets:
        assert all(s.char != p.target.char for s in p.request.shots)


def test_same_seed_byte_identical_and_order_free(real: HcsuDataset) -> None:
    a = _plan(real, seed=5)
    dump = "\n".join(p.request.conversation().model_dump_json() for p in a)
    assert dump == "\n".join(p.request.conversation().model_dump_json() for p in
                             _plan(real, seed=5))
    single = build_requests(real, [a[70].target], DescriptionConfig(seed=5))
    assert single[0].request == a[70].request


def test_impossible_shot_count_fails_clearly(real: HcsuDataset) -> None:
    # Bei/佚名-隶书 targets only have Bei/李斯-篆书 (28 images) as domain shots; for the
    # first target, 上_1 (U+4E0A sorts first), the 27 images without 上 are too few for 28.
    with pytest.raises(HcsuConfigError, match=r"anti-leakage rule: target Bei/佚名-隶书/上_1 "
                                              r"\(character 上\) has only 27"):
        _plan(real, shots=28)
    with pytest.raises(HcsuConfigError, match="at least 1"):
        _plan(real, shots=0)


def test_request_shows_shots_then_target(real: HcsuDataset) -> None:
    r = _plan(real, shots=2)[0].request
    parts = r.conversation().turns[0].content
    assert [p.path for p in parts if isinstance(p, ImagePart)] == \
        [s.image for s in r.shots] + [r.target_image]
    assert "at most 50 words" in r.conversation().turns[0].text()


def test_word_count() -> None:
    assert word_count("Bold, square strokes; 蚕头雁尾 tails.") == 8  # 4 words + 4 CJK chars
    assert word_count("") == 0


def test_missing_metric_is_unscored_never_zero(real: HcsuDataset) -> None:
    plan = _plan(real)[:3]
    results = {plan[0].target.id: ItemResult(plan[0].target.id, [Response(text="A tall seal.")]),
               plan[1].target.id: ItemResult(plan[1].target.id, [Response(text="  ")]),
               plan[2].target.id: ItemResult(plan[2].target.id,
                                             [Response(text=None, error="timeout")])}
    recs = description_records(plan, results)
    assert [r["outcome"] for r in recs] == ["scored", "unparsed", "error"]
    add_bertscore(recs, {k: c.description or "" for k, c in real.classes.items()}, None,
                  "bert-score not installed")
    assert recs[0]["bertscore_x10"] is None and recs[0]["bertscore_status"] == "unscored"
    # an empty answer is unparsed: counted in the invalid rate, 0 in a metric mean only
    # when the metric really scored something in the domain (description_scoring
    # docstring). BERTScore never ran here, so the mean stays None, not 0.00 (an earlier
    # bug forced the empty answer to 0.0 and showed 0.00 although BERTScore never ran)
    assert recs[1]["bertscore_x10"] is None and recs[1]["bertscore_status"] == "unparsed"
    per = summarize_description(recs, judged=False)
    assert per["Bei"]["n"] == 2 and per["Bei"]["n_error"] == 1
    assert per["Bei"]["n_unparsed"] == 1
    assert per["Bei"]["bertscore_x10"] is None and per["Bei"]["n_bertscore"] == 0
    assert per["Bei"]["n_bertscore_unscored"] == 1
    assert per["Bei"]["invalid_rate"] == 0.5 and per["Bei"]["terminology"] is None


def _judged(real: HcsuDataset, answers: list[str], verdicts: list[Judgment | None]
            ) -> dict[str, dict]:  # type: ignore[type-arg]
    plan = [p for p in _plan(real) if p.target.domain == "Tie"][:len(answers)]
    results = {p.target.id: ItemResult(p.target.id, [Response(text=a)])
               for p, a in zip(plan, answers, strict=True)}
    recs = description_records(plan, results)
    judgments = {p.target.id: v for p, v in zip(plan, verdicts, strict=True) if v}
    experts = {p.target.class_key: Judgment(Outcome.SCORED, {TERMINOLOGY: 6.0, RICHNESS: 5.0})
               for p in plan}
    add_judgments(recs, judgments, experts)
    return summarize_description(recs, judged=True)


def test_dead_judge_is_unscored_not_zero(real: HcsuDataset) -> None:
    dead = Judgment(Outcome.UNSCORED, reason="judge request failed: HTTP 500")
    # 3 Tie answers: two real descriptions whose judgments failed, one empty answer.
    # Before the fix the empty one scored 0 and the failures were dropped, so the table
    # showed terminology 0.00 (Δ -6.00) with n_judge_unscored 2.
    per = _judged(real, ["Thin strokes.", "Bold ink.", "  "], [dead, dead, None])["Tie"]
    assert (per["terminology"], per["richness"]) == (None, None)
    assert (per["terminology_delta"], per["richness_delta"]) == (None, None)
    assert (per["n"], per["n_judged"], per["n_judge_unscored"]) == (3, 0, 2)
    assert per["invalid_rate"] == pytest.approx(1 / 3)


def test_judge_means_count_empty_as_zero_and_skip_failures(real: HcsuDataset) -> None:
    ok = Judgment(Outcome.SCORED, {TERMINOLOGY: 4.0, RICHNESS: 2.0})
    dead = Judgment(Outcome.UNSCORED, reason="unparsable")
    per = _judged(real, ["Thin strokes.", "Bold ink.", ""], [ok, dead, None])["Tie"]
    # by hand: the judged answer (4 / 2) and the empty answer as 0 enter the means, the
    # failed judgment does not: Term. (4 + 0) / 2 = 2.0, Rich. (2 + 0) / 2 = 1.0.
    # Δ over the same two rows against the experts' 6 / 5: 2 - 6 = -4, 1 - 5 = -4
    assert (per["terminology"], per["richness"]) == (2.0, 1.0)
    assert (per["terminology_delta"], per["richness_delta"]) == (-4.0, -4.0)
    assert (per["n_judged"], per["n_judge_unscored"], per["n_unparsed"]) == (1, 1, 1)
    assert per["invalid_rate"] == pytest.approx(1 / 3)  # 1 empty of 3 answered


def test_empty_description_scores_zero_bertscore(real: HcsuDataset) -> None:
    plan = [p for p in _plan(real) if p.target.domain == "Tie"][:3]
    texts = ["Thin strokes.", "", "Bold ink."]
    results = {p.target.id: ItemResult(p.target.id, [Response(text=t)])
               for p, t in zip(plan, texts, strict=True)}
    recs = description_records(plan, results)

    class Fixed:  # a scorer giving F1 0.8, then 0.5, to the non-empty answers
        def score_pairs(self, cands: list[str], refs: list[str]) -> list[MetricValue]:
            assert cands == ["Thin strokes.", "Bold ink."]  # the empty one is not sent
            return [MetricValue(0.8), MetricValue(0.5)]

    add_bertscore(recs, {k: c.description or "" for k, c in real.classes.items()},
                  Fixed())  # type: ignore[arg-type]
    per = summarize_description(recs, judged=False)["Tie"]
    # by hand: x10 scale, (8.0 + 0 + 5.0) / 3 = 4.333...; the empty answer counts as 0
    assert per["bertscore_x10"] == pytest.approx(13.0 / 3)
    assert (per["n_bertscore"], per["n_unparsed"], per["invalid_rate"]) == (2, 1, 1 / 3)


def test_tables_show_the_invalid_rate() -> None:
    disc = {"model": "m", "k": 2, "distractor_pool": "domain",
            "per_domain": {"Bei": {"n": 4, "n_error": 0, "accuracy": 0.5,
                                   "invalid_rate": 0.25}}}
    md = discrimination_table([disc])
    header, _, row = md.splitlines()[:3]
    cells = dict(zip([c.strip() for c in header.strip("|").split("|")],
                     [c.strip() for c in row.strip("|").split("|")], strict=True))
    assert cells["Bei Invalid"] == "25.00"  # 0.25 as a percentage with two decimals
    desc = {"model": "m", "shots": 2, "per_domain": {"Tie": {"n": 3, "invalid_rate": 1 / 3}}}
    row = next(line for line in description_table([desc]).splitlines() if "| m " in line)
    assert "33.33" in row  # 1 empty of 3 answered


def test_description_table_shows_unscored_counts() -> None:
    # a domain nothing was judged in: "–" with the unscored count beside it
    entry = {"model": "openai:vlm", "shots": 2, "judge": "openai:dead",
             "per_domain": {"Tie": {"n": 3, "n_error": 0, "bertscore_x10": None,
                                    "terminology": None, "richness": None,
                                    "n_bertscore_unscored": 2, "n_judge_unscored": 2}}}
    md = description_table([entry])
    row = next(line for line in md.splitlines() if "openai:vlm" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:6] == ["openai:vlm", "2", "openai:dead", "–", "–", "–"]
    assert "BERTScore 2 / judge 2" in cells
