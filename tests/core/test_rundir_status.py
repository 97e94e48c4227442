"""``run.json``'s status says how a run ended (core/rundir.py, ``open_run``).

The rule: ``running`` while the run is open; ``complete`` / ``partial`` when it ends
normally; ``stopped`` when Ctrl-C or a stop signal ended it (``KeyboardInterrupt``);
``failed`` when any other exception did. A stopped or failed folder resumes like a
running one, and the next normal end writes ``complete``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from heritage_eval.core.rundir import UNFINISHED, ended_status, open_run, read_run_file


@pytest.mark.parametrize(("exc", "status"), [
    (KeyboardInterrupt(), "stopped"),
    (RuntimeError("server gone"), "failed"),
    (OSError(28, "No space left on device"), "failed"),
    (SystemExit(3), "failed"),
])
def test_an_early_end_is_named_and_the_folder_resumes(tmp_path: Path, exc: BaseException,
                                                       status: str) -> None:
    # guards against: an interrupted or crashed run that reads "running" for ever
    out = tmp_path / "run"
    with pytest.raises(type(exc)), open_run(out, "toy", {"k": 8}, partial=True):
        assert read_run_file(out)["status"] == "running"
        raise exc
    state = read_run_file(out)
    assert state["status"] == status and status in UNFINISHED
    assert ended_status(exc) == status
    with open_run(out, "toy", {"k": 8}) as session:  # same configuration: resumes
        assert session.resumed
    assert read_run_file(out)["status"] == "complete"


def test_a_normal_end_is_not_unfinished(tmp_path: Path) -> None:
    # guards against: the viewer or compare calling a finished run unfinished
    for partial, status in ((False, "complete"), (True, "partial")):
        out = tmp_path / status
        with open_run(out, "toy", {}, partial=partial):
            pass
        assert read_run_file(out)["status"] == status and status not in UNFINISHED


def test_a_refusal_inside_the_run_leaves_run_json_to_its_raiser(tmp_path: Path) -> None:
    # guards against: hcsu robustness's no-shrink refusal, which puts the folder's
    # run.json back before raising, overwritten with "failed" (CI, stop 29)
    from heritage_eval.core.rundir import RunFolderConflict
    out = tmp_path / "run"
    with open_run(out, "toy", {"k": 8}, partial=True):
        pass
    before = (out / "run.json").read_bytes()
    with pytest.raises(RunFolderConflict), open_run(out, "toy", {"k": 8}, partial=True):
        (out / "run.json").write_bytes(before)  # what the refusing code does
        raise RunFolderConflict("would lose rows")
    assert (out / "run.json").read_bytes() == before
