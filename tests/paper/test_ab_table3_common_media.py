"""``paper ab-table3`` over runs of different media, re-scored on the common samples.

Found by the issue-22 audit ("rank only what is comparable, mark the rest"): a run over
Seal only and a run over all 9 media, tabled together, are both re-scored on the Seal
samples; the 9-media run's Overall then covers Seal alone, yet only the Seal-only run
carried the † "Overall over fewer than the paper's 9 media" — the other printed a
one-medium Overall as if it were the paper's. The mark now follows the media of the
Overall printed, over every subset of media generated below.
"""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import pytest

from heritage_eval.benchmarks.ancient_bench.categories import MEDIA
from heritage_eval.cli.main import main

FOLDERS = list(MEDIA)
#: subsets the partial run covers: one medium, two, eight (all but one), all nine
SUBSETS = [FOLDERS[:1], FOLDERS[3:5], FOLDERS[1:], FOLDERS]


def _layout(root: Path, subset: list[str]) -> tuple[Path, Path]:
    """Ground truth over all 9 media (one line each); model ``full`` answers every line,
    model ``part`` only the media of ``subset``."""
    for folder in FOLDERS:
        (root / "gt" / folder).mkdir(parents=True)
        (root / "gt" / folder / "conv.jsonl").write_text(
            json.dumps({"image": "a.png", "human_gt": "天地玄黃"}, ensure_ascii=False) + "\n",
            encoding="utf-8")
        for model in ("full", "part"):
            if model == "part" and folder not in subset:
                continue
            res = root / "pred" / model / folder / "results"
            res.mkdir(parents=True)
            (res / "a.json").write_text(json.dumps({"answer": "<res>天地</res>"},
                                                   ensure_ascii=False), encoding="utf-8")
    return root / "gt", root / "pred"


@pytest.mark.parametrize("subset", SUBSETS, ids=[str(len(s)) for s in SUBSETS])
def test_overall_mark_follows_the_media_compared(subset: list[str], tmp_path: Path) -> None:
    gt, pred = _layout(tmp_path, subset)
    run = tmp_path / "run"
    assert main(["score", "ancient-bench", "--data", str(gt), "--predictions", str(pred),
                 "--out", str(run), "--missing", "skip"]) == 0
    assert main(["paper", "ab-table3", str(run), "--out", str(tmp_path / "t")]) == 0
    with (tmp_path / "t" / "ab_table3.csv").open(encoding="utf-8", newline="") as f:
        rows = {r["Model"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"full", "part"}
    short = len(subset) < len(FOLDERS)
    for row in rows.values():
        # both models are scored on the media of `subset` only (the common samples), so
        # both Overalls leave out the same media: both marked, or neither
        assert ("†" in row.get("notes", "")) is short, row  # no column when no mark
    md = (tmp_path / "t" / "ab_table3.md").read_text(encoding="utf-8")
    left_out = ", ".join(MEDIA[f] for f in FOLDERS if f not in subset)
    for model in ("full", "part"):
        assert (f"{model} (without {left_out})" in md) is short


def test_each_run_keeps_its_own_mark_without_rescoring(tmp_path: Path) -> None:
    # --samples all: no re-scoring, so each Overall is its run's own (9 media for full)
    gt, pred = _layout(tmp_path, FOLDERS[:1])
    run = tmp_path / "run"
    assert main(["score", "ancient-bench", "--data", str(gt), "--predictions", str(pred),
                 "--out", str(run), "--missing", "skip"]) == 0
    assert main(["paper", "ab-table3", str(run), "--samples", "all",
                 "--out", str(tmp_path / "t")]) == 0
    with (tmp_path / "t" / "ab_table3.csv").open(encoding="utf-8", newline="") as f:
        rows = {r["Model"]: r for r in csv.DictReader(f)}
    assert "†" in rows["part"]["notes"] and "†" not in rows["full"]["notes"]


assert len({len(s) for s in SUBSETS}) == len(SUBSETS)  # distinct sizes, distinct ids
assert all(a != b for a, b in itertools.combinations(SUBSETS, 2))
