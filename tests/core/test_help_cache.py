"""The ``--help`` cache (heritage_eval/cli/help_cache.py): a help request is answered
with exactly the text argparse prints, without importing numpy, pydantic or Pillow, and
never from an entry whose sources changed."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from heritage_eval.cli import help_cache

#: The child: the real entry point (the process's own command line), reporting on stderr
#: which heavy modules it imported.
CHILD = r"""
import atexit, os, sys
atexit.register(lambda: os.write(2, ("\nHEAVY " + ",".join(
    m for m in ("numpy", "pydantic", "PIL", "pandas") if m in sys.modules)).encode()))
sys.argv = ["heritage-eval", *sys.argv[1:]]
from heritage_eval.cli.main import main
sys.exit(main())
"""


def _cli(args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, help_cache.ENV: str(cache), "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True,
                          text=True, env=env, timeout=300, check=False)


def _heavy(proc: subprocess.CompletedProcess[str]) -> str:
    return proc.stderr.rsplit("HEAVY ", 1)[1].strip()


def _entry(cache: Path) -> Path:
    (entry,) = cache.glob("run-ancient-bench.*.json")
    return entry


def _prime(args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    """The first run, which keeps the help; again (at most 3 times) when a source file
    had changed in the last RACY_S seconds (nothing kept then: others edit this tree)."""
    for _ in range(3):
        proc = _cli(args, cache)
        if list(cache.glob("run-ancient-bench.*.json")):
            break
        time.sleep(help_cache.RACY_S)
    return proc


def test_help_words() -> None:
    # by the rule in help_words' docstring: command words, then -h/--help last
    assert help_cache.help_words(["run", "ancient-bench", "--help"]) == ("run", "ancient-bench")
    assert help_cache.help_words(["muse", "analyze", "-h"]) == ("muse", "analyze")
    assert help_cache.help_words(["--help"]) == ()
    for argv in (["run", "ancient-bench"], ["run", "ancient-bench", "--data", "x", "--help"],
                 ["-v", "run", "--help"], ["a", "b", "c", "--help"], ["--help", "run"], [],
                 ["--version"], ["", "--help"]):
        assert help_cache.help_words(argv) is None, argv


def test_cached_help_is_the_same_text_and_light(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["run", "ancient-bench", "--help"]
    first = _prime(args, tmp_path)  # builds the parser, keeps its help
    assert first.returncode == 0, first.stderr
    assert "pydantic" in _heavy(first)  # the benchmark's options were built
    assert _entry(tmp_path).is_file()
    second = _cli(args, tmp_path)  # served from the cache
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert _heavy(second) == ""  # no numpy, pydantic, PIL, pandas
    # and it is what the parser built in this process prints (argv given: no cache)
    from heritage_eval.cli.main import main

    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as done:
        main(args)
    assert done.value.code == 0
    assert capsys.readouterr().out == second.stdout


def test_an_entry_is_served_only_while_its_sources_are_unchanged(tmp_path: Path) -> None:
    args = ["run", "ancient-bench", "--help"]
    real = _prime(args, tmp_path).stdout
    path = _entry(tmp_path)
    entry = json.loads(path.read_text(encoding="utf-8"))
    options_py = next(p for p in entry["files"]
                      if p.endswith(os.path.join("ancient_bench", "options.py")))
    assert entry["files"][options_py] is not None  # the benchmark's options were recorded
    entry["text"] = "SENTINEL\n"
    path.write_text(json.dumps(entry), encoding="utf-8")
    assert _cli(args, tmp_path).stdout == "SENTINEL\n"  # proof that the entry is used
    entry["files"][options_py][0] -= 1  # its modification time: as if it had been edited
    path.write_text(json.dumps(entry), encoding="utf-8")
    rebuilt = _cli(args, tmp_path)
    assert rebuilt.stdout == real and "pydantic" in _heavy(rebuilt)
    assert _cli(args, tmp_path).stdout == real  # the stale entry is never served again


def test_unchanged_compares_size_mtime_and_absence(tmp_path: Path) -> None:
    file, folder, gone = tmp_path / "a.py", tmp_path / "pkg", tmp_path / "new.py"
    file.write_text("x = 1\n", encoding="utf-8")
    folder.mkdir()
    st, dst = file.stat(), folder.stat()
    files = {str(file): help_cache._signature(str(file)), str(gone): None}
    dirs = {str(folder): dst.st_mtime_ns}
    assert help_cache.unchanged(files, dirs)
    os.utime(file, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # touched
    assert not help_cache.unchanged(files, dirs)
    os.utime(file, ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime restored: ctime differs
    assert not help_cache.unchanged(files, dirs)
    files[str(file)] = help_cache._signature(str(file))
    assert help_cache.unchanged(files, dirs)
    gone.write_text("", encoding="utf-8")  # a file that was missing now exists
    assert not help_cache.unchanged(files, dirs)
    gone.unlink()
    (folder / "m.py").write_text("", encoding="utf-8")  # a module added to a folder
    os.utime(folder, ns=(dst.st_atime_ns, dst.st_mtime_ns + 1_000_000))
    assert not help_cache.unchanged(files, dirs)


def test_nothing_is_kept_when_stderr_was_written(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    monkeypatch.setenv(help_cache.ENV, str(tmp_path))
    parser = argparse.ArgumentParser(prog="x")
    recorder = help_cache.Recorder()  # not started: no audit hook in the test process
    recorder._stderr = help_cache._CountingStream(io.StringIO())
    recorder._stderr.write("warning: a plug-in failed to load\n")
    help_cache.store(recorder, (), parser)
    assert list(tmp_path.iterdir()) == []
    help_cache.store(help_cache.Recorder(), (), parser)  # nothing written: kept
    assert len(list(tmp_path.glob("*.json"))) == 1


def test_the_cache_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    # "off" in any case, empty, and a relative folder (it would follow the working
    # directory) all turn it off; an absolute folder is used as given
    for value in ("", " ", "off", "OFF", "Off", "0", "no", "false", "rel/dir", "./x"):
        monkeypatch.setenv(help_cache.ENV, value)
        assert help_cache.folder() is None, value
        assert help_cache.cached_help(("run",)) is None
    monkeypatch.setenv(help_cache.ENV, "/tmp/he-help")
    assert help_cache.folder() == "/tmp/he-help"
    monkeypatch.delenv(help_cache.ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # ignored: the home folder's .cache
    monkeypatch.setenv("HOME", "/home/u")
    assert help_cache.folder() == "/home/u/.cache/heritage-eval/help"
