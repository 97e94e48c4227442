"""Every command of the tutorial (docs/tutorial.md) runs as written, on the bundled demo
data, and does what the tutorial says it does; then its Python section runs against the
run folders those commands made.

The commands are run once per session by the ``tutorial_run`` fixture (conftest.py),
in-process, in a scratch folder whose ``data`` is the repository's demo data. The
claims checked here are read from the tutorial's own text blocks, so editing the text
without the behaviour (or the reverse) fails a test.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.conftest import TUTORIAL, TutorialRun, run_python_examples, scratch
from tests.docs.doc_sources import blocks

pytestmark = pytest.mark.slow


def _text_blocks() -> list[str]:
    return [b.code for b in blocks(TUTORIAL, "text")]


def test_every_command_exits_0(tutorial_run: TutorialRun) -> None:
    assert len(tutorial_run.ran) >= 6  # make demo, re-run, view, second run, compare, view
    for ran in tutorial_run.ran:
        assert ran.status == 0, f"{ran.command}\n-> exit {ran.status}\n{ran.err[-2000:]}"


def test_run_folder_holds_the_listed_files(tutorial_run: TutorialRun) -> None:
    tree = next(code for code in _text_blocks() if code.startswith("runs/demo-ancient-bench/"))
    names = re.findall(r"^[├└]── (\S+)", tree, flags=re.M)
    assert len(names) == 6, names
    for name in names:
        assert (tutorial_run.folder / "runs" / "demo-ancient-bench" / name).exists(), name


def test_second_run_answers_from_the_cache(tutorial_run: TutorialRun) -> None:
    quoted = next(line for code in _text_blocks() for line in code.splitlines()
                  if line.startswith("answers from the cache"))
    first, second = (r for r in tutorial_run.ran
                     if "--out runs/demo-ancient-bench" in r.command or r.command == "make demo")
    assert quoted not in first.out + first.err  # the first run sent every request
    assert quoted in second.out + second.err


def test_compare_prints_the_quoted_differences(tutorial_run: TutorialRun) -> None:
    compare = next(r for r in tutorial_run.ran if r.command.startswith("heritage-eval compare"))
    quoted = [line.strip() for code in _text_blocks() for line in code.splitlines()
              if " - rapidocr (demo-ancient-bench), " in line]
    assert len(quoted) == 2
    printed = compare.out + compare.err
    for line in quoted:
        label = line.split(":")[0]  # e.g. "rapidocr (demo-512) - rapidocr (…), NED"
        ours = next((p for p in printed.splitlines() if p.strip().startswith(label)), None)
        assert ours is not None, label
        assert ours.strip().endswith("n = 27")  # 9 media x 3 demo images, both runs
        assert ours.strip() == line  # the values and marks the tutorial quotes
    folder = tutorial_run.folder / "runs" / "compare-512"
    assert (folder / "compare.md").is_file() and (folder / "disagreements.jsonl").is_file()


def test_viewer_pages_are_written(tutorial_run: TutorialRun) -> None:
    runs = tutorial_run.folder / "runs"
    assert (runs / "demo-ancient-bench" / "viewer" / "index.html").is_file()
    assert (runs / "view-512" / "index.html").is_file()


def test_python_section_runs(tutorial_run: TutorialRun, tmp_path: Path) -> None:
    folder = scratch(tmp_path / "repo")
    tutorial_run.copy_runs(folder)
    assert run_python_examples(TUTORIAL, folder) == 1
