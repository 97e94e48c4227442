"""Analysis beyond the paper: edit operations, hallucination rate, s/t-only substitutions,
breakdown by script and period. Expected values are worked out by hand in comments."""

from __future__ import annotations

import pytest

from heritage_eval.benchmarks.ancient_bench.analysis import (
    analyse,
    breakdown,
    error_profile,
    is_st_variant,
)
from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.records import SampleRecord, build_record
from heritage_eval.core.types import Sample

FLAGS = NormalizationFlags()


def _rec(gt: str, answer: str | None, **meta: str) -> SampleRecord:
    s = Sample(id=f"calligraphys/{gt}", category="calligraphys", target=gt,
               metadata={"image_name": f"{gt}.jpg", **meta})
    return build_record(s, "m", answer, None, FLAGS)


def test_st_variant() -> None:
    assert is_st_variant("會", "会")       # OpenCC t2s maps 會 to 会
    assert not is_st_variant("日", "曰")   # look-alikes, different characters
    assert not is_st_variant("会", "会")
    assert not is_st_variant("<unrecognizable>", "会")


def test_record_edit_operations() -> None:
    # 會稽山 -> 会稽山陰: substitute 會->会 (only a s/t difference), insert 陰.
    r = _rec("會稽山", "<res>会稽山陰</res>")
    assert (r.insertions, r.deletions, r.substitutions) == (1, 0, 1)
    assert r.st_only_substitutions == 1
    assert r.n_pred_tokens == 4 and r.n_gt_tokens == 3
    assert r.hallucination_rate == 0.25          # 1 inserted / 4 predicted
    assert r.ned_score == 0.5                    # 1 - 2 / max(3, 4)
    # An empty answer is scored (0), its hallucination rate is undefined.
    empty = _rec("山", None)
    assert empty.state.value == "scored" and empty.ned_score == 0.0 and empty.f1 == 0.0
    assert empty.hallucination_rate is None and empty.deletions == 1


def test_error_profile_pools_counts() -> None:
    rows = [_rec("會稽山", "会稽山陰"), _rec("蘭亭", "蘭"), _rec("永和", "永和九年")]
    prof = error_profile(rows)
    # insertions 1 + 0 + 2 = 3; deletions 0 + 1 + 0 = 1; substitutions 1 + 0 + 0 = 1;
    # predicted tokens 4 + 1 + 4 = 9 -> hallucination rate 3/9; s/t-only 1 of 1.
    assert (prof["insertions"], prof["deletions"], prof["substitutions"]) == (3, 1, 1)
    assert prof["pred_tokens"] == 9 and prof["gt_tokens"] == 7
    assert prof["hallucination_rate"] == pytest.approx(3 / 9)
    assert prof["st_only_share"] == 1.0


def test_breakdown_by_script_and_period() -> None:
    rows = [_rec("永和", "永和", script="running", period="Jin"),
            _rec("蘭亭", "蘭", script="running", period="Jin"),
            _rec("山", "山", script="regular")]
    by_script = breakdown(rows, "script")
    # running: NED scores 1 and 1 - 1/2 -> mean 0.75; regular: 1.
    assert by_script["running"]["n"] == 2
    assert by_script["running"]["ned_score"] == 0.75
    assert by_script["regular"]["ned_score"] == 1.0
    out = analyse(rows, ["calligraphys"])
    assert set(out) == {"overall", "per_category", "by_script", "by_period"}
    assert out["by_period"] == {"Jin": by_script["running"]}
    # Without metadata, no breakdown keys at all.
    assert "by_script" not in analyse([_rec("山", "山")], ["calligraphys"])
