"""``heritage-eval paper muse-fig11``: human vs models per task (MUSE Fig. 11, App. A.1).

Inputs: run folders of the models and one or more human runs, one per annotator
(``heritage-eval muse import-human``, model name ``human`` unless ``--name``; pick them
with ``--human NAME``, repeated for several annotators), all on the same question file.
The paper had annotators answer 20 sampled questions per task, reports the mean of its
two annotators, and compared the models *on the same questions*; here, per task, the
compared turns are those judged (``scored`` or ``unparsed``) in **every** human run and in
every drawn model's run, so every series of a task averages the same turns (``n`` per task
in the table). The ``Human`` series is the mean of the annotators' per-task scores (with
the same turns for all, equal to the per-turn mean); with one human run it is that run.
Scores are the records' ``score`` (accuracy 0/1, or embedding cosine for the open turns)
x100. Tasks without a common turn are left out (named in the note).

Default models: the top 8 of Table 2's ranking among the model runs (``--models``
chooses). Writes ``muse_fig11.png`` (radar, human dashed black) and
``muse_fig11.{md,csv,tex}``. A run on another question file than the human run's is
refused (exit 2): its question ids would not denote the same questions.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from heritage_eval.benchmarks.registry import Command
from heritage_eval.core.tables import Column, Table, write_table
from heritage_eval.paper.muse_common import (
    TABLE2_TASKS,
    add_models_arg,
    load,
    pick,
    table_rows,
)
from heritage_eval.report.paper_io import (
    PaperInputError,
    add_common_args,
    formats_of,
    guarded,
    prepare_out,
    print_written,
    read_runs,
    save_png,
)

if TYPE_CHECKING:
    import pandas as pd

    from heritage_eval.core.record import SampleRecord

DEFAULT_TOP = 8
JUDGED = ("scored", "unparsed")


def judged_scores(records: Sequence[SampleRecord]) -> dict[str, tuple[str, float]]:
    """Record id -> (task, score in [0, 1]) of the judged turns of one model."""
    out = {}
    for r in records:
        score = r.scores.get("score")
        if str(getattr(r.state, "value", r.state)) in JUDGED \
                and score is not None and r.groups.get("task"):
            out[r.id] = (r.groups["task"], float(score))
    return out


def compare(humans: Sequence[dict[str, tuple[str, float]]],
            models: dict[str, dict[str, tuple[str, float]]]
            ) -> tuple[pd.DataFrame, dict[str, int]]:
    """``(scores, n)``: rows = models then ``Human``, columns = task ids, percent over the
    turns judged in every human run and in every model run; ``n`` = those turns per task.
    ``Human`` = the mean over the annotators (``humans``, at least one; each record id ->
    (task, score in [0, 1])) of their per-task percent. Raises ``ValueError`` for no
    human."""
    import pandas as pd

    if not humans:
        raise ValueError("compare: at least one human run is needed")
    human = humans[0]
    common = set(human)
    for judged in [*humans[1:], *models.values()]:
        common &= set(judged)
    rows: dict[str, dict[str, float]] = {}
    n: dict[str, int] = {}
    for task in TABLE2_TASKS:
        ids = sorted(i for i in common if human[i][0] == task)
        if not ids:
            continue
        n[task] = len(ids)
        for name, judged in models.items():
            rows.setdefault(name, {})[task] = 100.0 * sum(judged[i][1] for i in ids) / len(ids)
        per_annotator = [100.0 * sum(h[i][1] for i in ids) / len(ids) for h in humans]
        rows.setdefault("Human", {})[task] = sum(per_annotator) / len(per_annotator)
    return pd.DataFrame.from_dict(rows, orient="index").astype(float), n


def add_args(p: argparse.ArgumentParser) -> None:
    add_common_args(p, "MUSE run folders: the models' runs and the human run(s), one per "
                       "annotator ('heritage-eval muse import-human'), same question file")
    add_models_arg(p, f"the top {DEFAULT_TOP} of Table 2's ranking among the model runs")
    p.add_argument("--human", action="append", default=None, metavar="NAME",
                   help="model name of a human run (default: human); repeat it for several "
                        "annotators, whose per-task scores are averaged (the paper "
                        "averages two)")


def _question_file(run_summary: dict[str, object]) -> object:
    prov = run_summary.get("provenance")
    return prov.get("question_file_sha256") if isinstance(prov, dict) else None


@guarded
def handle(args: argparse.Namespace) -> int:
    """Write ``muse_fig11.png`` and its table; exit 0 (2: unusable input)."""
    from heritage_eval.benchmarks.muse.analysis.figures import radar_figure
    from heritage_eval.benchmarks.muse.analysis.tables import rank
    from heritage_eval.benchmarks.muse.taxonomy import TASKS
    from heritage_eval.paper.muse_radar import style_dashed

    results = load(args.runs)
    runs = {Path(r.path).resolve(): r for r in read_runs(args.runs, ["muse"])}
    names = list(dict.fromkeys(args.human or ["human"]))
    humans = []
    for name in names:
        found = [r for r in results if r.name == name]
        if len(found) != 1:
            raise PaperInputError(f"--human {name!r}: {len(found)} run(s) of that name "
                                  f"among {', '.join(r.name for r in results)}; give exactly "
                                  "one ('heritage-eval muse import-human')")
        humans.append(found[0])
    models = [r for r in results if r.name not in names]
    chosen = pick(models, args.models, rank(models).ranked[:DEFAULT_TOP] if models else [])
    if not chosen:
        raise PaperInputError("no model run besides the human run")
    human_runs = [runs[h.run_dir.resolve()] for h in humans]
    human_run = human_runs[0]
    for r in [*chosen, *humans[1:]]:
        other = runs[r.run_dir.resolve()]
        if _question_file(other.summary) != _question_file(human_run.summary):
            raise PaperInputError(f"{r.run_dir} ran another question file than the human "
                                  f"run {human_run.path}; question ids would not match")
    judged = {r.name: judged_scores([x for x in runs[r.run_dir.resolve()].records
                                     if x.model == r.name.split(" [")[0]]) for r in chosen}
    scores, n = compare([judged_scores(h.records) for h in human_runs], judged)
    if scores.shape[1] < 3:
        raise PaperInputError(f"only {scores.shape[1]} task(s) have turns judged by the human(s) "
                              "and every model; a radar needs 3")
    formats = formats_of(args)
    out = prepare_out(args.out)
    missing = [TASKS[t].name for t in TABLE2_TASKS if t not in n]
    note = ["Per task, every series averages the same turns: judged in every human run and in "
            "every model's run (n below). Percent; open turns embedding cosine x100.",
            "n: " + ", ".join(f"{TASKS[t].name} {k}" for t, k in n.items()) + "."]
    if len(names) > 1:
        note.append(f"Human: mean of {len(names)} annotators ({', '.join(names)}), each "
                    "over the same turns.")
    if missing:
        note.append(f"Not compared (no common turn): {', '.join(missing)}.")
    named = scores.rename(columns={t: TASKS[t].name for t in scores.columns})
    cols = [Column("model", "Model", kind="text")]
    cols += [Column(str(c), str(c), decimals=1, rank="higher") for c in named.columns]
    table = Table(cols, table_rows(named), footnotes=note,
                  title="MUSE Fig. 11: human vs models on the same questions (%)")
    paths = write_table(table, out / "muse_fig11", formats)
    who = "the human" if len(names) == 1 else f"all {len(names)} annotators (mean)"
    fig = radar_figure(named, f"Human vs {len(chosen)} model(s) on the questions {who} "
                              "answered (per-task score, %)")
    style_dashed(fig, "Human")
    paths.append(save_png(fig, out / "muse_fig11.png"))
    print_written(paths)
    return 0


MUSE_FIG11 = Command(
    name="muse-fig11", help="MUSE Fig. 11: human vs models per task on the questions both "
                            "answered",
    add_args=add_args, handler=handle,
    description=textwrap.fill(
                "MUSE Fig. 11: a radar of the human run(s) (muse import-human; --human "
                "NAME, repeated for several annotators, averaged as in the paper) and the "
                "chosen models (--models, default the top 8 by Average), each task "
                "averaged over the turns judged in every human run and every model's run. "
                "Writes "
                "muse_fig11.png and muse_fig11.md/.csv/.tex. Exit status 2 for unusable "
                "input (no human run, another question file).", 80))
