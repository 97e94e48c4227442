"""Notebook views of a run and of a sample record: one short repr line, a bounded and
escaped ``_repr_html_``. Expected numbers are read from the run's own summary.json and
formatted by hand (value x 100 with the metric's decimals)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import heritage_eval as he
from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.record import ResponseRecord, SampleRecord, TurnRecord
from heritage_eval.core.summary import envelope
from heritage_eval.report.notebook_html import MAX_SAMPLES
from heritage_eval.report.notebook_repr import run_repr

LIMIT = 200  # the promised bound on every repr
ACC = MetricSpec("acc", "Acc", macro_over="medium", by=("medium",))


def _interval(est: dict[str, Any], decimals: int = 2) -> str:
    """``69.50 [53.49, 85.51]``: value and bounds x 100, as the tables print them."""
    v, lo, hi = (100 * est[k] for k in ("value", "ci_low", "ci_high"))
    return f"{v:.{decimals}f} [{lo:.{decimals}f}, {hi:.{decimals}f}]"


def _sample_rows(page: str) -> int:
    """Rows of the samples table (the last table of a run's view)."""
    return page.rsplit("<table>", 1)[1].count("<tr>") - 1  # minus the header row


@pytest.mark.slow
def test_demo_run_repr_and_html(ab_run: Path) -> None:
    run = he.load_run(ab_run)
    summary = json.loads((ab_run / "summary.json").read_text("utf-8"))
    ned = summary["models"]["rapidocr"]["metrics"]["ned_score"]
    text = repr(run)
    assert text.startswith(f"<Run ancient-bench: rapidocr, 27 records, NED {_interval(ned)}")
    assert text.endswith(f"/{ab_run.name}>") and "PARTIAL" not in text
    assert "\n" not in text and len(text) <= LIMIT
    page = run._repr_html_()
    f1 = summary["models"]["rapidocr"]["metrics"]["f1"]
    assert _interval(ned) in page and _interval(f1) in page
    assert _sample_rows(page) == MAX_SAMPLES and "First 5 of 27 samples" in page
    assert run.records[0].id in page and len(page) < 10_000


def test_partial_and_two_model_runs(hcsu_partial_run: Path, ab_score_run: Path) -> None:
    part = he.load_run(hcsu_partial_run)
    assert part.partial and ", PARTIAL," in repr(part) and len(repr(part)) <= LIMIT
    assert "<b>PARTIAL</b>" in part._repr_html_() and "limit=6" in part._repr_html_()
    two = he.load_run(ab_score_run)
    text = repr(two)
    assert text.startswith("<Run ancient-bench: 2 models: other, rapidocr, 54 records, NED:")
    ned = two.summary["models"]["other"]["metrics"]["ned_score"]
    assert f"other {_interval(ned)}" in text and len(text) <= LIMIT
    page = two._repr_html_()
    assert "<th style=\"text-align:left\">model</th>" in page  # a model column in samples


@pytest.fixture(scope="module")
def big_run() -> Any:
    """A synthetic run of 100,000 records (two media, 0/1 scores) built in memory."""
    records = [SampleRecord(id=f"s{i}", benchmark="toy", model="m", state="scored",
                            groups={"medium": "ab"[i % 2]}, scores={"acc": float(i % 3 == 0)},
                            reference=f"ref {i}", answer=f"ans {i}")
               for i in range(100_000)]
    return he.Run(path=Path("/tmp/big"), summary=envelope("toy", records, [ACC], ["medium"]),
                  records=records)


def test_hundred_thousand_records_render_small(big_run: Any) -> None:
    est = big_run.summary["models"]["m"]["metrics"]["acc"]
    # by hand: i % 3 == 0 holds for 33,334 of 100,000; per medium (even / odd i) the
    # shares are 16,667 / 50,000 and 16,667 / 50,000, so the macro mean is 0.33334
    assert est["value"] == pytest.approx(0.33334)
    text = repr(big_run)
    assert text == f"<Run toy: m, 100,000 records, Acc {_interval(est)}, /tmp/big>"
    page = big_run._repr_html_()
    assert _sample_rows(page) == MAX_SAMPLES and "First 5 of 100,000 samples" in page
    assert len(page) < 5_000  # measured 2,222 characters


def _summary(models: list[str], benchmark: str, partial: bool) -> dict[str, Any]:
    est = {"label": "Acc", "value": 0.5, "n": 4, "stderr": 0.1, "ci_low": 0.1, "ci_high": 0.9,
           "method": "wilson", "confidence": 0.95, "n_resamples": 0, "n_clusters": None,
           "df": None, "flags": ["few_clusters"]}
    return {"benchmark": benchmark, "partial": partial, "run_stopped": "x" if partial else None,
            "models": {m: {"metrics": {"acc": est}, "n_records": 4} for m in models},
            "statistics": {"metric_specs": [{"name": "acc", "label": "Acc"}]}}


@settings(max_examples=60, deadline=None)
@given(models=st.lists(st.text(min_size=1, max_size=300), min_size=1, max_size=40,
                       unique=True),
       benchmark=st.text(max_size=300), path=st.text(max_size=1000),
       n=st.integers(0, 10**12), partial=st.booleans())
def test_run_repr_is_one_bounded_line(models: list[str], benchmark: str, path: str, n: int,
                                      partial: bool) -> None:
    # rule: whatever the names, path, record count and number of models
    text = run_repr(_summary(models, benchmark, partial), n, path)
    assert len(text) <= LIMIT and "\n" not in text and "\r" not in text
    assert text.startswith("<Run ") and text.endswith(">")
    if partial:
        assert ", PARTIAL, STOPPED" in text
    assert f"{n:,} records" in text


def test_html_escapes_every_text() -> None:
    evil = "<script>alert('x')</script>"
    rec = SampleRecord(id="<b>id</b>", benchmark="toy", model="<i>m</i>", state="scored",
                       groups={"medium": "<u>a</u>"}, scores={"acc": 1.0}, reference=evil,
                       answer="a & b",
                       turns=[TurnRecord(prompt="p", response=ResponseRecord(text=evil))])
    run = he.Run(path=Path("/tmp/<x>"), records=[rec],
                 summary=envelope("<toy>", [rec], [ACC], ["medium"]))
    for page in (run._repr_html_(), rec._repr_html_()):
        assert "<script>" not in page and "<b>id</b>" not in page and "<i>m</i>" not in page
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
        assert "a &amp; b" in page and "&lt;u&gt;a&lt;/u&gt;" in page
    assert "<code>/tmp/&lt;x&gt;</code>" in run._repr_html_()


def test_html_clips_long_texts() -> None:
    long_ref = "字" * 50_000
    rec = SampleRecord(id="a", benchmark="toy", model="m", state="scored", reference=long_ref,
                       answer="x" * 50_000, scores={"acc": 0.0})
    run = he.Run(path=Path("/tmp/r"), records=[rec] * 10,
                 summary=envelope("toy", [rec], [ACC], []))
    assert len(run._repr_html_()) < 5_000 and len(rec._repr_html_()) < 1_500
    assert re.search("字{159}…", run._repr_html_())  # MAX_CELL = 160 characters


def test_sample_record_repr() -> None:
    rec = SampleRecord(id="seals/1", benchmark="ancient-bench", model="rapidocr",
                       state="scored", groups={"medium": "Seal"},
                       scores={"ned_score": 0.695023, "f1": None}, reference="天地" * 1000)
    assert repr(rec) == ("<SampleRecord 'seals/1' ancient-bench rapidocr scored medium=Seal "
                         "ned_score=0.695 f1=None>")
    long = rec.model_copy(update={"id": "x\n" * 500, "groups": {f"k{i}": "v" * 99
                                                               for i in range(9)}})
    assert len(repr(long)) <= LIMIT and "\n" not in repr(long)


def test_a_study_over_conditions_shows_no_pooled_headline(big_run: Any) -> None:
    # a k-sweep's summary carries a headline_note (the CLI prints no pooled number for
    # it): the repr shows none either, and says why in three words
    summary = {**big_run.summary, "benchmark": "hcsu-k-sweep",
               "headline_note": "No pooled headline: the rows are different K conditions"}
    run = he.Run(path=Path("/tmp/hk"), summary=summary, records=[])
    text = repr(run)
    assert text == "<Run hcsu-k-sweep: m, 0 records, per condition, no pooled headline, /tmp/hk>"
    assert "Acc" not in text
