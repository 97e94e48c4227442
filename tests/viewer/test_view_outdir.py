"""``heritage-eval view``: which folders it writes into, which run folders it refuses.

- the site folder follows the rule of every command (docs/reference/conventions.md,
  "Files the commands write"): a non-empty folder is refused (exit 2, named, untouched)
  unless it is an earlier viewer site or ``--overwrite`` is given; a file is refused
  naming ``--out``;
- a RUN that does not exist says so;
- a run folder holding the old results of an unfinished ``--resume`` with new settings is
  refused with ``compare``'s message (one check: ``report.runs.check_owner``);
- runs of different benchmarks are shown together, as documented, with a note.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heritage_eval.cli.main import main
from heritage_eval.core.rundir import open_run
from heritage_eval.report.runs import RunReadError
from heritage_eval.report.runs import read_run as report_read_run
from heritage_eval.viewer import ViewerError, build
from heritage_eval.viewer.outdir import MARKER
from tests.report.test_resumed_owner import _scored_folder
from tests.viewer.conftest import record, write_run


def _view(*args: str | Path) -> int:
    return main(["view", *map(str, args)])


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (what "untouched" is checked against)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# ---- the site folder: a grid of what --out may hold ----

def _user_files(d: Path) -> None:
    d.mkdir(parents=True)
    (d / "index.html").write_text("<p>my own page</p>", encoding="utf-8")
    (d / "notes.txt").write_text("mine", encoding="utf-8")


def _empty(d: Path) -> None:
    d.mkdir(parents=True)


def _site_with_marker(d: Path) -> None:
    run = write_run(d.parent / "earlier", [record("x")])
    build([run], d)


def _site_before_the_marker(d: Path) -> None:  # built by a version that wrote no marker
    _site_with_marker(d)
    (d / MARKER).unlink()


def _interrupted_build(d: Path) -> None:  # a build killed after its first write
    d.mkdir(parents=True)
    (d / MARKER).write_text("", encoding="utf-8")
    (d / "data").mkdir()
    (d / "data" / "r0-p0.js").write_text("half", encoding="utf-8")


def _hidden_user_file(d: Path) -> None:
    d.mkdir(parents=True)
    (d / ".keep").write_text("", encoding="utf-8")


def _not_a_site_index(d: Path) -> None:  # a data/index.js of something else
    (d / "data").mkdir(parents=True)
    (d / "data" / "index.js").write_text("console.log(1)", encoding="utf-8")


# (how --out is prepared, --overwrite given, expected exit status); 2 = refused
GRID = [
    (None, False, 0), (_empty, False, 0),
    (_site_with_marker, False, 0), (_site_before_the_marker, False, 0),
    (_interrupted_build, False, 0),
    (_user_files, False, 2), (_hidden_user_file, False, 2), (_not_a_site_index, False, 2),
    (_user_files, True, 0), (_hidden_user_file, True, 0), (_not_a_site_index, True, 0),
]


@pytest.mark.parametrize(("prepare", "overwrite", "status"), GRID,
                         ids=[f"{p.__name__ if p else 'absent'}-{o}" for p, o, _ in GRID])
def test_site_folder_grid(tmp_path: Path, prepare: object, overwrite: bool, status: int,
                          capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: view overwriting the user's own index.html in a non-empty --out
    run = write_run(tmp_path / "run", [record("a")])
    out = tmp_path / "out" / "site"
    if callable(prepare):
        prepare(out)
    before = _tree(out) if out.is_dir() else {}
    rc = _view(run, "--out", out, *(["--overwrite"] if overwrite else []))
    err = capsys.readouterr().err
    assert rc == status, err
    if status == 2:
        assert f"--out {out} is not empty" in err and "--overwrite" in err
        assert _tree(out) == before  # nothing written, nothing removed
        return
    assert (out / MARKER).is_file() and (out / "data" / "index.js").is_file()
    assert "my own page" not in (out / "index.html").read_text(encoding="utf-8")
    for name, data in before.items():  # the user's files that are not the site's: kept
        if name in ("notes.txt", ".keep"):
            assert (out / name).read_bytes() == data


def test_the_python_api_has_the_same_rule(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", [record("a")])
    _user_files(tmp_path / "mine")
    with pytest.raises(ViewerError, match="is not empty and holds no earlier viewer site"):
        build([run], tmp_path / "mine")
    assert build([run], tmp_path / "mine", overwrite=True).n_samples == 1
    assert build([run], tmp_path / "mine").n_samples == 1  # now an earlier site


def test_the_default_site_folder_is_checked_too(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    run = write_run(tmp_path / "run", [record("a")])
    _user_files(run / "viewer")
    assert _view(run) == 2
    assert "default --out" in capsys.readouterr().err
    assert (run / "viewer" / "index.html").read_text(encoding="utf-8") == "<p>my own page</p>"
    assert _view(run, "--overwrite") == 0


@pytest.mark.parametrize("where", ["file", "below a file"])
def test_out_that_is_a_file_names_the_option(tmp_path: Path, where: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: a bare "error: File exists (...)" that names no option
    run = write_run(tmp_path / "run", [record("a")])
    blocker = tmp_path / "afile"
    blocker.write_text("keep", encoding="utf-8")
    out = blocker if where == "file" else blocker / "site"
    assert _view(run, "--out", out) == 2
    err = capsys.readouterr().err
    assert f"error: --out {out} " in err and "File exists" not in err
    assert ("exists and is not a folder" if where == "file" else
            f"{blocker} is a file, not a folder") in err
    assert blocker.read_text(encoding="utf-8") == "keep"


def test_a_run_that_does_not_exist_says_so(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: "not a folder" for a path that is not there at all
    assert _view(tmp_path / "nowhere", "--out", tmp_path / "site") == 2
    assert f"run folder {tmp_path / 'nowhere'} does not exist" in capsys.readouterr().err
    (tmp_path / "afile").write_text("", encoding="utf-8")
    assert _view(tmp_path / "afile", "--out", tmp_path / "site") == 2
    assert f"run folder {tmp_path / 'afile'} is not a folder" in capsys.readouterr().err
    with pytest.raises(ViewerError, match="does not exist"):
        build([tmp_path / "nowhere"], tmp_path / "site")
    assert not (tmp_path / "site").exists()


# ---- a run folder left by an unfinished --resume with new settings ----

def _scored(tmp_path: Path) -> Path:
    """A finished `score ancient-bench` folder (one sample, a real run.json)."""
    return _scored_folder(tmp_path)[2]


def _interrupt_resume(out: Path, change: dict[str, object]) -> None:
    """What `score … --resume` with ``change`` does before it is killed."""
    old = json.loads((out / "run.json").read_text("utf-8"))
    with pytest.raises(KeyboardInterrupt), open_run(
            out, "ancient-bench", {**old["config"], **change}, mode="resume"):
        raise KeyboardInterrupt


def test_stale_results_of_an_unfinished_resume_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: a site of the old settings' results shown under the new settings
    out = _scored(tmp_path)
    _interrupt_resume(out, {"protocol": "paper"})
    with pytest.raises(RunReadError) as exc:  # compare's reader: the reference message
        report_read_run(out)
    capsys.readouterr()
    site = tmp_path / "site"
    assert _view(out, "--out", site) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"error: {exc.value}"  # the same message, word for word
    assert "--resume with new settings did not finish" in err
    assert not site.exists()
    with pytest.raises(ViewerError, match="did not finish"):
        build([out], site)


def test_an_unfinished_resume_with_the_same_settings_is_shown(tmp_path: Path) -> None:
    # the control: run.json and summary.json name one configuration, the folder views
    out = _scored(tmp_path)
    _interrupt_resume(out, {})
    assert _view(out, "--out", tmp_path / "site") == 0


# ---- runs of different benchmarks: shown together (documented), said on stderr ----

def test_runs_of_different_benchmarks_are_shown_with_a_note(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toy = write_run(tmp_path / "toy", [record("a")])
    ab = write_run(tmp_path / "ab", [record("a", benchmark="ancient-bench")],
                   benchmark="ancient-bench")
    assert _view(toy, ab, "--out", tmp_path / "mixed") == 0
    err = capsys.readouterr().err
    assert "note: the runs are of different benchmarks (toy, ancient-bench)" in err
    html = (tmp_path / "mixed" / "index.html").read_text(encoding="utf-8")
    assert "toy (toy)" in html and "ab (ancient-bench)" in html  # one header each
    toy2 = write_run(tmp_path / "toy2", [record("a", model="m2")])
    assert _view(toy, toy2, "--out", tmp_path / "same") == 0
    assert "different benchmarks" not in capsys.readouterr().err
