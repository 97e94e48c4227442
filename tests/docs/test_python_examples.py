"""The Python examples of the README and of every documentation page run.

Convention (tests/docs/doc_sources.py): a fenced block tagged ``python`` is run, unless
the line before it is ``<!-- docs-test: skip (REASON) -->``. A page's blocks run in
order in one namespace (a later block may use an earlier one's names), from a scratch
copy of the repository root: ``data/`` is the bundled demo data and ``runs/`` a copy of
the tutorial's run folders (made once per session), so an example that re-runs the demo
answers from its cache. The tutorial's own Python section is run by test_tutorial.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.conftest import TUTORIAL, TutorialRun, run_python_examples, scratch
from tests.docs.doc_sources import REPO, all_markdown, blocks, doc_pages

PAGES = [p for p in doc_pages() if p != TUTORIAL
         and any(b.skip is None for b in blocks(p, "python"))]


def test_pages_with_examples_are_found() -> None:
    # by hand: the README's taste of the API and the notebook how-to both have examples
    names = {p.relative_to(REPO).as_posix() for p in PAGES}
    assert {"README.md", "docs/how-to/notebook.md"} <= names


@pytest.mark.parametrize("page", all_markdown(), ids=lambda p: str(p.relative_to(REPO)))
def test_a_skipped_example_says_why(page: Path) -> None:
    for block in blocks(page):
        if block.lang in ("python", "bash"):
            assert block.skip is None or block.skip.strip("() "), block.where


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_examples_run(page: Path, tutorial_run: TutorialRun, tmp_path: Path) -> None:
    folder = scratch(tmp_path / "repo")
    tutorial_run.copy_runs(folder)
    assert run_python_examples(page, folder) >= 1
