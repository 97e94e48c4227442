"""A prediction file that exists but gives no answer is the model's failure, treated as a
missing file under every ``--missing`` policy (docs/denominators.md, "Predictions made
elsewhere"); a UTF-8 byte-order mark is accepted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heritage_eval.benchmarks.ancient_bench.loader import load_release
from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.predictions import (
    UnusablePredictionsError,
    read_prediction,
)
from heritage_eval.benchmarks.ancient_bench.predictions_score import score_prediction_folder
from heritage_eval.cli.main import main
from heritage_eval.core.store import read_jsonl

#: Every kind of unusable prediction file the user met: its bytes, and the start of the
#: reason after the path (``:1:`` = the line of malformed JSON).
BROKEN: dict[str, tuple[bytes, str]] = {
    "malformed": ('{"answer": "翦'.encode(), ":1: malformed JSON (Unterminated string"),
    "number": (b'{"answer": 123}', ": 'answer' is int, expected a string or null"),
    "no-answer": (b'{"text": "x"}', ": no 'answer' field"),
    "list": (b'["x"]', ": a JSON array, not an object with an 'answer' field"),
    "empty-file": (b"", ":1: malformed JSON (an empty file)"),
    "not-utf8": (b'{"answer": "\xff"}', ": not valid UTF-8"),
}
POLICIES = ("empty", "skip", "error")

#: Ground truth of three seal lines; the predictions of a and b, scored by hand with the
#: official protocol (one token per character): a exact -> NED 1, F1 1; b "平" for "平舆"
#: -> edit distance 1 over max length 2 -> NED 1 - 1/2 = 0.5, overlap 1 -> F1 2*1/(1+2)
#: = 2/3. Line c gets the file under test.
GT = [("a", "王印"), ("b", "平舆"), ("c", "翦")]
GOOD = {"a": "王印", "b": "平"}
#: the seal means by hand: empty -> (1 + 0.5 + 0) / 3 and (1 + 2/3 + 0) / 3; skip -> the
#: two good lines only, (1 + 0.5) / 2 and (1 + 2/3) / 2
MEANS = {"empty": (0.5, 5 / 9), "skip": (0.75, 5 / 6)}


def _setup(root: Path, c_bytes: bytes | None) -> tuple[Path, Path]:
    """``root/gt`` (the three lines) and ``root/pred/m1`` (a, b good; c written with
    ``c_bytes``, or absent when ``None``)."""
    gt = root / "gt" / "seals"
    gt.mkdir(parents=True)
    gt.joinpath("conv.jsonl").write_text("".join(
        json.dumps({"image": f"{s}.png", "human_gt": t}, ensure_ascii=False) + "\n"
        for s, t in GT), encoding="utf-8")
    res = root / "pred" / "m1" / "seals" / "results"
    res.mkdir(parents=True)
    for stem, answer in GOOD.items():
        res.joinpath(f"{stem}.json").write_text(json.dumps({"answer": answer}),
                                                encoding="utf-8")
    if c_bytes is not None:
        res.joinpath("c.json").write_bytes(c_bytes)
    return root / "gt", root / "pred"


def _score(root: Path, policy: str) -> tuple[int, Path]:
    out = root / f"out-{policy}"
    rc = main(["score", "ancient-bench", "--data", str(root / "gt"), "--predictions",
               str(root / "pred"), "--out", str(out), "--missing", policy])
    return rc, out


def _summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_an_unusable_file_follows_the_missing_policy(tmp_path: Path, kind: str, policy: str,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    # guards against: a broken prediction file left out of the means as an "error" while a
    # missing one scored 0, so that broken files raised a model's score
    data, why = BROKEN[kind]
    _setup(tmp_path, data)
    c_file = tmp_path / "pred" / "m1" / "seals" / "results" / "c.json"
    rc, out = _score(tmp_path, policy)
    err = capsys.readouterr().err
    if policy == "error":  # stops before writing anything, naming the file (and line)
        assert rc == 2
        assert f"{c_file}{why}" in err and "1 prediction file(s) cannot be used" in err
        assert not (out / "summary.json").exists()
        return
    assert rc == 0
    res = _summary(out)["results"][0]
    seal = res["per_category"]["seals"]
    ned, f1 = MEANS[policy]
    assert (seal["n"], seal["n_error"]) == ((3 if policy == "empty" else 2), 0)
    assert seal["ned_score"] == ned and seal["f1"] == pytest.approx(f1, abs=1e-15)
    assert res["overall"]["ned_score"] == ned  # one medium: Overall is its mean
    assert res["states"] == {"scored": seal["n"], "unparsed": 0, "error": 0, "unscored": 0}
    [entry] = res["unusable_predictions"]
    assert (entry["id"], entry["path"]) == ("seals/c", str(c_file))
    assert entry["reason"].startswith(f"{c_file}{why}")
    assert res["missing_predictions"] == []
    assert f"m1: 1 unusable prediction file(s) {'scored 0' if policy == 'empty' else 'left out'}" \
        in err and f"first: {c_file}{why}" in err
    rows = {r["id"]: r for r in read_jsonl(out / "samples.jsonl")}
    if policy == "skip":
        assert set(rows) == {"seals/a", "seals/b"}
        return
    c = rows["seals/c"]  # a scored empty answer that keeps why
    assert (c["state"], c["scores"]) == ("scored", {"ned_score": 0.0, "f1": 0.0})
    assert c["details"]["model_failure"] == "unusable_prediction"
    assert c["details"]["prediction_error"] == entry["reason"]
    assert c["turns"][0]["response"]["error"] == entry["reason"]
    # 1 model failure of 3 records (details.model_failure, docs/denominators.md)
    assert _summary(out)["models"]["m1"]["model_failure_rate"]["value"] == 1 / 3


@pytest.mark.parametrize("policy", ["empty", "skip"])
@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_an_unusable_file_scores_as_a_missing_one(tmp_path: Path, kind: str,
                                                  policy: str) -> None:
    # guards against: the two failures of the model counted by different rules (the
    # means of a broken c.json must equal those of no c.json at all)
    broken_root, missing_root = tmp_path / "broken", tmp_path / "missing"
    _setup(broken_root, BROKEN[kind][0])
    _setup(missing_root, None)
    got = [_summary(_score(r, policy)[1])["results"][0] for r in (broken_root, missing_root)]
    for key in ("overall", "states", "overall_covers"):
        assert got[0][key] == got[1][key], key
    for broken, missing in zip(got[0]["per_category"].values(),
                               got[1]["per_category"].values(), strict=True):
        for key in ("n", "ned_score", "f1", "n_error"):  # (n_missing: the missing list)
            assert broken[key] == missing[key], key


def test_missing_and_unusable_under_error_stop_with_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: a run that stops for a missing file (exit 1) without naming the
    # broken one beside it
    _setup(tmp_path, BROKEN["number"][0])
    (tmp_path / "pred" / "m1" / "seals" / "results" / "a.json").unlink()
    rc, out = _score(tmp_path, "error")
    err = capsys.readouterr().err
    assert rc == 2 and not out.exists()
    assert ("1 prediction file(s) cannot be used (--missing error stops at them, as the "
            "official evaluator does); 1 other prediction file(s) are missing") in err


def test_a_medium_of_broken_files_stays_in_overall(tmp_path: Path) -> None:
    # guards against: the user's case, a medium whose every file was broken dropping out
    # of Overall (whose mean then rose); by hand: Seal (1 + 0.5 + 0) / 3 = 0.5, Calligraphy
    # 0 / 1 = 0, Overall = (0.5 + 0) / 2 = 0.25
    _setup(tmp_path, BROKEN["list"][0])
    cal = tmp_path / "gt" / "calligraphys"
    cal.mkdir()
    cal.joinpath("conv.jsonl").write_text(
        json.dumps({"image": "k.png", "human_gt": "永和"}, ensure_ascii=False) + "\n",
        encoding="utf-8")
    res_dir = tmp_path / "pred" / "m1" / "calligraphys" / "results"
    res_dir.mkdir(parents=True)
    res_dir.joinpath("k.json").write_text("{broken", encoding="utf-8")
    res = _summary(_score(tmp_path, "empty")[1])["results"][0]
    assert res["overall_covers"] == ["seals", "calligraphys"]
    assert res["per_category"]["calligraphys"]["ned_score"] == 0.0
    assert res["overall"]["ned_score"] == 0.25


@pytest.mark.parametrize("body", [b'{"answer": "\xe7\x8e\x8b\xe5\x8d\xb0"}',
                                  b'{"answer": "\xe7\x8e\x8b\xe5\x8d\xb0"}\r\n'])
def test_a_byte_order_mark_is_accepted(tmp_path: Path, body: bytes) -> None:
    # guards against: a prediction file written by a Windows editor ("\ufeff" first)
    # refused as malformed JSON; the answer is 王印 (UTF-8 bytes above), the ground truth
    # of line a, so its scores are 1 and 1
    path = tmp_path / "p.json"
    path.write_bytes(b"\xef\xbb\xbf" + body)
    pred = read_prediction(path)
    assert (pred.answer, pred.error, pred.missing) == ("王印", None, False)
    _setup(tmp_path / "run", None)
    a = tmp_path / "run" / "pred" / "m1" / "seals" / "results" / "a.json"
    a.write_bytes(b"\xef\xbb\xbf" + body)
    rel = load_release(tmp_path / "run" / "gt", check_images=False)
    out = score_prediction_folder(rel, tmp_path / "run" / "pred", ["m1"],
                                  NormalizationFlags(), "skip")
    row = {r.id: r for r in out.records}["seals/a"]
    assert (row.ned_score, row.f1) == (1.0, 1.0) and out.unusable == []
    # only a leading mark is dropped: one in the middle of the text stays malformed JSON
    path.write_bytes(b'{"answer": 1}\xef\xbb\xbf')
    assert "malformed JSON" in str(read_prediction(path).error)


#: a line's prediction: good (the ground truth itself, 1 / 1), wrong (no shared
#: character, 0 / 0), missing, or one of the broken kinds
STATES = st.lists(st.sampled_from(["good", "wrong", "missing", *sorted(BROKEN)]),
                  min_size=1, max_size=8)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(states=STATES, policy=st.sampled_from(["empty", "skip"]))
def test_generated_prediction_sets(tmp_path_factory: pytest.TempPathFactory,
                                   states: list[str], policy: str) -> None:
    # guards against: any mix of files where the mean is not the rule's: under empty the
    # good lines over all lines; under skip the good lines over the lines whose file gave
    # an answer (good or wrong); the listed files are exactly the others
    root = tmp_path_factory.mktemp("gen")
    gt = root / "gt" / "seals"
    gt.mkdir(parents=True)
    res = root / "pred" / "m1" / "seals" / "results"
    res.mkdir(parents=True)
    lines = []
    for i, state in enumerate(states):
        lines.append(json.dumps({"image": f"s{i}.png", "human_gt": "王"},
                                ensure_ascii=False) + "\n")
        if state in ("good", "wrong"):
            res.joinpath(f"s{i}.json").write_text(
                json.dumps({"answer": "王" if state == "good" else "印"}), encoding="utf-8")
        elif state != "missing":
            res.joinpath(f"s{i}.json").write_bytes(BROKEN[state][0])
    gt.joinpath("conv.jsonl").write_text("".join(lines), encoding="utf-8")
    rel = load_release(root / "gt", check_images=False)
    if "good" not in states and "wrong" not in states and policy == "skip":
        return  # nothing left to average
    out = score_prediction_folder(rel, root / "pred", ["m1"], NormalizationFlags(),
                                  policy)  # type: ignore[arg-type]
    n_good = states.count("good")
    answered = n_good + states.count("wrong")
    denominator = len(states) if policy == "empty" else answered
    scores = [r.ned_score for r in out.records]
    assert len(scores) == denominator and all(r.state.value == "scored"
                                              for r in out.records)
    assert sum(s or 0.0 for s in scores) == n_good  # each good line 1, every other 0
    assert len(out.missing) == states.count("missing")
    assert len(out.unusable) == len(states) - answered - states.count("missing")
    if out.unusable:  # --missing error stops at them, before scoring anything
        with pytest.raises(UnusablePredictionsError):
            score_prediction_folder(rel, root / "pred", ["m1"], NormalizationFlags(),
                                    "error")
