"""``summary.md`` of the two HCSU runs: the paper's table and the notes under it.

Inputs are ``results`` entries of ``summary.json`` (plain dicts), so the same text is
made from a fresh run and from a run folder read back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from heritage_eval.benchmarks.hcsu.coverage import coverage_sentence
from heritage_eval.benchmarks.hcsu.records import error_lines
from heritage_eval.benchmarks.hcsu.scoring import cross_domain_note
from heritage_eval.benchmarks.hcsu.tables import description_table, discrimination_table
from heritage_eval.core.run_tables import has_values, mark_notes, model_table, nothing_scored
from heritage_eval.core.tables import to_markdown

DISCRIMINATION_HEADING = "## HCSU style discrimination (Table 2)\n\n"
DESCRIPTION_HEADING = "## HCSU style description (Table 3)\n\n"
EMPTY_NOTE = ("An empty description is unparsed: it counts in Invalid (empty ÷ answered) "
              "and scores 0 in the BERTScore and judge means, which otherwise hold the "
              "descriptions each metric scored; a metric that scored no description of a "
              "domain shows – there, never 0.00. Descriptions a metric failed on "
              "(unscored, counts shown) enter no mean of it.")


def _notes(notes: list[str]) -> str:
    return "".join(f"\n{n}\n" for n in notes)


def n_rows(entry: Mapping[str, Any]) -> int:
    """Samples of a result entry: answered plus errors, over its domains."""
    return sum(int(d.get("n") or 0) + int(d.get("n_error") or 0)
               for d in (entry.get("per_domain") or {}).values())


def error_note(entry: Mapping[str, Any]) -> list[str]:
    """The error digest as a Markdown paragraph (empty list when no error)."""
    lines = error_lines("Errors", entry.get("errors") or {"n_error": 0}, n_rows(entry))
    return ["  \n".join(line.strip() for line in lines)] if lines else []


def discrimination_notes(entry: Mapping[str, Any]) -> str:
    """Markdown notes under Table 2: why Avg. Acc is missing, the cross-domain caveat of
    ``--distractor-pool all``, the errors."""
    notes = [entry["avg_accuracy_note"]] if entry.get("avg_accuracy_note") else []
    if entry.get("distractor_pool") == "all":
        notes.append(cross_domain_note(entry.get("per_domain") or {}))
    return _notes(notes + error_note(entry))


#: What the description task's average over domains is called (the interval table's
#: Overall row; :mod:`.coverage`).
DESCRIPTION_AVERAGE = "Overall"


def description_notes(entry: Mapping[str, Any]) -> str:
    """Markdown notes under Table 3: how empty / unscored descriptions count, what the
    Overall covers when a domain is missing (:mod:`.coverage`), errors."""
    cover = coverage_sentence(entry.get("per_domain"), DESCRIPTION_AVERAGE)
    return _notes([EMPTY_NOTE, *([cover] if cover else []), *error_note(entry)])


def discrimination_markdown(results: Sequence[Mapping[str, Any]]) -> str:
    """Table 2 of a one-model run with its notes."""
    return (DISCRIMINATION_HEADING + discrimination_table(results)
            + "".join(discrimination_notes(r) for r in results))


def description_markdown(results: Sequence[Mapping[str, Any]]) -> str:
    """Table 3 of a one-model run with its notes."""
    return (DESCRIPTION_HEADING + description_table(results)
            + "".join(description_notes(r) for r in results))


#: How a study's condition tag reads in its headings (``k`` -> "K").
CONDITION_LABELS = {"k": "K", "shots": "shots", "descriptions": "descriptions",
                    "condition": "condition"}


def pooled_note(key: str, values: Sequence[str]) -> str:
    """Why a study has no pooled headline: its ``key`` conditions (``values``) differ
    (e.g. chance 1/K), so one number over all of them measures no setting."""
    label = CONDITION_LABELS.get(key, key)
    kind = "conditions" if label == "condition" else f"{label} conditions"
    return (f"No pooled headline: the rows are different {kind} "
            f"({', '.join(values)}), so a value pooled over them (summary.json "
            f"`models.*.metrics`) measures no setting and is not meaningful; read the "
            f"per-{label} rows.")


def condition_markdown(summary: Mapping[str, Any], key: str) -> str:
    """The headline of a study (sweep, ablation, robustness): per model, each metric's
    value with its 95 % interval per value of the condition tag ``key`` (rows), from the
    statistics envelope; no Overall row (see :func:`pooled_note`)."""
    parts = [f"\n## Per {CONDITION_LABELS.get(key, key)}: value [95 % interval]\n"]
    values: list[str] = []
    for model, block in (summary.get("models") or {}).items():
        groups = (block.get("groups") or {}).get(key) or {}
        values += [str(v) for v in groups if str(v) not in values]
        table = model_table(summary, model, key)
        rows = table.rows[:-1]  # the last row is the pooled Overall: left out
        table = replace(table, rows=rows, footnotes=mark_notes(rows))
        parts.append(to_markdown(table) if has_values(table)
                     else f"**{model}**: {nothing_scored(summary)}\n")
    parts.append(pooled_note(key, values) + "\n")
    return "\n".join(parts)
