"""``score ancient-bench`` records the rule it scores the model's own failures by.

The rule (score_write.py): as `run`'s default, ``--model-failures wrong`` (an empty
answer is scored 0 and stays in the denominator); the summary's ``model_failures``
block says so, so that ``compare`` of a run with the re-score of its own export finds
the same rule on both sides (before: "wrong" against "unknown", a warning every time).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.report.test_resumed_owner import _scored_folder

from heritage_eval.cli.main import main
from heritage_eval.report.sample_sets import policy_notes


def test_the_rule_is_recorded_and_failures_counted(tmp_path: Path) -> None:
    # guards against: a score folder whose failure rule reads as unknown
    gt = tmp_path / "gt" / "seals"
    gt.mkdir(parents=True)
    gt.joinpath("conv.jsonl").write_text("".join(
        json.dumps({"image": f"{n}.png", "human_gt": "長樂未央"}) + "\n" for n in "ab"),
        encoding="utf-8")
    res = tmp_path / "pred" / "m" / "seals" / "results"
    res.mkdir(parents=True)
    res.joinpath("a.json").write_text(json.dumps({"answer": "長樂未央"}), "utf-8")
    res.joinpath("b.json").write_text(json.dumps({"answer": ""}), "utf-8")  # a failure
    out = tmp_path / "out"
    assert main(["score", "ancient-bench", "--data", str(tmp_path / "gt"), "--predictions",
                 str(tmp_path / "pred"), "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    block = summary["model_failures"]["m"]
    # by hand: 2 records, the empty answer the one failure
    assert block["policy"] == "wrong" and block["kinds"] == {"empty_answer": 1}
    assert block["overall"]["n_records"] == 2 and block["overall"]["n_failed"] == 1
    run_like = {"model_failures": {"rapidocr": {"policy": "wrong"}}}
    assert policy_notes([("run", run_like), ("score", summary)]) == []


def test_an_unusable_prediction_exports_as_a_listed_blank(tmp_path: Path) -> None:
    # guards against: the break-it report (an unusable file's record exported as
    # {"answer": null} and not listed in export_errors.jsonl)
    from heritage_eval.report.export_predictions import ERRORS_FILE, export_predictions

    gt, pred, _ = _scored_folder(tmp_path)  # one seals line, model m
    (pred / "m" / "seals" / "results" / "a.json").write_text("{not json", "utf-8")
    out = tmp_path / "out-unusable"
    assert main(["score", "ancient-bench", "--data", str(gt), "--predictions", str(pred),
                 "--out", str(out)]) == 0
    result = export_predictions(out, tmp_path / "export")
    written = tmp_path / "export" / "m" / "seals" / "results" / "a.json"
    assert json.loads(written.read_text("utf-8"))["answer"] == ""
    assert len(result.blanks) == 1
    listed = [json.loads(line) for line in (tmp_path / "export" / ERRORS_FILE)
              .read_text("utf-8").splitlines()]
    assert len(listed) == 1 and "unusable:" in json.dumps(listed[0], ensure_ascii=False)
    assert "malformed JSON" in json.dumps(listed[0])
