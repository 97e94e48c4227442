"""One unreadable HCSU image changes no other sample's question (schema.StyleClass.images).

The rule: references and shots are drawn from every annotated image, usable or not, so
the seeded draws do not depend on which files decode; the target whose file is broken,
and any sample that draws it, is a data error naming the file; every other record is the
one the intact data gives. Reference: the same command on an intact copy. (Before, one
broken image moved the candidates of 48 of the demo's 140 discrimination samples.)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.cli.main import main

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "hcsu"


def _records(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "samples.jsonl").read_text("utf-8").splitlines()
    return {(r := json.loads(line))["id"]: r for line in lines}


@pytest.mark.parametrize(("task", "extra"), [
    ("hcsu-discrimination", ["--k", "4"]),
    ("hcsu-description", ["--no-bertscore"]),
])
def test_a_broken_image_moves_no_other_question(tmp_path: Path, task: str,
                                                extra: list[str]) -> None:
    # guards against: the break-it report (silently different questions for other
    # samples, and 62 of 140 samples sent again after the repair of 4 images)
    intact, broken = tmp_path / "intact", tmp_path / "broken"
    shutil.copytree(DEMO, intact)
    shutil.copytree(DEMO, broken)
    bad = sorted((broken / "tie").glob("*/*.png"))[0]
    bad.write_text("not an image", encoding="utf-8")
    model = "baseline:random" if task == "hcsu-discrimination" else \
        "baseline:nearest-description"
    for data in (intact, broken):
        assert main(["run", task, "--data", str(data), "--model", model, *extra,
                     "--out", str(tmp_path / f"run-{data.name}")]) == 0
    good, got = _records(tmp_path / "run-intact"), _records(tmp_path / "run-broken")
    assert set(good) == set(got)
    errors = [k for k, r in got.items() if r["state"] == "error"]
    assert errors and str(bad) in got[errors[0]]["error"]
    for key, rec in got.items():
        if rec["state"] == "error":
            assert str(bad) in rec["error"], rec["error"]  # only the broken file's draws
            continue
        assert good[key]["state"] != "error"
        # the same question: the same prompt with the same images, the same answer
        # (timings aside); paths differ only by the copy's folder
        assert _question(rec) == json.loads(json.dumps(_question(good[key])).replace(
            str(intact), str(broken))), key


def _question(rec: dict[str, Any]) -> list[Any]:
    """What was asked and answered: each turn without its timings, answer, scores."""
    turns = [{k: v for k, v in t.items() if k != "response"} | {
        "text": t["response"]["text"]} for t in rec["turns"]]
    return [turns, rec["answer"], rec["scores"], rec["details"].get("candidates")]
