"""A run folder whose results belong to another configuration than its run.json (an
interrupted ``--resume`` with new settings) is refused by the readers that produce numbers
(compare, export, the paper tables), naming the way out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heritage_eval.cli.main import main
from heritage_eval.core.rundir import open_run
from heritage_eval.report.runs import RunReadError, read_run


def _scored_folder(tmp_path: Path) -> tuple[Path, Path, Path]:
    gt = tmp_path / "gt" / "seals"
    gt.mkdir(parents=True)
    gt.joinpath("conv.jsonl").write_text(
        json.dumps({"image": "a.png", "human_gt": "長樂未央"}) + "\n", encoding="utf-8")
    res = tmp_path / "pred" / "m" / "seals" / "results"
    res.mkdir(parents=True)
    res.joinpath("a.json").write_text(json.dumps({"answer": "長樂未央"}), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["score", "ancient-bench", "--data", str(tmp_path / "gt"), "--predictions",
                 str(tmp_path / "pred"), "--out", str(out)]) == 0
    return tmp_path / "gt", tmp_path / "pred", out


def test_an_interrupted_resume_with_new_settings_is_refused(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    _, _, out = _scored_folder(tmp_path)
    assert read_run(out).records  # a finished folder reads
    old = json.loads((out / "run.json").read_text("utf-8"))
    # what `score ... --protocol paper --resume` does before it is killed: run.json names
    # the new configuration ("stopped" once killed), the results on disk are still the old run's
    with pytest.raises(KeyboardInterrupt), open_run(
            out, "ancient-bench", {**old["config"], "protocol": "paper"}, mode="resume"):
        raise KeyboardInterrupt
    assert json.loads((out / "run.json").read_text("utf-8"))["status"] == "stopped"
    with pytest.raises(RunReadError, match=r"another configuration .* --resume with new "
                                           r"settings did not finish"):
        read_run(out)
    capsys.readouterr()
    assert main(["compare", str(out), "--out", str(tmp_path / "cmp")]) == 2
    assert "did not finish" in capsys.readouterr().err


def test_an_interrupted_resume_with_the_same_settings_still_reads(tmp_path: Path) -> None:
    # the same configuration resumed and interrupted: run.json and the summary agree
    _, _, out = _scored_folder(tmp_path)
    old = json.loads((out / "run.json").read_text("utf-8"))
    with pytest.raises(KeyboardInterrupt), open_run(out, "ancient-bench", old["config"],
                                                    mode="resume"):
        raise KeyboardInterrupt
    assert len(read_run(out).records) == 1
