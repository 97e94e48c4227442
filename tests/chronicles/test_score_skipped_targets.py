"""``score chronicles-ocr`` treats the official skipped recognition entry as ``run`` does.

The official ``infer.py`` never asks about an ancient image without a recognition target
(every glyph of the demo's ``jiaguwen-03`` is a placeholder) and records
``{"answer": "", "error": "no_referring_target", "skipped": true}``. That is no answer,
not an empty one: it must never become a model failure, under either protocol and
either ``--model-failures`` policy.

Expected values: the official Recognition cell of tag ``perfect`` is 88.9 (the official
``summarize.py`` output stored in ``fixtures/official/summary.json``: the skipped image
counts 0, (2/3 + 1 + 1) / 3); under ``corrected`` the image is not a recognition sample,
so by hand (1 + 1 + 1) / 3 = 100.0; ``run`` with the same answers replayed
(``chronicles-replay``) gives the reference records.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("chronicles_ocr")

import heritage_eval as he

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[1] / "plugins" / "chronicles-ocr" / "src" / "chronicles_ocr" / "demo"
PRED = HERE / "fixtures" / "predictions"
OFFICIAL = HERE / "fixtures" / "official"
SKIPPED_ID = "images/甲骨文/jiaguwen-03.png#recognition"
RECOGNITION = "平均分_古代/Recognition"
#: the Recognition cell of tag perfect under corrected (by hand, module docstring)
CORRECTED_CELL = 100.0


def _official_cell() -> float:
    """The official summarize.py's Recognition cell of tag perfect (88.9)."""
    rows = json.loads((OFFICIAL / "summary.json").read_text("utf-8"))["评分分析"]
    return float(next(r for r in rows if r["模型名称"] == "perfect")[RECOGNITION])


def _record(run: he.Run) -> Any:
    return next(r for r in run.records if r.id == SKIPPED_ID)


@pytest.mark.parametrize("failures", ["wrong", "exclude"])
@pytest.mark.parametrize("protocol", ["official", "corrected"])
def test_skipped_entry_is_scored_as_run_scores_it(protocol: str, failures: str,
                                                  tmp_path: Path) -> None:
    scored = he.score("chronicles-ocr", data=str(DEMO), predictions=str(PRED),
                      models=["perfect"], protocol=protocol, model_failures=failures,
                      out=str(tmp_path / "score"))
    run = he.evaluate("chronicles-ocr", data=str(DEMO), model="chronicles-replay:perfect",
                      model_option=[f"results={PRED / 'perfect' / 'results.jsonl'}"],
                      protocol=protocol, model_failures=failures, out=str(tmp_path / "run"))
    want = _official_cell() if protocol == "official" else CORRECTED_CELL
    book = scored.summary["official_summary"]["perfect"]["评分分析"][0]
    assert book[RECOGNITION] == want
    # the same cells as the run that replays the same answers
    ran = run.summary["official_summary"]["chronicles-replay:perfect"]
    assert scored.summary["official_summary"]["perfect"] == {
        sheet: [{**row, "模型名称": "perfect"} for row in rows] for sheet, rows in ran.items()}
    # never a model failure: not counted, not "empty answer"
    assert scored.summary["model_failures"]["perfect"]["overall"]["n_failed"] == 0
    got, ref = _record(scored), _record(run)
    assert "model_failure" not in got.details and got.error != "empty answer"
    assert (got.state, got.error, got.scores) == (ref.state, ref.error, ref.scores)
    assert got.details.get("no_target") is True
    assert got.details.get("error_kind") == ref.details.get("error_kind")
    if protocol == "official":
        assert got.state.value == "unparsed" and got.scores == {"recognition": 0.0}
    else:
        assert got.state.value == "error" and got.details["error_kind"] == "data"
