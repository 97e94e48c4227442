"""Damage that keeps the counts equal: one sample twice, a score its metric cannot take.

Rules (heritage_eval.report.record_sanity, used by report.runs.check_records): a run
folder in which a model holds one sample twice, or a score is not finite or lies outside
its metric's recorded bounds, is refused by ``compare`` (exit 2, the file and the sample
named, ``--resume`` as the repair) instead of being compared (two identical runs ranked
apart) or ending in a traceback. Expected texts written by hand from the edits made.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heritage_eval.cli.main import main
from heritage_eval.report.record_sanity import impossible_score, repeated_sample
from tests.report.test_compare import rec
from tests.report.test_compare_damaged_runs import _pair


def _edit_first(path: Path, **scores: float) -> None:
    """Set scores of the first record of ``path``'s samples.jsonl (JSON written by hand:
    NaN as the JSON extension Python writes)."""
    lines = path.read_text("utf-8").splitlines()
    first = json.loads(lines[0])
    first["scores"].update(scores)
    lines[0] = json.dumps(first, ensure_ascii=False)
    path.write_text("".join(x + "\n" for x in lines), "utf-8")


def test_a_line_replaced_by_another_samples_record_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: the break-it report (line 2 := line 1: counts equal, one sample
    # lost and one twice; compare ranked two identical runs apart, exit 0)
    a, b = _pair(tmp_path)
    samples = a / "samples.jsonl"
    lines = samples.read_text("utf-8").splitlines()
    lines[1] = lines[0]
    samples.write_text("".join(x + "\n" for x in lines), "utf-8")
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert f"error: {samples}: model 'a' holds sample 's0' twice" in err
    assert "--resume" in err and not (tmp_path / "cmp").exists()


@pytest.mark.parametrize(("value", "why"), [
    (5.0, "ned = 5.0, outside [0.0, 1.0]"),
    (-0.25, "ned = -0.25, outside [0.0, 1.0]"),
    (float("nan"), "ned = nan, not a finite number"),
    (float("inf"), "ned = inf, not a finite number"),
])
def test_a_score_the_metric_cannot_take_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], value: float,
        why: str) -> None:
    # guards against: a traceback (ValueError from the interval code, exit 1)
    a, b = _pair(tmp_path)
    _edit_first(a / "samples.jsonl", ned=value)
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert f"sample 's0' of model 'a' has {why}" in err and "Traceback" not in err


def test_the_rules_on_their_own() -> None:
    # guards against: a legitimate folder refused (bounds inclusive, None skipped,
    # the same id under two models allowed, a metric without recorded bounds)
    ok = [rec(0, "a", {"ned": 0.0}), rec(1, "a", {"ned": 1.0}), rec(0, "b", {"ned": None})]
    specs = [{"name": "ned", "bounds": [0.0, 1.0]}]
    assert repeated_sample(ok) is None and impossible_score(ok, specs) is None
    assert impossible_score([rec(0, "a", {"ned": 7.0})], [{"name": "ned"}]) is None
    assert impossible_score([rec(0, "a", {"ned": 7.0})], None) is None
    assert repeated_sample([*ok, rec(1, "a", {"ned": 0.5})]) == \
        "model 'a' holds sample 's1' twice"
