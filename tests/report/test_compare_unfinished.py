"""``compare`` says when a run it compares did not finish (report.runs.unfinished_note).

The rule: a run folder whose ``run.json`` status is ``running``, ``stopped`` or
``failed`` is compared as it stands, with one warning naming the folder and the
status; ``complete`` and ``partial`` add none (``partial`` has its own mark).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from heritage_eval.cli.main import main
from heritage_eval.core.rundir import RunSession
from tests.report.test_compare_damaged_runs import _pair


@pytest.mark.parametrize(("status", "warned"), [
    ("running", True), ("stopped", True), ("failed", True),
    ("complete", False), ("partial", False),
])
def test_an_unfinished_run_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    status: str, warned: bool) -> None:
    # guards against: a stopped re-run compared without a word (break-it report)
    a, b = _pair(tmp_path)
    RunSession(a, "toy", {}, partial=False, resumed=False).write_state(status)
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "cmp")]) == 0
    err = capsys.readouterr().err
    line = f"warning: {a}: its run did not finish (run.json: status '{status}')"
    assert (line in err) is warned, err
