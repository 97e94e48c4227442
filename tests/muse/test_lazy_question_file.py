"""``run muse`` reads its question file again on each pass instead of holding it
(``benchmarks/muse/question_index.py``): the run folder is the same, byte for byte, as
the one made by the code that held the file — reproduced here from the functions it used
(``load_question_set``, ``select``, ``plan_turns``, the list filter of the chance
baseline's open answers), which are the reference — over generated question files with
unreadable lines, duplicate ids, missing images, ``--limit``, ``--tasks``, model
failures and embedder failures; a run interrupted half-way resumes to the same folder;
the file changing under a run is an error."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import signal
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from heritage_eval.benchmarks.muse import benchmark as muse_benchmark
from heritage_eval.benchmarks.muse import question_index
from heritage_eval.benchmarks.muse.benchmark import Muse, options_of, refusal
from heritage_eval.benchmarks.muse.chance_options import MIN_COUNT_RANGE
from heritage_eval.benchmarks.muse.questions import MAX_COUNT, Question
from heritage_eval.benchmarks.muse.run import (
    ChanceOptions,
    load_question_set,
    plan_turns,
    select,
    supported_tasks,
)
from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS
from heritage_eval.cli import interrupts
from heritage_eval.cli.main import main
from heritage_eval.core import engine
from heritage_eval.core.benchmark import LoadedData, RunContext
from heritage_eval.core.config import RunConfig
from heritage_eval.core.types import GenerationSettings, Message, Response, stable_hash
from heritage_eval.models.base import ModelBackend
from tests.muse.streaming_data import OPEN_TASKS, HashEmbedder, ScriptedModel, write_file


class ListedChance(ChanceOptions):
    """The chance options as they were: ``(question id, reference)`` pairs per task, the
    others of a question found by filtering the whole list."""

    def __init__(self, questions: Sequence[Question]) -> None:
        counts = [int(t.answer) for q in questions for t in q.turns
                  if t.answer_format == "number" and isinstance(t.answer, int | float)]
        largest = max(MIN_COUNT_RANGE, *counts) if counts else MIN_COUNT_RANGE
        super().__init__(min(largest, MAX_COUNT), {})
        pairs: dict[str, list[tuple[str, str]]] = {}
        for q in questions:
            for t in q.turns:
                if t.answer_format == "open" and t.answer:
                    pairs.setdefault(t.task, []).append((q.id, str(t.answer)))
        object.__setattr__(self, "pairs", pairs)

    def others(self, task: str, qid: str) -> Sequence[str]:
        pairs: dict[str, list[tuple[str, str]]] = getattr(self, "pairs")  # noqa: B009
        return [ref for owner, ref in pairs.get(task, []) if owner != qid]


def held_load(self: Muse, config: RunConfig) -> LoadedData:
    """``Muse.load`` as it was, the whole file held (the checks of bad input left out:
    these files are good)."""
    opts = options_of(config)
    given = Path(opts.questions)
    self._materialised[opts.questions] = given
    qs = load_question_set(given, opts.images)
    tasks = opts.task_list()
    questions = select(qs, tasks, config.output.limit)
    self._out = config.output.out
    bad = [(row, line) for row, line in zip(qs.bad, qs.bad_lines, strict=True)
           if not tasks or row.task not in TASK_IDS or row.task in tasks]
    prompts = stable_hash([t.prompt for q in questions for t in q.turns])
    return LoadedData(
        samples=questions, image_root=str(qs.base_dir),
        info={"question_file": str(given), "n_questions": len(questions),
              "bad_lines": len(qs.bad)},
        extra={"qs": qs, "bad": bad, "chance": ListedChance(qs.questions),
               "sha256": hashlib.sha256(given.read_bytes()).hexdigest(),
               "questions": given, "index": SimpleNamespace(prompt_hash=prompts)})


def held_refuse_model(self: Muse, backend: ModelBackend, data: LoadedData,
                      config: RunConfig) -> str | None:
    return refusal(backend.spec, supported_tasks(backend), data.samples,
                   options_of(config).task_list(), backend.reads_prompt)


def held_prepare(self: Muse, ctx: RunContext, data: LoadedData) -> None:
    """``Muse.prepare`` as it was: every question planned up front."""
    opts, qs = options_of(ctx.config), data.extra["qs"]
    tasks = opts.task_list()
    attempted = supported_tasks(ctx.backend)
    ctx.resources["attempted"] = attempted
    ctx.resources["turn_plan"] = plan_turns(qs, list(data.samples), attempted, tasks)
    needs = any(t.answer_format == "open" and (not tasks or t.task in tasks)
                and (attempted is None or t.task in attempted)
                for q in data.samples for t in q.turns)
    embedder = None
    if needs:
        from heritage_eval.core.embedding_store import store_for
        from heritage_eval.metrics.embedding_cache import CachedEmbedder

        embedder = CachedEmbedder(muse_benchmark.create_embedder(
            opts.embedder, opts.embedder_base_url, opts.embedder_api_key_env),
            lambda: store_for(ctx.cache))
    ctx.resources["embedder"] = embedder


def _files(out: Path) -> dict[str, Any]:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    for key in ("created_utc", "run_seconds", "resumed", "command", "git_commit"):
        summary["provenance"].pop(key, None)
    return {"summary": summary,
            "samples": (out / "samples.jsonl").read_text(encoding="utf-8"),
            "md": (out / "summary.md").read_text(encoding="utf-8").split("## Provenance")[0],
            "left": sorted(p.name for p in out.iterdir())}


@dataclass(frozen=True)
class Case:
    """File options (:func:`write_file`), run options, the scripted model's salt
    (``None``: ``baseline:random``, whose open answers are other questions'
    references) and the tasks it declares it attempts (``None``: all), the embedder's
    options and a duplicated line (its index, or -1)."""

    file: dict[str, Any]
    run: tuple[str, ...] = ()
    salt: str | None = None
    attempts: tuple[str, ...] | None = None
    embedder: dict[str, Any] | None = None
    duplicate: int = -1


class SomeTasks(ScriptedModel):
    """:class:`ScriptedModel` attempting only ``tasks`` (``supported_tasks``): the
    other turns are not sent, a dialogue is cut after its last attempted turn."""

    def __init__(self, salt: str, tasks: tuple[str, ...]) -> None:
        super().__init__(salt)
        self.supported_tasks = tasks


CASES = {
    "random-every-kind-duplicate-id": Case({"n": 150, "seed": 21, "bad_lines": 2,
                                            "missing": 2}, duplicate=7),
    "random-open-answers": Case({"n": 260, "seed": 22, "kinds": ("open", "dialogue",
                                                                 "count")}),
    "random-limit-and-tasks": Case({"n": 200, "seed": 23, "bad_lines": 2, "missing": 3},
                                   ("--limit", "6", "--tasks", "visual_clue_identification",
                                    "object_count", "remote_interaction"), duplicate=3),
    "scripted-failures-exclude": Case({"n": 160, "seed": 24, "bad_lines": 3, "missing": 2},
                                      ("--model-failures", "exclude"), salt="p",
                                      embedder={"fail": "FAILME"}),
    "scripted-limit": Case({"n": 120, "seed": 25}, ("--limit", "4"), salt="q"),
    "model-attempts-some-tasks": Case({"n": 150, "seed": 26, "missing": 2}, salt="r",
                                      attempts=("object_classification", "object_count",
                                                OPEN_TASKS[0], "remote_interaction")),
}


def _write(root: Path, case: Case) -> Path:
    qfile = write_file(root, **case.file)
    if case.duplicate >= 0:  # the same question twice: the second is an unreadable line
        lines = qfile.read_text(encoding="utf-8").splitlines(keepends=True)
        lines.insert(case.duplicate + 2, lines[case.duplicate + 1])
        qfile.write_text("".join(lines), encoding="utf-8")
    return qfile


def _run(argv: list[str], out: Path, lazy_from: int,
         monkeypatch: pytest.MonkeyPatch) -> int:
    with monkeypatch.context() as m:
        m.setattr(question_index, "LAZY_FROM", lazy_from)
        return main([*argv, "--out", str(out)])


@pytest.mark.parametrize("name", sorted(CASES))
def test_reread_run_equals_the_held_file_run(name: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[name]
    qfile = _write(tmp_path, case)
    if case.salt is not None:
        model = ScriptedModel(case.salt) if case.attempts is None else \
            SomeTasks(case.salt, case.attempts)
        monkeypatch.setattr(engine, "backend_from_config", lambda config: model)
    monkeypatch.setattr(muse_benchmark, "create_embedder",
                        lambda *a, **k: HashEmbedder(**(case.embedder or {})))
    argv = ["run", "muse", "--questions", str(qfile), "--model", "baseline:random",
            "--no-cache", *case.run]
    codes = [_run(argv, tmp_path / "lazy", 0, monkeypatch),
             _run(argv, tmp_path / "small", 10**9, monkeypatch)]
    with monkeypatch.context() as m:
        m.setattr(Muse, "load", held_load)
        m.setattr(Muse, "refuse_model", held_refuse_model)
        m.setattr(Muse, "prepare", held_prepare)
        codes.append(main([*argv, "--out", str(tmp_path / "held")]))
    assert codes[0] == codes[1] == codes[2] == 0
    held = _files(tmp_path / "held")
    assert held["samples"].count("\n") > 30  # a run worth comparing
    for label in ("lazy", "small"):
        got = _files(tmp_path / label)
        assert got["samples"] == held["samples"], label
        assert got["summary"] == held["summary"], label
        assert got["md"] == held["md"], label
        assert got["left"] == held["left"], label


class StopAfter(ScriptedModel):
    """:class:`ScriptedModel` that stops the run at its ``stop``-th request with a real
    SIGINT to this process, as Ctrl-C sends it (a ``KeyboardInterrupt`` raised inside
    the coroutine would bypass asyncio's own handling and leave the loop broken)."""

    def __init__(self, salt: str, stop: int) -> None:
        super().__init__(salt)
        self.stop = stop
        self.calls = 0

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        self.calls += 1
        if self.calls == self.stop:
            signal.raise_signal(signal.SIGINT)
            await asyncio.sleep(0)  # the handler runs: the run is cancelled here
        return await super().generate(messages, settings, payload)


def test_an_interrupted_reread_run_resumes_to_the_same_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    qfile = write_file(tmp_path, n=140, seed=31, bad_lines=1, missing=1)
    monkeypatch.setattr(muse_benchmark, "create_embedder", lambda *a, **k: HashEmbedder())
    monkeypatch.setattr(question_index, "LAZY_FROM", 0)
    argv = ["run", "muse", "--questions", str(qfile), "--model", "baseline:random",
            "--concurrency", "1"]
    whole_model = StopAfter("s", -1)
    monkeypatch.setattr(engine, "backend_from_config", lambda config: whole_model)
    assert main([*argv, "--out", str(tmp_path / "whole")]) == 0
    stopping = StopAfter("s", 60)
    monkeypatch.setattr(engine, "backend_from_config", lambda config: stopping)
    # after a real signal the command line's watchdog ends the process once its grace
    # period is over (cli/interrupts.py): here it only says so, and the test waits for
    # it, so that it does not end the test process later
    ended = threading.Event()
    monkeypatch.setattr(interrupts, "_hard_exit", lambda signum, grace: ended.set())
    # the command line reports the interruption and stops, the answers so far cached
    try:
        assert main([*argv, "--out", str(tmp_path / "resumed")]) != 0
    finally:  # (even when the run failed: the watchdog must not outlive the patch)
        assert ended.wait(30)
    assert not (tmp_path / "resumed" / "summary.json").exists()
    again = StopAfter("s", -1)
    monkeypatch.setattr(engine, "backend_from_config", lambda config: again)
    assert main([*argv, "--out", str(tmp_path / "resumed")]) == 0
    # the answers given before the stop come from the cache (failed requests and
    # dialogues cut by the stop are asked again)
    assert 0 < again.calls < whole_model.calls - 30, (again.calls, whole_model.calls)
    whole, resumed = _files(tmp_path / "whole"), _files(tmp_path / "resumed")
    # the same records and summary, but for which answers came from the cache
    assert _uncached(resumed["samples"]) == _uncached(whole["samples"])
    cached = [run["summary"]["models"]["scripted"]["response_outcomes"].pop("cached")
              for run in (whole, resumed)]
    assert cached[1] > cached[0]  # (within one run, a repeated request is cached too)
    assert resumed["summary"] == whole["summary"]
    assert resumed["md"] == whole["md"]


def _uncached(samples: str) -> list[Any]:
    """The records of ``samples`` (JSON lines) without their ``cached`` flags."""
    def drop(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: drop(v) for k, v in value.items() if k != "cached"}
        return [drop(v) for v in value] if isinstance(value, list) else value
    return [drop(json.loads(line)) for line in samples.splitlines()]


def test_a_question_file_changed_under_the_run_is_an_error(tmp_path: Path) -> None:
    qfile = write_file(tmp_path, n=30, seed=32)
    index = question_index.index_questions(qfile, None, None, None, lazy_from=0)
    first = [q.id for q in index.samples]
    assert first == index.ids and len(first) == 30
    lines = qfile.read_text(encoding="utf-8").splitlines(keepends=True)
    rng = random.Random(3)
    k = rng.randrange(2, len(lines))
    qfile.write_text("".join(lines[:k] + lines[k + 1:]), encoding="utf-8")  # one line less
    with pytest.raises(RuntimeError, match="changed while running"):
        list(index.samples)
