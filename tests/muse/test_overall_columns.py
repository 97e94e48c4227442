"""MUSE's Overall row mixes a macro mean and pooled values; each column's footnote says
which, and each interval is computed as its value is (``core/run_tables.overall_note``,
``core/engine``; ``benchmarks/muse/report.OVERALL_NOTE``).

Decision (the MUSE paper's Table 2, ``benchmarks/muse/benchmark.py``): the paper's
``Average`` is the unweighted mean of the task scores, which is our Overall **Score**
(macro over tasks). **Acc** and **Cos** are our additions, pooled over the answered turns.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from heritage_eval.benchmarks.muse.benchmark import METRICS
from heritage_eval.benchmarks.muse.report import OVERALL_NOTE
from heritage_eval.cli.main import main
from heritage_eval.core.engine import headline_lines, intervals_markdown
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.run_tables import overall_note
from heritage_eval.core.summary import envelope
from heritage_eval.core.types import Outcome

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "muse"


def _turn(i: int, task: str, image: str, scores: dict[str, float]) -> SampleRecord:
    return SampleRecord(schema="heritage-eval/sample/1", benchmark="muse", model="m",
                        id=f"q{i}", state=Outcome.SCORED, scores={"score": 0.0, **scores},
                        groups={"task": task, "capability": "c", "level": "l",
                                "granularity": "g"}, details={"image": image})


def _tiny() -> dict[str, object]:
    """Task A: 4 choice turns, 1 correct; task B: 2 choice turns, both correct; task C:
    2 open turns with cosines 0.6 and 0.8. Over images i1..i4."""
    recs = [_turn(i, "a", f"i{i % 4}", {"score": float(v), "accuracy": float(v)})
            for i, v in enumerate([1, 0, 0, 0])]
    recs += [_turn(4 + i, "b", f"i{i}", {"score": 1.0, "accuracy": 1.0}) for i in range(2)]
    recs += [_turn(6 + i, "c", f"i{i + 2}", {"score": c, "cosine": c})
             for i, c in enumerate([0.6, 0.8])]
    return envelope("muse", recs, METRICS, ["task"])


def test_overall_values_and_intervals_follow_their_definition() -> None:
    # guards against: a footnote calling every Overall a macro mean while Acc / Cos are
    # pooled, or an interval computed another way than its value.
    summary = _tiny()
    block = summary["models"]["m"]  # type: ignore[index]
    overall, groups = block["metrics"], block["groups"]["task"]
    # by hand: Score = mean(1/4, 2/2, (0.6+0.8)/2) = (0.25 + 1 + 0.7) / 3 = 0.65
    assert overall["score"]["value"] == pytest.approx(0.65)
    # Acc pooled over the 6 choice turns: 3 correct / 6 = 0.5 (the macro would be 0.625)
    assert overall["accuracy"]["value"] == pytest.approx(0.5)
    assert overall["accuracy"]["n"] == 6
    assert overall["cosine"]["value"] == pytest.approx(0.7)
    # the macro's standard error combines the 3 tasks' own: sqrt(sum se_t^2) / 3
    ses = [groups[t]["score"]["stderr"] for t in ("a", "b", "c")]
    assert overall["score"]["stderr"] == pytest.approx(math.sqrt(sum(s * s for s in ses)) / 3)
    assert "welch" in overall["score"]["method"]
    assert "welch" not in overall["accuracy"]["method"]  # pooled: over the turns
    note = overall_note(summary, "m")
    assert note == ("Overall: Score = unweighted mean of the 3 task values (macro; the "
                    "interval combines the task groups' standard errors, "
                    "Welch-Satterthwaite); Acc (6 records), Cos (2 records) = pooled over the "
                    "answered records, each record weighing the same (its interval is "
                    "over those records, cluster-robust by image).")
    assert note in "\n".join(headline_lines(summary)) and note in intervals_markdown(summary)
    assert "macro means (Overall) combine" not in intervals_markdown(summary)


def test_the_demo_run_says_what_each_overall_is(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: the README's demo run (baseline:random) printing an Overall whose
    # Acc is pooled under a note that says all Overall values are macro means
    questions = tmp_path / "questions.jsonl"
    assert main(["muse", "generate", "--annotations", str(DEMO / "annotations.json"),
                 "--images", str(DEMO), "--out", str(questions)]) == 0
    out = tmp_path / "random"
    assert main(["run", "muse", "--questions", str(questions), "--model", "baseline:random",
                 "--out", str(out)]) == 0
    console = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text("utf-8")
            .splitlines()]
    acc = [r["scores"]["accuracy"] for r in rows if "accuracy" in (r.get("scores") or {})
           and r["state"] in ("scored", "unparsed")]
    per_task = summary["results"][0]["per_task"]
    # independent of the envelope: the pooled Acc from the records, the macro Score
    # from the body's per-task scores
    assert summary["models"]["baseline:random"]["metrics"]["accuracy"]["value"] == \
        pytest.approx(sum(acc) / len(acc))
    task_scores = [t["score"] for t in per_task.values() if t["score"] is not None]
    assert summary["models"]["baseline:random"]["metrics"]["score"]["value"] == \
        pytest.approx(sum(task_scores) / len(task_scores))
    expected = (f"Score = unweighted mean of the {len(task_scores)} task values (macro; ")
    assert expected in console and f"Acc ({len(acc)} records)" in console
    md = (out / "summary.md").read_text("utf-8")
    assert OVERALL_NOTE in md and expected in md


def test_columns_with_one_description_share_it() -> None:
    # guards against: "NED = unweighted mean …; F1 = unweighted mean …" said twice
    # (the note of a two-metric macro table, written by hand from the rule)
    summary = {"statistics": {"metric_specs": [
        {"name": "ned", "label": "NED", "macro_over": "medium"},
        {"name": "f1", "label": "F1", "macro_over": "medium"}]},
        "models": {"m": {"metrics": {"ned": {"value": 0.5}, "f1": {"value": 0.6}},
                         "groups": {"medium": {"Seal": {"ned": {"value": 0.5},
                                                        "f1": {"value": 0.6}}}}}}}
    assert overall_note(summary, "m") == (
        "Overall: NED, F1 = unweighted mean of the 1 medium values (macro; the interval "
        "combines the medium groups' standard errors, Welch-Satterthwaite).")
