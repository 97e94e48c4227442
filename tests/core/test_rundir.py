"""Run folders never lose work: lock, configuration check, temp-file clean-up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from heritage_eval.core.rundir import (
    RunFolderBusy,
    RunFolderConflict,
    open_run,
    read_run_file,
)


def test_second_process_is_refused_while_the_first_holds_the_lock(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with open_run(out, "toy", {"a": 1}):
        # a real second process, as a user starting the same command twice would
        code = ("import sys; from heritage_eval.core.rundir import open_run, RunFolderBusy\n"
                "try:\n"
                f"    with open_run({str(out)!r}, 'toy', {{'a': 1}}): pass\n"
                "except RunFolderBusy as e: print(e); sys.exit(3)\n")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 3, proc.stderr
        assert "another heritage-eval process" in proc.stdout and "pid" in proc.stdout
        with pytest.raises(RunFolderBusy), open_run(out, "toy", {"a": 1}):
            pass  # a second open file description in this process conflicts too
    with open_run(out, "toy", {"a": 1}) as session:  # released: free again
        assert session.resumed


def test_leftover_temp_files_are_removed(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with open_run(out, "toy", {}):
        pass
    leftover = out / ".summary.json.abc123.tmp"  # what a kill during atomic_write leaves
    leftover.write_text("{")
    with open_run(out, "toy", {}):
        assert not leftover.exists()


def test_status_and_conflicts(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with open_run(out, "toy", {"k": 8}, partial=True):
        assert read_run_file(out)["status"] == "running"
    assert read_run_file(out)["status"] == "partial"
    with pytest.raises(RunFolderConflict, match="k: 8 there, 5 now"), \
            open_run(out, "toy", {"k": 5}):
        pass
    with pytest.raises(RunFolderConflict, match="holds a toy run, not other"), \
            open_run(out, "other", {"k": 8}):
        pass
    with open_run(out, "toy", {"k": 8}):  # partial -> complete with the same config
        pass
    assert read_run_file(out)["status"] == "complete"
    with open_run(out, "toy", {"k": 5}, mode="resume") as s:
        assert s.resumed
    assert json.loads((out / "run.json").read_text())["config"] == {"k": 5}


def test_foreign_and_legacy_folders(tmp_path: Path) -> None:
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "holiday.jpg").write_bytes(b"x")
    with pytest.raises(RunFolderConflict, match="holds no heritage-eval run"), \
            open_run(foreign, "toy", {}):
        pass
    legacy = tmp_path / "old"
    legacy.mkdir()
    (legacy / "samples.jsonl").write_text("{}\n")
    with pytest.raises(RunFolderConflict, match="earlier heritage-eval version"), \
            open_run(legacy, "toy", {}):
        pass
    with open_run(legacy, "toy", {}, mode="overwrite"):
        assert not (legacy / "samples.jsonl").exists()
    with open_run(foreign, "toy", {}, mode="overwrite"):
        pass
    assert (foreign / "holiday.jpg").exists()  # --overwrite deletes only a run's files
