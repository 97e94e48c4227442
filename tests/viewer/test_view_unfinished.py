"""The viewer names how an unfinished run ended (``run.json`` status, core/rundir.py).

``running`` (killed outright, or still going), ``stopped`` (Ctrl-C / a stop signal) and
``failed`` (an error) are the statuses of :data:`~heritage_eval.core.rundir.UNFINISHED`:
each is the run's first problem, worded by :data:`~heritage_eval.viewer.runs.UNFINISHED_TEXT`;
``complete`` and ``partial`` add none.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from heritage_eval.core.rundir import RunSession
from heritage_eval.viewer import ViewerError
from heritage_eval.viewer.runs import read_run
from tests.viewer.conftest import record, write_run


def _with_status(folder: Path, status: str) -> None:
    RunSession(folder, "toy", {"model": "m1"}, partial=False, resumed=False) \
        .write_state(status)


@pytest.mark.parametrize(("status", "words"), [
    ("running", "interrupted or is still running"),
    ("stopped", "stopped before it finished"),
    ("failed", "ended with an error before it finished"),
])
def test_an_unfinished_status_is_the_first_problem(tmp_path: Path, status: str,
                                                   words: str) -> None:
    # guards against: a stopped or failed run shown as if it were complete
    run = write_run(tmp_path / "run", [record("a")])
    _with_status(run, status)
    problems = read_run(run).problems
    assert words in problems[0] and f'status "{status}"' in problems[0]
    empty = tmp_path / "empty"
    empty.mkdir()
    _with_status(empty, status)
    with pytest.raises(ViewerError, match=f"{words}.*nothing to show"):
        read_run(empty)


@pytest.mark.parametrize("status", ["complete", "partial"])
def test_a_finished_status_adds_no_problem(tmp_path: Path, status: str) -> None:
    # guards against: every finished run flagged as unfinished
    run = write_run(tmp_path / "run", [record("a")])
    _with_status(run, status)
    assert not any("finish" in p or "interrupted" in p for p in read_run(run).problems)
