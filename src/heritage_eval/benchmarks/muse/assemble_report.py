"""The balance report of ``muse assemble``: ``<out stem>_balance.json`` and ``.md``.

Per task: questions available in the pool, chosen, and whether N was reached (the
tasks that cannot reach N are listed first, with how many exist). Per group (a task, or
the affective dialogue for tasks 1–4): for each style, theme and difficulty stratum the
candidates available, the target and the count chosen; the most-used image, its count
and share of the group (0–1), and the image cap.

Targets: with the balanced strategy the max-min fair share (:func:`fair_share`,
water-filling: every stratum ``min(available, λ)``, λ such that the targets sum to the
group's size); with the random strategy the expected count under uniform sampling,
``n × available / total`` (:func:`proportional`). Targets are real numbers (one decimal
in the Markdown); the chosen counts are whole.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.muse.assemble_alloc import GETTERS, GroupChoice
from heritage_eval.benchmarks.muse.assemble_pool import Candidate
from heritage_eval.core.store import atomic_write_text

#: Dimensions reported per group (images are summarised by their maximum).
STRATA: tuple[str, ...] = ("style", "theme", "difficulty")


def fair_share(available: Mapping[str, int], n: int) -> dict[str, float]:
    """Max-min fair (water-filling) targets: ``min(available[v], λ)`` with the common
    level λ chosen so the targets sum to ``min(n, sum(available))``.

    Example: available {a: 10, b: 5, c: 1}, n = 12 → c 1, then λ = 5.5 for a and b, but
    b has 5 → b 5, a 6."""
    total = min(n, sum(available.values()))
    out: dict[str, float] = {}
    left, k = float(total), len(available)
    for v, a in sorted(available.items(), key=lambda kv: (kv[1], kv[0])):
        share = left / k if k else 0.0
        out[v] = float(a) if a <= share else share
        left -= out[v]
        k -= 1
    return {v: out[v] for v in available}


def proportional(available: Mapping[str, int], n: int) -> dict[str, float]:
    """Expected counts of a uniform sample of ``n``: ``n × available[v] / total``."""
    total = sum(available.values())
    return {v: (n * a / total if total else 0.0) for v, a in available.items()}


def _strata(cands: Sequence[Candidate], chosen: Sequence[Candidate], dim: str,
            strategy: str) -> list[dict[str, Any]]:
    get = GETTERS[dim]
    avail = Counter(map(get, cands))
    got = Counter(map(get, chosen))
    target = (fair_share if strategy == "balanced" else proportional)(avail, len(chosen))
    return [{"value": v, "available": avail[v], "target": round(target[v], 3),
             "chosen": got[v]} for v in sorted(avail)]


def group_report(cands: Sequence[Candidate], choice: GroupChoice, strategy: str
                 ) -> dict[str, Any]:
    """The JSON block of one group (module doc)."""
    images = Counter(c.image_id for c in choice.chosen)
    top = min(images.items(), key=lambda kv: (-kv[1], kv[0])) if images else ("", 0)
    n = len(choice.chosen)
    return {
        "n": n, "n_images_available": len({c.image_id for c in cands}),
        "n_images_chosen": len(images),
        "image_cap": None if choice.cap_start is None
        else {"start": choice.cap_start, "end": choice.cap_end},
        "image_max": {"image_id": top[0], "count": top[1],
                      "share": round(top[1] / n, 4) if n else 0.0},
        "strata": {dim: _strata(cands, choice.chosen, dim, strategy) for dim in STRATA},
    }


def task_rows(tasks: Sequence[str], cands: Sequence[Candidate],
              chosen: Sequence[Candidate], per_task: int) -> dict[str, dict[str, Any]]:
    """Per task: ``available``, ``chosen`` (questions with a turn of the task), ``short``
    (``chosen < per_task``)."""
    avail = Counter(t for c in cands for t in c.tasks)
    got = Counter(t for c in chosen for t in c.tasks)
    return {t: {"available": avail[t], "chosen": got[t], "short": got[t] < per_task}
            for t in tasks}


def report_markdown(report: Mapping[str, Any]) -> str:
    """The Markdown form of the JSON report."""
    lines = [f"# MUSE assembly: {report['question_file']}", "",
             f"Pool `{report['pool']}` (sha256 `{report['pool_sha256'][:16]}…`), strategy "
             f"`{report['strategy']}`, seed {report['seed']}, N = {report['per_task']} per "
             "task.", "",
             "Strata sources (images per source): " + "; ".join(
                 f"{dim} — " + ", ".join(f"{k} {n}" for k, n in src.items())
                 for dim, src in report["strata_sources"].items()) + ".", ""]
    short = [(t, r) for t, r in report["tasks"].items() if r["short"]]
    lines += ["## Tasks that cannot reach N", ""]
    lines += ([f"- `{t}`: {r['available']} available, {r['chosen']} chosen"
               for t, r in short] or ["None: every task has N questions."]) + [""]
    lines += ["## Questions per task", "", "| task | available | chosen |", "|---|---:|---:|"]
    lines += [f"| {t} | {r['available']} | {r['chosen']} |" for t, r in report["tasks"].items()]
    target = "target (fair share)" if report["strategy"] == "balanced" \
        else "expected (uniform)"
    for group, g in report["groups"].items():
        cap = g["image_cap"]
        cap_txt = "" if cap is None else (
            f"; image cap {cap['start']}" + (f", raised to {cap['end']} to reach the quota"
                                             if cap["end"] != cap["start"] else ""))
        top = g["image_max"]
        lines += ["", f"## {group}", "",
                  f"{g['n']} questions from {g['n_images_chosen']} of "
                  f"{g['n_images_available']} images; most-used image `{top['image_id']}` "
                  f"{top['count']} ({top['share']:.1%}){cap_txt}.", ""]
        for dim in STRATA:
            lines += [f"| {dim} | available | {target} | chosen |",
                      "|---|---:|---:|---:|"]
            lines += [f"| {r['value']} | {r['available']} | {r['target']:.1f} | "
                      f"{r['chosen']} |" for r in g["strata"][dim]]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def report_paths(out: str | Path) -> tuple[Path, Path]:
    """``(<out stem>_balance.json, <out stem>_balance.md)`` beside ``out``."""
    out = Path(out)
    return (out.with_name(f"{out.stem}_balance.json"),
            out.with_name(f"{out.stem}_balance.md"))


def write_report(out: str | Path, report: Mapping[str, Any]) -> tuple[Path, Path]:
    """Write both report files atomically; returns their paths."""
    js, md = report_paths(out)
    atomic_write_text(js, json.dumps(report, ensure_ascii=False, indent=1, sort_keys=True)
                      + "\n")
    atomic_write_text(md, report_markdown(report))
    return js, md
