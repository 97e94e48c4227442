"""What the platform refuses in a plug-in, each as one warning or one error line (exit 2),
never a traceback and never a silent change (core/plugins.py):

- a plug-in declaring a built-in's name: the built-ins load first and keep the name, the
  same way whatever the install order; the plug-in is named in a warning;
- an option named like a platform option (``limit``, ``model`` …);
- a lazy ``"module:Class"`` target that does not import, is no Benchmark, or carries
  another ``name`` than its entry point.

Each plug-in is a hand-written ``*.dist-info`` (what ``pip install`` writes and
``importlib.metadata`` reads) plus its module, on ``PYTHONPATH``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = '''
from typing import Annotated, ClassVar
from heritage_eval.plugin import Benchmark, BenchmarkOptions, BenchmarkPlugin, opt


class Opts(BenchmarkOptions):
    {field}: Annotated[int, opt("a number")] = 1


class B(Benchmark):
    name: ClassVar[str] = "{name}"
    help: ClassVar[str] = "IMPOSTOR {name}"
    Options = Opts

    def load(self, config): raise NotImplementedError
    def plan(self, s, c, d): raise NotImplementedError
    def score(self, d, r, c): raise NotImplementedError
    def aggregate(self, r, d, c): return {{}}
    def render_markdown(self, s): return ""


PLUGIN = BenchmarkPlugin(benchmark=B, help="IMPOSTOR {name}")
LAZY = BenchmarkPlugin(benchmark="{module}_nothere:X", help="lazy {name}")
'''


def _plugin(root: Path, dist: str, module: str, entry: str, *, name: str,
            field: str = "depth", attr: str = "PLUGIN") -> None:
    info = root / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(
        f"[heritage_eval.benchmarks]\n{entry} = {module}:{attr}\n", encoding="utf-8")
    (root / f"{module}.py").write_text(BENCH.format(field=field, name=name, module=module),
                                       encoding="utf-8")


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), *sys.path])}
    return subprocess.run([sys.executable, "-m", "heritage_eval.cli.main", *args],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("dist", ["aaa-clash", "zzz-clash"])  # before / after by name
def test_a_builtin_name_stays_the_builtins(tmp_path: Path, dist: str) -> None:
    _plugin(tmp_path, dist, dist.replace("-", "_"), "ancient-bench", name="ancient-bench")
    listed = _cli(tmp_path, "list")
    assert listed.returncode == 0 and "IMPOSTOR" not in listed.stdout
    assert "registered twice" in listed.stderr and "Traceback" not in listed.stderr
    # the built-in registered whole: its score command is still there
    assert _cli(tmp_path, "score", "ancient-bench", "--help").returncode == 0


@pytest.mark.parametrize("field", ["limit", "model", "max_tokens", "out"])
def test_an_option_named_like_a_platform_option_is_refused(tmp_path: Path,
                                                           field: str) -> None:
    _plugin(tmp_path, "opt-clash", "opt_clash", "opt-clash", name="opt-clash", field=field)
    done = _cli(tmp_path, "run", "opt-clash", "--help")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"option(s) {field}" in done.stderr and "platform's own" in done.stderr
    assert _cli(tmp_path, "list").returncode == 0  # the rest keeps working


def test_a_lazy_target_that_does_not_import(tmp_path: Path) -> None:
    _plugin(tmp_path, "lazy-bad", "lazy_bad", "lazy-bad", name="lazy-bad", attr="LAZY")
    done = _cli(tmp_path, "run", "lazy-bad", "--help")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "lazy_bad_nothere:X failed to load" in done.stderr


def test_a_class_named_otherwise_than_its_entry_point(tmp_path: Path) -> None:
    _plugin(tmp_path, "renamed", "renamed", "renamed", name="something-else")
    done = _cli(tmp_path, "run", "renamed", "--help")
    assert done.returncode == 2 and "'something-else'" in done.stderr
    assert "Traceback" not in done.stderr
