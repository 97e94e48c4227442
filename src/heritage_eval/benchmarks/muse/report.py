"""Markdown rendering of one MUSE run's summary (``summary.md``); scores printed x100."""

from __future__ import annotations

from typing import Any

import pandas as pd

from heritage_eval.benchmarks.muse.taxonomy import TASKS


def pct(value: float | None) -> float | None:
    """A fraction in [0, 1] as a percentage rounded to 0.1 (``None`` stays ``None``)."""
    return None if value is None else round(100.0 * value, 1)


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(none)\n"
    return str(pd.DataFrame(rows).to_markdown(index=False, floatfmt=".1f")) + "\n"


def task_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per task: number, name, n, score %, invalid %, states."""
    rows = []
    for task, st in result["per_task"].items():
        info = TASKS.get(task)
        rows.append({"#": info.number if info else "", "task": info.name if info else task,
                     "n": st["n"], "score %": pct(st["score"]),
                     "invalid %": pct(st["invalid_rate"]),
                     "error": st["states"]["error"], "unscored": st["states"]["unscored"]})
    return rows


def render_run(result: dict[str, Any], provenance: dict[str, Any]) -> str:
    """The ``summary.md`` text for one model's result block."""
    out = [f"# MUSE — {result['model']}\n",
           f"Question file: `{provenance.get('question_file')}`; embedder for open answers: "
           f"`{result.get('embedder')}`. Scores are percentages; open answers (tasks 3, 4) "
           "are mean cosine similarity x100; an unparsed answer counts 0 and is counted "
           "in the invalid rate; error / unscored turns are excluded.\n",
           "## Per task\n", _table(task_rows(result))]
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
    st = result["states"]
    out += ["## Outcomes\n",
            f"scored {st['scored']}, unparsed {st['unparsed']}, unscored {st['unscored']}, "
            f"error {st['error']}; invalid rate {pct(result['invalid_rate'])} % "
            f"(mean over tasks {pct(result['mean_task_invalid_rate'])} %).\n"]
    if result.get("error_reasons"):
        out += ["\nMost frequent error / unscored reasons:\n"]
        out += [f"- {n} × {reason}\n" for reason, n in result["error_reasons"].items()]
    return "\n".join(out)
