"""``run muse``'s typed options (:class:`~heritage_eval.benchmarks.muse.run_options.
RunOptions`): ``--tasks`` reads ``a,b`` and ``a b`` alike on the command line and in
Python, and the run-folder fingerprint keeps the keys the argparse-built ``run muse``
wrote, so a run folder made before the typed configuration still resumes.

Expected values: the task lists are the split-on-commas rule of the README, worked out
by hand; :data:`OLD_KEYS` are the ``config`` keys of ``run.json`` written by ``run muse``
before the typed configuration (read off a run of that version on the demo questions).
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import pytest

from heritage_eval.api import run_config
from heritage_eval.benchmarks.muse.benchmark import Muse
from heritage_eval.cliargs.run_options import add_run_options, run_config_from_args
from heritage_eval.core.config import OptionsError
from heritage_eval.core.engine import default_fingerprint
from tests.muse.test_run import build_question_file

#: ``run.json`` ``config`` keys of a run folder written by the argparse-built ``run muse``
OLD_KEYS = frozenset({
    "allow_outside_paths", "base_url", "embedder", "embedder_base_url", "images",
    "max_pixels", "max_side", "max_tokens", "model", "model_failures", "model_option",
    "questions", "seed_request", "tasks", "temperature", "question_file_sha256"})


def _cli_tasks(*words: str) -> tuple[str, ...] | None:
    bench = Muse()
    parser = argparse.ArgumentParser()
    add_run_options(parser, bench.Options, defaults=bench.platform_defaults(),
                    required=bench.required_options())
    args = parser.parse_args(["--questions", "q.jsonl", "--model", "baseline:random",
                              "--out", "o", *words])
    config = run_config_from_args(args, "muse", bench.Options,
                                  defaults=bench.platform_defaults(),
                                  required=bench.required_options())
    return config.options.tasks  # type: ignore[attr-defined]


def test_tasks_read_alike_on_the_command_line_and_in_python() -> None:
    # in the order of the task list (TASK_IDS: emotion_detection is 2nd, jigsaw_puzzle
    # 8th, object_count 9th), whatever order they were given in: one configuration
    want = ("emotion_detection", "jigsaw_puzzle", "object_count")
    assert _cli_tasks("--tasks", "object_count,jigsaw_puzzle", "emotion_detection") == want
    assert _cli_tasks("--tasks", "object_count", "jigsaw_puzzle,,emotion_detection,") == want
    assert _cli_tasks() is None  # every task in the file
    for value in ("object_count, jigsaw_puzzle,emotion_detection,object_count",
                  ["object_count", "jigsaw_puzzle,emotion_detection"]):
        config = run_config("muse", questions="q.jsonl", model="baseline:random", out="o",
                            tasks=value)
        assert config.options.tasks == want  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", ["object_counting", "", []])
def test_a_refused_task_names_the_option(value: object) -> None:
    with pytest.raises(OptionsError, match="option 'tasks': "):
        run_config("muse", questions="q.jsonl", model="baseline:random", out="o",
                   tasks=value)


def test_fingerprint_keeps_the_keys_of_older_run_folders(tmp_path: Path) -> None:
    qfile = build_question_file(tmp_path)
    bench = Muse()
    config = run_config("muse", questions=str(qfile), model="baseline:random",
                        out=str(tmp_path / "run"), tasks="object_count", concurrency=3)
    found = bench.fingerprint(config)
    assert set(found) >= OLD_KEYS
    defaults = default_fingerprint(bench)
    # a key the old version did not write must sit at its default, or the older folder
    # is refused (core.rundir compares missing keys against the defaults)
    assert {k: found[k] for k in set(found) - OLD_KEYS} == \
        {k: defaults[k] for k in set(found) - OLD_KEYS}
    assert found["questions"] == str(qfile.resolve())
    assert found["tasks"] == ["object_count"]
    assert found["question_file_sha256"] == hashlib.sha256(qfile.read_bytes()).hexdigest()
    assert "concurrency" not in found and "out" not in found  # how a run proceeds
