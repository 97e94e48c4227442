"""pandas tables of runs and comparisons (``Run.to_pandas``, ``Comparison.to_pandas``).

Numbers are in score units as ``summary.json`` holds them (fractions in [0, 1] for most
metrics; the metric spec's ``scale`` is what the printed tables multiply by), never
rounded. pandas is imported inside each function, so importing this module is cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from heritage_eval.core.record import SampleRecord

if TYPE_CHECKING:
    import pandas as pd

    from heritage_eval.report.compare import Comparison

__all__ = ["ESTIMATE_COLUMNS", "comparison_models_frame", "comparison_paired_frame",
           "metrics_to_pandas", "records_to_pandas"]

def _pandas() -> Any:
    """pandas, or :class:`~heritage_eval.core.extras.MissingExtraError` with the ``pip
    install`` line of the ``notebook`` extra."""
    from heritage_eval.core.extras import require_extra

    require_extra("notebook", ("pandas",), "to_pandas()")
    import pandas

    return pandas


#: Columns of :func:`metrics_to_pandas`, in order.
ESTIMATE_COLUMNS = ("model", "metric", "label", "value", "ci_low", "ci_high", "n", "stderr",
                    "method", "flags")


def records_to_pandas(records: Iterable[SampleRecord]) -> pd.DataFrame:
    """One row per record: ``id``, ``model``, ``state``, each group key, each score
    (``None`` where not computed), ``answer``, ``reference``, ``error``, ``response``
    (text of the scored turn). A group key named like a score is overwritten by the
    score, and both by the fixed columns after them."""
    pd: Any = _pandas()

    rows = []
    for r in records:
        row: dict[str, Any] = {"id": r.id, "model": r.model, "state": r.state.value}
        row.update(r.groups)
        row.update(r.scores)
        row.update({"answer": r.answer, "reference": r.reference, "error": r.error,
                    "response": r.response_text})
        rows.append(row)
    return pd.DataFrame(rows)


def _flags(est: Mapping[str, Any]) -> str:
    return ";".join(str(f) for f in est.get("flags") or ())


def metrics_to_pandas(summary: Mapping[str, Any]) -> pd.DataFrame:
    """The headline estimates of ``summary.json``: one row per (model, metric) in
    summary order, columns :data:`ESTIMATE_COLUMNS` (``flags`` joined by ``;``, empty
    when none; ``value`` / ``ci_*`` / ``stderr`` ``None`` where the summary has none)."""
    pd: Any = _pandas()

    rows = []
    for model, block in (summary.get("models") or {}).items():
        for name, est in (block.get("metrics") or {}).items():
            rows.append({"model": model, "metric": name, "label": est.get("label", name),
                         **{k: est.get(k) for k in ESTIMATE_COLUMNS[3:9]},
                         "flags": _flags(est)})
    return pd.DataFrame(rows, columns=list(ESTIMATE_COLUMNS))


def _estimate_columns(prefix: str, est: Any) -> dict[str, Any]:
    """``{prefix: value, prefix_ci_low, prefix_ci_high, prefix_n, prefix_flags}``."""
    est = est if isinstance(est, Mapping) else {}
    return {prefix: est.get("value"), f"{prefix}_ci_low": est.get("ci_low"),
            f"{prefix}_ci_high": est.get("ci_high"), f"{prefix}_n": est.get("n"),
            f"{prefix}_flags": _flags(est)}


def comparison_models_frame(comp: Comparison) -> pd.DataFrame:
    """The models table: one row per model in comparison order with ``model`` (display
    name), ``model_spec``, ``run`` (folder), ``partial``, ``ranked`` (``False`` when the
    row is not comparable: :attr:`Comparison.not_ranked`), then per metric ``NAME``,
    ``NAME_ci_low``, ``NAME_ci_high``, ``NAME_n``, ``NAME_flags``; ``invalid_rate`` and
    ``model_failure_rate`` likewise; ``records`` and the ``unparsed`` / ``error`` /
    ``unscored`` counts. The values are the models table's (the compared sample set)."""
    pd: Any = _pandas()

    rows = []
    for m in comp.models:
        row: dict[str, Any] = {"model": m.name, "model_spec": m.model, "run": str(m.run_dir),
                               "partial": m.run_dir in comp.partial_runs,
                               "ranked": m.name not in comp.not_ranked}
        for s in comp.metrics:
            row.update(_estimate_columns(s.name, (m.block.get("metrics") or {}).get(s.name)))
        for rate in ("invalid_rate", "model_failure_rate"):
            row.update(_estimate_columns(rate, m.block.get(rate)))
        states = m.block.get("states") or {}
        row.update({"records": len(m.records),
                    **{k: states.get(k) for k in ("unparsed", "error", "unscored")}})
        rows.append(row)
    return pd.DataFrame(rows)


def comparison_paired_frame(comp: Comparison) -> pd.DataFrame:
    """The paired differences: one row per (model, metric) against the reference, the
    fields of :class:`~heritage_eval.report.compare.PairedRow` as columns
    (``difference`` = model − reference in score units; ``flags`` joined by ``;``)."""
    pd: Any = _pandas()

    from heritage_eval.report.compare import PairedRow

    columns = [f.name for f in fields(PairedRow)]
    return pd.DataFrame([p.csv_row() for p in comp.paired], columns=columns)
