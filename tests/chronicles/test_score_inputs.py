"""What ``run`` / ``score chronicles-ocr`` accept and what they say about their inputs.

- ``--models`` takes ``a,b`` like ``--tasks`` / ``--scripts`` (and one string in Python);
- a ``--tasks`` × ``--scripts`` choice that selects nothing (spotting is asked of the
  ancient scripts only: ``names.tasks_for``, from the official ``tasks_for_row``) is
  exit 2 before anything is written, naming the scripts and tasks;
- ``--predictions`` may be one tag folder (holding ``results.jsonl``);
- a subfolder without ``results.jsonl`` and an image repeated in ``results.jsonl`` are
  named and counted in a note (summary ``notes`` and stderr);
- the loader's note on a repeated image path says whether the row kept is itself an
  error.

Expected cells: the official summary of tag ``perfect`` (fixtures/official/summary.json,
the official ``summarize.py`` output).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("chronicles_ocr")

from chronicles_ocr.loader import load_release
from PIL import Image

import heritage_eval as he
from tests.chronicles.layout import DEMO, OFFICIAL, PRED
from tests.chronicles.layout import run_cli as he_cli


def official_rows(tag: str) -> dict[str, list[dict[str, Any]]]:
    book = json.loads((OFFICIAL / "summary.json").read_text(encoding="utf-8"))
    return {sheet: [r for r in rows if r["模型名称"] == tag] for sheet, rows in book.items()}


def test_models_take_the_comma_form(tmp_path: Path) -> None:
    done = he_cli("score", "chronicles-ocr", "--data", str(DEMO), "--predictions", str(PRED),
                  "--models", "perfect,empty", "--out", str(tmp_path / "cli"))
    assert done.returncode == 0, done.stderr
    body = json.loads((tmp_path / "cli" / "summary.json").read_text(encoding="utf-8"))
    assert sorted(body["official_summary"]) == ["empty", "perfect"]
    one = he.score("chronicles-ocr", data=str(DEMO), predictions=str(PRED),
                   models="perfect", out=str(tmp_path / "one"))
    assert one.summary["official_summary"] == {"perfect": official_rows("perfect")}
    two = he.score("chronicles-ocr", data=str(DEMO), predictions=str(PRED),
                   models="perfect, partial,perfect", out=str(tmp_path / "two"))
    assert list(two.summary["official_summary"]) == ["partial", "perfect"]
    with pytest.raises(he.UsageError, match="no model tag"):
        he.score("chronicles-ocr", data=str(DEMO), predictions=str(PRED), models=" , ",
                 out=str(tmp_path / "none"))


@pytest.mark.parametrize("command", ["run", "score"])
def test_a_selection_of_nothing_is_refused_before_writing(command: str,
                                                          tmp_path: Path) -> None:
    extra = ["--model", "baseline:random"] if command == "run" else \
        ["--predictions", str(PRED)]
    out = tmp_path / "out"
    done = he_cli(command, "chronicles-ocr", "--data", str(DEMO), *extra, "--tasks",
                  "spotting", "--scripts", "regular", "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert "(regular) have none of the tasks chosen (spotting)" in done.stderr
    assert not out.exists()
    with pytest.raises(he.OptionsError, match="ancient scripts only"):
        he.evaluate("chronicles-ocr", data=str(DEMO), model="baseline:random",
                    tasks="spotting,recognition", scripts=["regular", "草书"],
                    out=str(out))
    assert not out.exists()
    # a task one chosen script has is enough
    run = he.evaluate("chronicles-ocr", data=str(DEMO), model="baseline:random",
                      tasks="spotting,parsing", scripts="regular", out=str(out))
    assert {r.groups["task"] for r in run.records} == {"parsing"}


def test_data_without_the_chosen_scripts_is_refused(tmp_path: Path) -> None:
    modern = [line for line in (DEMO / "Chronicles_OCR.jsonl").read_text("utf-8")
              .splitlines() if '"楷书"' in line]
    (tmp_path / "Chronicles_OCR.jsonl").write_text("\n".join(modern) + "\n", "utf-8")
    done = he_cli("run", "chronicles-ocr", "--data", str(tmp_path), "--model",
                  "baseline:random", "--scripts", "oracle_bone", "--out",
                  str(tmp_path / "out"))
    assert done.returncode == 2 and "none of the 3 row(s)" in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()


def test_a_tag_folder_is_accepted_as_predictions(tmp_path: Path) -> None:
    run = he.score("chronicles-ocr", data=str(DEMO), predictions=str(PRED / "perfect"),
                   out=str(tmp_path / "out"))
    assert run.summary["official_summary"] == {"perfect": official_rows("perfect")}


def test_folders_without_results_and_repeated_rows_are_noted(tmp_path: Path) -> None:
    pred = tmp_path / "pred"
    (pred / "perfect").mkdir(parents=True)
    (pred / "no-results").mkdir()
    (pred / "also-empty").mkdir()
    (pred / ".hidden").mkdir()  # skipped as judge.py skips it: no note
    lines = (PRED / "perfect" / "results.jsonl").read_text("utf-8").splitlines()
    (pred / "perfect" / "results.jsonl").write_text(
        "\n".join([*lines, lines[0], lines[3]]) + "\n", encoding="utf-8")
    done = he_cli("score", "chronicles-ocr", "--data", str(DEMO), "--predictions",
                  str(pred), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    body = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    folders = (f"2 folder(s) of --predictions {pred} hold no results.jsonl and are not "
               "scored: also-empty, no-results")
    repeats = (f"perfect: {pred / 'perfect' / 'results.jsonl'}: 2 row(s) repeat an image "
               "of an earlier row; the later row is used, as the official reader does "
               f"(line {len(lines) + 1} repeats line 1; line {len(lines) + 2} repeats "
               "line 4)")
    assert folders in body["notes"] and repeats in body["notes"]
    assert f"note: {folders}" in done.stderr and f"note: {repeats}" in done.stderr
    # the repeated rows are the same answers: the official cells are unchanged
    assert body["official_summary"] == {"perfect": official_rows("perfect")}
    # run, replaying the same file, says the same
    run = he.evaluate("chronicles-ocr", data=str(DEMO), model="chronicles-replay:perfect",
                      model_option=[f"results={pred / 'perfect' / 'results.jsonl'}"],
                      out=str(tmp_path / "run"))
    assert f"chronicles-replay:{repeats}" in run.summary["notes"]


def test_the_repeated_path_note_says_which_row_is_kept(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    Image.new("RGB", (8, 8)).save(tmp_path / "images" / "a.png")
    good = {"image_path": "images/a.png", "font_type": "楷书", "annotation": "天"}
    bad = {**good, "font_type": "宋体"}
    for first, second, kept in ((good, bad, "(that row is used)"),
                                (bad, good, "(that row, itself a data error, is the one "
                                            "kept)")):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in (first, second))
        (tmp_path / "Chronicles_OCR.jsonl").write_text(text, encoding="utf-8")
        samples = load_release(tmp_path, seed=42).samples
        note = next(s.load_error for s in samples if s.id == "images/a.png#row@2")
        assert note == ("Chronicles_OCR.jsonl:2: image_path 'images/a.png' already on "
                        f"line 1 {kept}")
