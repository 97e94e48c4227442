"""Streamed ``run muse`` (issue 23): the same ``samples.jsonl``, ``summary.json`` and
``summary.md`` as the list path (``Muse.score`` + ``Muse.aggregate``, the engine's path
when a benchmark gives no record sink), for generated question files that vary the
tasks, the open answers, model failures, dialogues cut short, unreadable lines, missing
images, ``--limit``, ``--tasks`` and embedder failures. The list path is the reference:
it is the code ``run muse`` ran before streaming."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.benchmarks.muse import benchmark as muse_benchmark
from heritage_eval.benchmarks.muse.benchmark import Muse
from heritage_eval.cli.main import main
from heritage_eval.core import engine
from tests.muse.streaming_data import OPEN_TASKS, HashEmbedder, ScriptedModel, write_file
from tests.run_folder_files import run_files


def _files(out: Path) -> dict[str, Any]:
    return run_files(out, tables=False, listing=True)


def _both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str],
          embedder: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``run muse argv`` streamed, then on the list path; each run gets a fresh
    :class:`HashEmbedder` made with ``embedder``."""
    monkeypatch.setattr(muse_benchmark, "create_embedder",
                        lambda *a, **k: HashEmbedder(**embedder))
    codes = [main([*argv, "--no-cache", "--out", str(tmp_path / "streamed")])]
    with monkeypatch.context() as m:
        m.setattr(Muse, "record_sink", lambda self, data, ctx: None)
        codes.append(main([*argv, "--no-cache", "--out", str(tmp_path / "listed")]))
    assert codes[0] == codes[1]
    return _files(tmp_path / "streamed"), _files(tmp_path / "listed")


@dataclass(frozen=True)
class Case:
    """File options (:func:`write_file`), run options, the scripted model's salt
    (``None``: ``baseline:random``), the embedder's options and the model's marks on
    open answers with their rate."""

    file: dict[str, Any]
    run: tuple[str, ...] = ()
    salt: str | None = None
    embedder: dict[str, Any] = field(default_factory=dict)
    marks: tuple[str, ...] = ()
    mark_rate: float = 0.2


CASES = {
    "random-all-kinds": Case({"n": 90, "seed": 1}),
    "several-batches": Case({"n": 300, "seed": 9, "kinds": ("open", "dialogue", "choice")},
                            salt="g", embedder={"fail": "FAILME", "zero": "ZEROME"},
                            marks=("FAILME", "ZEROME"), mark_rate=0.01),
    "scripted-failures": Case({"n": 120, "seed": 2, "bad_lines": 3, "missing": 2}, salt="a"),
    "exclude-and-limit": Case({"n": 80, "seed": 3, "bad_lines": 1, "missing": 1},
                              ("--model-failures", "exclude", "--limit", "7"), salt="b"),
    "answer-embedding-fails": Case({"n": 160, "seed": 4}, salt="c",
                                   embedder={"fail": "FAILME", "zero": "ZEROME"},
                                   marks=("FAILME", "ZEROME")),
    "reference-embedding-fails": Case({"n": 60, "seed": 5, "ref_marks": ("FAILREF",)},
                                      salt="d", embedder={"fail": "FAILREF"}),
    "open-tasks-only": Case({"n": 70, "seed": 6, "kinds": ("open", "dialogue")},
                            ("--tasks", *OPEN_TASKS), salt="e", embedder={"dim": 3}),
    "no-open-task": Case({"n": 50, "seed": 7, "bad_lines": 2},
                         ("--tasks", "object_count", "relative_position",
                          "remote_interaction"), salt="f"),
    "one-open-question": Case({"n": 12, "seed": 8, "kinds": ("choice", "open"), "n_art": 2}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_streamed_run_equals_list_path(name: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[name]
    qfile = write_file(tmp_path, **case.file)
    if case.salt is not None:  # the scripted model stands in for baseline:random
        model = ScriptedModel(case.salt, case.marks, case.mark_rate)
        monkeypatch.setattr(engine, "backend_from_config", lambda config: model)
    argv = ["run", "muse", "--questions", str(qfile), "--model", "baseline:random",
            *case.run]
    streamed, listed = _both(tmp_path, monkeypatch, argv, case.embedder)
    assert streamed["samples"] == listed["samples"]
    assert streamed["summary"] == listed["summary"]
    assert streamed["md"] == listed["md"]
    # no temporary file is left in the run folder
    assert streamed["left"] == listed["left"]
    assert not [n for n in streamed["left"] if n.startswith(".muse-")]


def test_cases_reach_what_they_are_for(tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The generated inputs do exercise the paths compared above (counted by hand from
    the records): open answers scored over several embedding batches, negative cosines
    clipped, answer-batch failures and zero vectors, a dialogue cut by a refusal."""
    qfile = write_file(tmp_path, n=300, seed=9, kinds=("open", "dialogue", "choice"))
    monkeypatch.setattr(engine, "backend_from_config",
                        lambda config: ScriptedModel("g", ("FAILME", "ZEROME"), 0.01))
    embedder = HashEmbedder(fail="FAILME", zero="ZEROME")
    monkeypatch.setattr(muse_benchmark, "create_embedder", lambda *a, **k: embedder)
    out = tmp_path / "run"
    assert main(["run", "muse", "--questions", str(qfile), "--model", "baseline:random",
                 "--no-cache", "--out", str(out)]) == 0
    recs = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    opened = [r for r in recs if r["details"]["answer_format"] == "open"]
    scored = [r for r in opened if r["state"] == "scored"]
    flags = [f for r in opened for f in r["details"].get("metric_flags") or []]
    errors = {r["error"] for r in opened if r["state"] == "unscored"}
    embedded = [r for r in opened if r["state"] in ("scored", "unscored")]
    per_task = max(sum(r["groups"]["task"] == t for r in embedded) for t in OPEN_TASKS)
    assert per_task > 64 and scored  # more than one batch of answers in a task
    assert "cosine_negative_as_0" in flags and "cosine_zero_vector" in flags
    assert any("cannot embed a text with 'FAILME'" in (e or "") for e in errors)
    assert all("chance_floor" in r["details"] for r in opened)
    cut = [r for r in recs if r["details"].get("model_failure") == "dialogue_cut"]
    assert cut  # a dialogue's later turns after the model's own failure
