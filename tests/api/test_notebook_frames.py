"""``Run.to_pandas``: the records table and the headline metrics, checked against the
run's summary.json (read directly) and against the headline recomputed with pandas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import heritage_eval as he
from heritage_eval.report.notebook_frames import ESTIMATE_COLUMNS, records_to_pandas


def test_metrics_frame_holds_the_summary_numbers(hcsu_run: Path) -> None:
    summary = json.loads((hcsu_run / "summary.json").read_text(encoding="utf-8"))
    frame = he.load_run(hcsu_run).to_pandas("metrics")
    assert list(frame.columns) == list(ESTIMATE_COLUMNS)
    expected = [(m, name, est) for m, block in summary["models"].items()
                for name, est in block["metrics"].items()]
    assert len(frame) == len(expected) == 1
    for (_, row), (model, name, est) in zip(frame.iterrows(), expected, strict=True):
        assert (row["model"], row["metric"], row["label"]) == (model, name, est["label"])
        for key in ("value", "ci_low", "ci_high", "n", "stderr", "method"):
            assert row[key] == est[key], key
        assert row["flags"] == ";".join(est["flags"])


def test_records_frame_gives_the_headline_back(hcsu_run: Path) -> None:
    run = he.load_run(hcsu_run)
    frame = run.to_pandas()
    assert frame.columns[:3].tolist() == ["id", "model", "state"]
    assert {"domain", "class", "script", "accuracy", "answer", "reference", "error",
            "response"} <= set(frame.columns)
    assert len(frame) == len(run.records) == run.summary["models"][run.models[0]]["n_records"]
    assert frame["id"].tolist() == [r.id for r in run.records]
    # HCSU Avg. Acc is the unweighted mean over the domains (Bei, Tie) of the accuracy
    # of the answered records (scored + unparsed): recomputed here with pandas
    answered = frame[frame["state"].isin(["scored", "unparsed"])]
    by_domain = answered.groupby("domain")["accuracy"].mean()
    est = run.metrics()["accuracy"]
    assert len(by_domain) == 2 and by_domain.mean() == pytest.approx(est["value"], abs=1e-12)
    assert est["n"] == len(answered)


def test_records_frame_of_nothing_and_bad_choice() -> None:
    assert records_to_pandas([]).empty
    with pytest.raises(ValueError, match="'records' or 'metrics'"):
        he.Run(path=Path("."), summary={}).to_pandas("samples")
    assert he.Run(path=Path("."), summary={}).to_pandas("metrics").empty
