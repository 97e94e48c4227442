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
        assert "another heritage-eval run" in proc.stdout and "pid" in proc.stdout
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


def test_refused_second_opener_keeps_the_holders_details(tmp_path: Path) -> None:
    # guards against: the refused process truncating .lock, so that the next one is told
    # "pid unknown"
    out = tmp_path / "run"
    with open_run(out, "toy", {}):
        holder = (out / ".lock").read_text()
        with pytest.raises(RunFolderBusy), open_run(out, "toy", {}):
            pass
        assert (out / ".lock").read_text() == holder and "pid" in holder


def test_threads_racing_for_a_new_folder_get_busy_not_conflict(tmp_path: Path) -> None:
    # guards against: the folder check running before the lock, so that a second thread
    # saw the first one's half-made folder as "not empty and holds no heritage-eval run"
    import threading

    out, errors, entered = tmp_path / "run", [], threading.Event()
    release = threading.Event()

    def first() -> None:
        with open_run(out, "toy", {}):
            entered.set()
            release.wait(10)

    t = threading.Thread(target=first)
    t.start()
    entered.wait(10)
    try:
        with open_run(out, "toy", {}):
            pass
    except (RunFolderBusy, RunFolderConflict) as exc:
        errors.append(exc)
    release.set()
    t.join()
    assert len(errors) == 1 and isinstance(errors[0], RunFolderBusy)


def test_api_and_cli_configurations_are_the_same(tmp_path: Path) -> None:
    # guards against: a CLI-only value (e.g. 'run --config', null) entering the
    # fingerprint, so that he.evaluate refused the folder 'make demo' had written
    # ("settings differ"): both routes build one typed RunConfig
    from heritage_eval.api import run_config
    from heritage_eval.cli.main import build_parser
    from heritage_eval.cliargs.run_options import run_config_from_args
    from heritage_eval.core import plugins

    bench = plugins.benchmark("ancient-bench")
    argv = ["run", "ancient-bench", "--data", str(tmp_path), "--out", str(tmp_path)]
    cli = run_config_from_args(build_parser(argv).parse_args(argv), bench.name,
                               bench.Options, defaults=bench.platform_defaults(),
                               required=bench.required_options())
    api = run_config("ancient-bench", data=tmp_path, out=tmp_path)
    assert cli == api
    assert bench.fingerprint(cli) == bench.fingerprint(api)
    assert bench.fingerprint(api)["model"] == "rapidocr"  # the benchmark's default model


def test_an_option_added_later_at_its_default_still_resumes(tmp_path: Path) -> None:
    # guards against: every new option of a later version turning an existing run folder
    # into "another configuration" (upgrading must not refuse 'make demo' twice)
    out = tmp_path / "run"
    with open_run(out, "toy", {"k": 8}):
        pass
    with open_run(out, "toy", {"k": 8, "refusals": "error"},
                  defaults={"refusals": "error"}) as s:
        assert s.resumed
    # ... but the same new option set to something else is another configuration
    with pytest.raises(RunFolderConflict, match="refusals: 'error' there, 'wrong' now"), \
            open_run(out, "toy", {"k": 8, "refusals": "wrong"},
                     defaults={"refusals": "error"}):
        pass
