"""Issue 19, denominators: a model's own failures are wrong answers by default, the rest
is left out, and two models are never ranked over different samples without a word.

Two models on ten Ancient-Bench samples through the real CLI against a local
OpenAI-compatible server: "steady" answers every sample exactly, "shy" refuses 2 of 10
(20 %: a content filter and an empty answer) and answers the other 8 exactly. The numbers
in the comments are worked out by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.cli.main import main
from heritage_eval.report.compare import compare_runs
from tests.fake_server import Scripted, chat_reply, fake_openai_server
from tests.hardening.test_ab_outcomes import FILTERED, _release, _side

#: sample stem -> (image side, ground truth); sides 20..29 tell the samples apart
ROWS = {f"s{i}": (20 + i, gt) for i, gt in enumerate(
    ["天地玄黃", "宇宙洪荒", "日月盈昃", "辰宿列張", "寒來暑往",
     "秋收冬藏", "閏餘成歲", "律呂調陽", "雲騰致雨", "露結為霜"])}
TRUTH = {side: gt for side, gt in ROWS.values()}


def _steady(body: dict[str, Any]) -> Scripted:
    return chat_reply(f"<res>{TRUTH[_side(body)]}</res>")


def _shy(body: dict[str, Any]) -> Scripted:
    side = _side(body)
    if side == 20:
        return Scripted(body=FILTERED)  # content filter
    if side == 21:
        return chat_reply(None)  # content null, finish_reason stop: an empty answer
    return chat_reply(f"<res>{TRUTH[side]}</res>")


def _run(data: Path, out: Path, responder: Any, name: str, *extra: str) -> dict[str, Any]:
    with fake_openai_server() as srv:
        srv.responder = responder
        rc = main(["run", "ancient-bench", "--data", str(data), "--model", f"openai:{name}",
                   "--base-url", srv.base_url, "--retries", "0", "--out", str(out), *extra])
    assert rc in (0, 1)
    return dict(json.loads((out / "summary.json").read_text("utf-8")))


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _release(tmp_path_factory.mktemp("data"), ROWS)


def test_model_failures_are_wrong_answers_by_default(data: Path, tmp_path: Path) -> None:
    shy = _run(data, tmp_path / "shy", _shy, "shy")
    block = shy["models"]["openai:shy"]
    # 10 samples in the denominator, 8 exact: NED 8 / 10 = 0.8 (the 2 failures score 0)
    assert block["metrics"]["ned_score"]["value"] == pytest.approx(0.8)
    assert block["metrics"]["ned_score"]["n"] == 10
    assert block["states"]["error"] == 0
    failures = shy["model_failures"]["openai:shy"]
    assert failures["policy"] == "wrong"
    assert failures["kinds"] == {"content_filter": 1, "empty_answer": 1}
    assert failures["overall"] == {"n_records": 10, "n_failed": 2, "rate": 0.2}
    assert failures["groups"]["Seal"]["rate"] == 0.2
    assert "count as wrong answers" in shy["denominator_rule"]
    recs = [json.loads(line) for line in (tmp_path / "shy" / "samples.jsonl").open()]
    kinds = {r["id"]: r["details"].get("model_failure") for r in recs}
    assert kinds["seals/s0"] == "content_filter" and kinds["seals/s1"] == "empty_answer"
    assert sum(k is not None for k in kinds.values()) == 2
    md = (tmp_path / "shy" / "summary.md").read_text("utf-8")
    assert "| All | 10 | 2 | 20.00 |" in md  # the model-failure table


def test_exclude_keeps_the_old_rule_and_says_so(data: Path, tmp_path: Path) -> None:
    shy = _run(data, tmp_path / "shy", _shy, "shy", "--model-failures", "exclude")
    block = shy["models"]["openai:shy"]
    # 8 answered, all exact: NED 1.0 over n = 8 (the 2 failures are errors)
    assert block["metrics"]["ned_score"]["value"] == pytest.approx(1.0)
    assert block["metrics"]["ned_score"]["n"] == 8
    assert block["states"]["error"] == 2
    assert shy["model_failures"]["openai:shy"]["policy"] == "exclude"
    assert "left out of the scores" in shy["denominator_rule"]
    recs = {r["id"]: r for r in map(json.loads, (tmp_path / "shy" / "samples.jsonl").open())}
    assert recs["seals/s1"]["error"] == "empty answer"
    assert recs["seals/s0"]["error"] == "refused: content filter"


def test_compare_ranks_on_the_same_samples_and_says_so(data: Path, tmp_path: Path) -> None:
    _run(data, tmp_path / "steady", _steady, "steady")
    _run(data, tmp_path / "shy", _shy, "shy")
    _run(data, tmp_path / "shy_ex", _shy, "shy", "--model-failures", "exclude")
    # default rule: both on all 10 samples; steady 1.0, shy 0.8: nothing dropped
    comp = compare_runs([tmp_path / "steady", tmp_path / "shy"])
    assert comp.sample_set is not None and comp.sample_set.same
    assert comp.sample_set.n_common == 10
    values = [m.block["metrics"]["ned_score"]["value"] for m in comp.models]
    assert values == pytest.approx([1.0, 0.8])
    # the excluding run counts 8: compare scores both on those 8 and names the 2 dropped
    comp = compare_runs([tmp_path / "steady", tmp_path / "shy_ex"])
    assert comp.sample_set is not None and comp.sample_set.n_common == 8
    assert [m.block["metrics"]["ned_score"]["n"] for m in comp.models] == [8, 8]
    assert comp.sample_set.dropped["openai:steady"]["n"] == 2
    assert any("scored on the 8 sample(s) all models counted" in w for w in comp.warnings)
    assert any("left out in this run: content_filter: refused: content filter" in w
               for w in comp.warnings)
    # the runs scored the model's failures by different rules: named
    assert any("different rules" in w and "exclude" in w for w in comp.warnings)
    # --samples all keeps each run's own numbers and says they are not comparable
    own = compare_runs([tmp_path / "steady", tmp_path / "shy_ex"], samples="all")
    assert any("DIFFERENT sample sets" in w for w in own.warnings)
    assert [m.block["metrics"]["ned_score"]["n"] for m in own.models] == [10, 8]


def test_compare_cli_prints_the_rule(data: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    _run(data, tmp_path / "steady", _steady, "steady")
    _run(data, tmp_path / "shy_ex", _shy, "shy", "--model-failures", "exclude")
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "steady"), str(tmp_path / "shy_ex"),
                 "--out", str(tmp_path / "cmp")]) == 0
    assert "scored on the 8 sample(s) all models counted" in capsys.readouterr().err
    md = (tmp_path / "cmp" / "compare.md").read_text("utf-8")
    assert "Samples: every model is scored on the 8 sample(s)" in md


def test_muse_dialogue_cut_by_a_refusal_counts_every_later_turn_wrong(tmp_path: Path) -> None:
    # kind: a multi-turn question whose first turn the model refuses: the later turns are
    # never sent. Under the default rule they are the same model failure (wrong answers,
    # in the denominator), not errors that leave it; under 'exclude' they stay errors.
    from PIL import Image

    from heritage_eval.benchmarks.muse.questions import (
        OptionRecord,
        Question,
        QuestionFileHeader,
        QuestionTurn,
        write_questions,
    )

    Image.new("RGB", (64, 48), (200, 30, 30)).save(tmp_path / "art1.png")
    options = [OptionRecord(label="A", text="harbour", distractor_type="correct"),
               OptionRecord(label="B", text="market", distractor_type="distractor")]
    turns = [QuestionTurn(task="scene_classification", images=["art1.png"], tag="option",
                          prompt=f"TURN{t} which scene?", answer_format="choice",
                          options=options, answer="A") for t in range(3)]
    qfile = tmp_path / "q.jsonl"
    write_questions(qfile, QuestionFileHeader(generator_version="test", seed=0,
                                              tasks=["scene_classification"]),
                    [Question(id="art1:dialogue:0", image_id="art1", turns=turns)])

    def reply(body: dict[str, Any]) -> Scripted:
        return Scripted(body=FILTERED)  # the first turn is refused; nothing else is asked

    for policy, states in (("wrong", ["unparsed"] * 3), ("exclude", ["error"] * 3)):
        out = tmp_path / policy
        with fake_openai_server() as srv:
            srv.responder = reply
            main(["run", "muse", "--questions", str(qfile), "--model", "openai:vlm",
                  "--base-url", srv.base_url, "--retries", "0",
                  "--model-failures", policy, "--out", str(out)])
            assert len(srv.requests) == 1  # turn 0 only (--retries 0)
        recs = [json.loads(line) for line in (out / "samples.jsonl").open()]
        assert [r["state"] for r in recs] == states
        # the unsent turns are the model failure "dialogue_cut" under both rules
        assert [r["details"]["model_failure"] for r in recs] == [
            "content_filter", "dialogue_cut", "dialogue_cut"]
        summary = json.loads((out / "summary.json").read_text("utf-8"))
        block = summary["model_failures"]["openai:vlm"]
        assert block["kinds"] == {"content_filter": 1, "dialogue_cut": 2}
        if policy == "wrong":
            assert block["overall"] == {"n_records": 3, "n_failed": 3, "rate": 1.0}
        else:
            assert recs[1]["error"] == ("not answered: an earlier turn of the dialogue was "
                                        "the model's failure")
            assert summary["excluded"]["openai:vlm"]["n"] == 0  # not network / data errors
