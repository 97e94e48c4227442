"""``score ancient-bench`` keeps the run-folder rule of ``run``: a folder never shrinks
silently. A re-score that would not rewrite some row of samples.jsonl (``--resume`` with
fewer ``--categories``) is refused (exit 2, the count named, nothing changed);
``--overwrite`` replaces the run on purpose; the same re-score resumes."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.packaging.test_light_install import DEMO, write_predictions

from heritage_eval.cli.main import main


def _lines(run: Path) -> int:
    return len((run / "samples.jsonl").read_text(encoding="utf-8").splitlines())


def test_a_rescore_never_shrinks_the_folder(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    pred, out = write_predictions(tmp_path), tmp_path / "scored"
    base = ["score", "ancient-bench", "--data", str(DEMO / "ancient_bench"),
            "--predictions", str(pred), "--out", str(out)]
    assert main(base) == 0
    before = _lines(out)
    assert before == 27  # the demo: 9 media x 3 lines, one model
    capsys.readouterr()
    # fewer categories with --resume: 24 of the 27 rows would be dropped -> refused
    assert main([*base, "--categories", "seals", "--resume"]) == 2
    err = capsys.readouterr().err
    assert "24" in err and _lines(out) == before
    assert main(base) == 0 and _lines(out) == before  # the same re-score resumes
    assert main([*base, "--categories", "seals", "--overwrite"]) == 0
    assert _lines(out) == 3


def _two_models(tmp_path: Path) -> tuple[list[str], Path]:
    """``score`` arguments for the demo predictions of two models (the same answers in
    two folders, 27 rows each), and the output folder."""
    import shutil

    pred, out = write_predictions(tmp_path), tmp_path / "scored"
    shutil.copytree(pred / "demo-model", pred / "other-model")
    return ["score", "ancient-bench", "--data", str(DEMO / "ancient_bench"),
            "--predictions", str(pred), "--out", str(out)], out


def test_a_rescore_with_fewer_models_is_refused(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    # a folder of two models' rows (27 each); --resume --models of one of them would
    # drop the other's 27 rows (found by the reviewer: they were dropped silently)
    base, out = _two_models(tmp_path)
    assert main([*base, "--models", "demo-model", "other-model"]) == 0
    assert _lines(out) == 54
    capsys.readouterr()
    assert main([*base, "--models", "demo-model", "--resume"]) == 2
    err = capsys.readouterr().err
    assert "27 row(s) would be lost" in err and "fewer models" in err, err
    assert _lines(out) == 54
    # both models again: resumes, nothing lost
    assert main([*base, "--models", "demo-model", "other-model", "--resume"]) == 0
    assert _lines(out) == 54


def test_score_reads_categories_as_run_does(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    # the list rule (docs/reference/conventions.md): commas or spaces, paper or folder
    # names in any case, each once, in the paper's order -> one configuration
    pred, out = write_predictions(tmp_path), tmp_path / "scored"
    base = ["score", "ancient-bench", "--data", str(DEMO / "ancient_bench"),
            "--predictions", str(pred), "--out", str(out)]
    assert main([*base, "--categories", "Seal,Bronze"]) == 0
    assert _lines(out) == 6  # 2 media x 3 lines
    capsys.readouterr()
    for words in (["bronze_rubbings", "seals"], ["SEAL", "Seal", "bronze"]):
        assert main([*base, "--categories", *words]) == 0, words
        assert "another configuration" not in capsys.readouterr().err
    assert main([*base, "--categories", ","]) == 2
    assert "needs at least one medium" in capsys.readouterr().err


def test_score_reads_models_as_one_selection(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    # --models: commas or words, repeated flags add up, each model once, any order; the
    # same two folders as the default (every folder) -> one configuration, 54 rows
    base, out = _two_models(tmp_path)
    assert main([*base, "--models", "other-model", "demo-model"]) == 0
    assert _lines(out) == 54
    capsys.readouterr()
    for words in (["--models", "demo-model,other-model"], [],
                  ["--models", "demo-model", "--models", "other-model", "demo-model"],
                  ["--categories", "Seal", "--categories", "Oracle,Bronze", "--categories",
                   "calligraphys", "Slip", "silk", "Stele", "Cliff", "Edition", "--resume"]):
        assert main([*base, *words]) == 0, words
        assert "another configuration" not in capsys.readouterr().err
        assert _lines(out) == 54  # each model's 27 rows once, never twice
    assert main([*base, "--models", ","]) == 2
    assert "needs at least one model" in capsys.readouterr().err
