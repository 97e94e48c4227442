"""Checks that compared MUSE runs were made on the same questions (``muse analyze``).

Each run records in its provenance the question file's SHA-256 (``question_file_sha256``),
its header (``question_file_header``: generator version, seed, tasks, knobs) and the
selection options (``tasks``, ``limit``). Runs on different files, or on different
``--limit`` subsets of one file, are not compared question by question; the analysis still
runs but says so.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from heritage_eval.benchmarks.muse.analysis.tables import ModelResult


def _file_key(prov: dict[str, Any]) -> str | None:
    sha = prov.get("question_file_sha256")
    return str(sha) if sha else None


def _describe(prov: dict[str, Any]) -> str:
    header = prov.get("question_file_header") or {}
    seed = header.get("seed", prov.get("generator_seed"))
    version = header.get("generator_version", prov.get("generator_version"))
    return (f"sha256 {str(prov.get('question_file_sha256'))[:12]}…, seed {seed}, "
            f"generator {version}, file {prov.get('question_file')}")


def question_file_warnings(results: list[ModelResult]) -> list[str]:
    """Warnings when the runs' question files (SHA-256) or ``--limit`` differ, or a run
    lacks the provenance to tell; empty when all runs used the same file and limit."""
    out: list[str] = []
    unknown = [m.name for m in results if _file_key(m.provenance) is None]
    if unknown:
        out.append(f"Cannot check which question file was used by: {', '.join(unknown)} "
                   "(no question_file_sha256 in its provenance).")
    groups: dict[str, list[ModelResult]] = defaultdict(list)
    for m in results:
        if (key := _file_key(m.provenance)) is not None:
            groups[key].append(m)
    if len(groups) > 1:
        parts = [f"{', '.join(m.name for m in ms)} ({_describe(ms[0].provenance)})"
                 for ms in groups.values()]
        out.append("The runs come from DIFFERENT question files, so their scores are not "
                   "measured on the same questions: " + "; ".join(parts) + ".")
    limits = {str(m.provenance.get("limit")) for m in results if m.provenance}
    if len(limits) > 1:
        out.append("The runs used different --limit values ("
                   + ", ".join(f"{m.name}: {m.provenance.get('limit')}" for m in results)
                   + "): they cover different questions of the file.")
    return out
