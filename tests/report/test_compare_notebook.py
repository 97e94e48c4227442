"""The comparison in a notebook: one-line repr, bounded and escaped ``_repr_html_``,
``to_pandas`` of the models table and of the paired differences. Runs are written by
hand; expected values are computed by hand (comments) or read from each run's own
summary.json."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.summary import envelope
from heritage_eval.report.compare import PairedRow, compare_runs

SCORE = MetricSpec("score", "Score")
REF = [0.9, 0.5, 0.3, 0.8, 0.6]
OTH = [0.7, 0.6, 0.1, 0.8, 0.2]
EVIL = "<script>alert(1)</script>"


def _records(model: str, values: list[float]) -> list[SampleRecord]:
    return [SampleRecord(id=f"s{i}", benchmark="toy", model=model, state="scored",
                         groups={"medium": "<m>"}, scores={"score": v},
                         reference=EVIL if i == 2 else f"ref {i}", answer=f"{model} & {i}")
            for i, v in enumerate(values)]


def _write(path: Path, records: list[SampleRecord], partial: bool = False) -> Path:
    path.mkdir(parents=True)
    (path / "samples.jsonl").write_text("".join(r.to_json_line() + "\n" for r in records),
                                        encoding="utf-8")
    summary = envelope("toy", records, [SCORE], ["medium"], partial=partial)
    (path / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return path


def _est(run: Path, model: str) -> dict[str, Any]:
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    return dict(summary["models"][model]["metrics"]["score"])


def _interval(est: dict[str, Any]) -> str:
    v, lo, hi = (100 * est[k] for k in ("value", "ci_low", "ci_high"))
    return f"{v:.2f} [{lo:.2f}, {hi:.2f}]"


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    return (_write(tmp_path / "a", _records("a", REF)),
            _write(tmp_path / "b", _records("b", OTH), partial=True))


def test_models_frame_is_the_summary_numbers(runs: tuple[Path, Path]) -> None:
    frame = compare_runs(list(runs)).to_pandas()
    assert frame.columns[:5].tolist() == ["model", "model_spec", "run", "partial", "ranked"]
    assert {"score", "score_ci_low", "score_ci_high", "score_n", "score_flags",
            "invalid_rate", "invalid_rate_ci_high", "records", "error"} <= set(frame.columns)
    assert frame["model"].tolist() == ["a", "b"]
    assert frame["partial"].tolist() == [False, True]
    assert frame["ranked"].tolist() == [True, False]  # a PARTIAL row is not ranked
    # by hand: mean(REF) = 3.1 / 5 = 0.62, mean(OTH) = 2.4 / 5 = 0.48
    assert frame["score"].tolist() == pytest.approx([0.62, 0.48])
    for (_, row), run, model in zip(frame.iterrows(), runs, "ab", strict=True):
        est = _est(run, model)
        assert (row["score"], row["score_ci_low"], row["score_ci_high"], row["score_n"]) == (
            est["value"], est["ci_low"], est["ci_high"], est["n"])
        assert row["records"] == 5 and row["run"] == str(run)


def test_paired_frame(runs: tuple[Path, Path]) -> None:
    comp = compare_runs(list(runs))
    frame = comp.to_pandas("paired")
    assert frame.columns.tolist() == [f.name for f in fields(PairedRow)]
    (row,) = frame.to_dict("records")
    # by hand: mean(OTH - REF) = (-0.2 + 0.1 - 0.2 + 0 - 0.4) / 5 = -0.14 on 5 pairs
    assert (row["model"], row["reference"], row["n"]) == ("b", "a", 5)
    assert row["difference"] == pytest.approx(-0.14)
    assert (row["ci_low"], row["ci_high"]) == (comp.paired[0].ci_low, comp.paired[0].ci_high)
    with pytest.raises(ValueError, match="'models' or 'paired'"):
        comp.to_pandas("groups")


def test_repr_is_one_short_line(runs: tuple[Path, Path]) -> None:
    comp = compare_runs(list(runs))
    # by hand: |OTH - REF| >= 0.1 on s0, s1, s2 and s4: 4 disagreements
    warned = f", {len(comp.warnings)} warning(s)" if comp.warnings else ""
    assert repr(comp) == (
        f"<Comparison toy: ref a, Score: a {_interval(_est(runs[0], 'a'))}; "
        f"b {_interval(_est(runs[1], 'b'))}, 2 models, 5 common samples, "
        f"4 disagreements, 1 PARTIAL run(s){warned}>")
    assert len(repr(comp)) <= 200


def test_html_is_escaped(runs: tuple[Path, Path]) -> None:
    page = compare_runs(list(runs))._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "b &amp; 2" in page and "medium=&lt;m&gt;" in page
    assert "<b>PARTIAL</b>" in page
    assert _interval(_est(runs[0], "a")) in page and "-14.00" in page  # the difference


def test_html_is_bounded(tmp_path: Path) -> None:
    # 2,000 records each, every one a disagreement (scores 0 / 1), texts of 10,000 chars
    n = 2000
    a = [SampleRecord(id=f"s{i}", benchmark="toy", model="a", state="scored",
                      scores={"score": 1.0}, reference="r" * 10_000, answer="x" * 10_000)
         for i in range(n)]
    b = [r.model_copy(update={"model": "b", "scores": {"score": 0.0}}) for r in a]
    comp = compare_runs([_write(tmp_path / "a", a), _write(tmp_path / "b", b)])
    assert len(comp.disagreements) == n
    page = comp._repr_html_()
    assert f"Largest 5 of {n:,} disagreements" in page
    assert page.rsplit("<table>", 1)[1].count("<tr>") == 1 + 5
    assert len(page) < 12_000 and len(repr(comp)) <= 200
