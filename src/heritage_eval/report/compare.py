"""Compare runs of one benchmark: models table, per-group tables, paired differences,
disagreements (``heritage-eval compare RUN... --out DIR``).

:func:`compare_runs` reads run folders (:mod:`heritage_eval.report.runs`); a folder may
hold several models (Ancient-Bench ``score`` writes several). A model is named by the
records' ``model``; the same model in two folders becomes ``"MODEL (FOLDER NAME)"``.

- **Models table**: each headline metric with its value and 95 % interval as the run's
  ``summary.json`` states them, its n, the invalid rate and the state counts.
- **Per-group tables**: one per group key, models as rows and, for every group value,
  every metric (Ancient-Bench media: the paper's Table 3, NED and F1 per medium), then
  Overall; best bold, second underlined.
- **Paired differences** of every model against the reference (the first model unless
  named), per metric, on the records both have counted (same ``id``, state in the
  metric's ``states``, numeric score): ``model - reference``, with the clusters of the
  metric's ``cluster`` key and, when ``macro_over`` is set, the mean over groups of the
  per-group mean differences, which is the headline definition
  (:func:`heritage_eval.stats.paired_difference`).
- **Disagreements**: records on which a model and the reference differ on some metric:
  a 0/1 metric (every counted value 0 or 1) when the scores differ, any other metric
  when ``|difference| >= threshold`` (score units, 1e-9 tolerance), each model's answer.
- **Study folders** (``hcsu k-sweep`` …, several conditions in one run): compared per
  condition, never pooled (:mod:`heritage_eval.report.compare_conditions`):
  ``Comparison.conditions`` holds each condition's models, every table has a block per
  condition and each paired row names its ``condition``.
- **Nothing in common**: under ``samples="common"``, runs with no sample that every
  model counted (other data, another task, only errors) are refused
  (:class:`CompareError`, as study folders with no condition in common are), rather
  than tabulated as rows of "—" with n 0. A metric that no model scored (a metric
  turned off, such as ``--no-bertscore``) gets a warning (:func:`unscored_notes`), and
  the tables name each row with no value (:mod:`heritage_eval.report.compare_tables`).

- **Refused**: one folder given twice (:func:`same_folder`); a run whose records are
  not those its summary counts (:func:`heritage_eval.report.runs.check_records`).

Files: :func:`~heritage_eval.report.compare_files.write_comparison`; which ``--out``
may be written: :mod:`heritage_eval.report.compare_out`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.summary import cluster_of
from heritage_eval.report.comparability import different_data_warning, unranked_rows
from heritage_eval.report.compare_conditions import (
    ConditionError,
    by_condition,
    condition_key,
    drop_empty,
    keep_common,
)
from heritage_eval.report.compare_files import write_comparison
from heritage_eval.report.compare_tables import group_table, models_table, paired_table
from heritage_eval.report.runs import (
    ModelRun,
    counted_scores,
    metric_specs,
    model_runs,
    read_run,
    spec_dicts,
    unfinished_note,
)
from heritage_eval.report.sample_sets import SAMPLE_RULES, SampleSet, align, policy_notes
from heritage_eval.stats import paired_difference

__all__ = ["CompareError", "Comparison", "Disagreement", "ModelRun", "PairedRow",
           "compare_runs", "group_table", "models_table", "paired_table",
           "write_comparison"]
_TOL = 1e-9


class CompareError(ValueError):
    """The runs cannot be compared (none given, two benchmarks, unknown reference)."""


@dataclass(frozen=True)
class PairedRow:
    """``model - reference`` on one metric (score units; multiply by the metric's scale
    for display). ``n``: pairs used; ``n_reference`` / ``n_model``: records each counted;
    ``flags``: those of :class:`heritage_eval.stats.PairedComparison` (interval flags
    such as ``few_clusters``, and ``p_floor:<value>``; docs/intervals.md);
    ``condition``: the study condition the pairs belong to (``None`` for plain runs)."""

    model: str
    reference: str
    metric: str
    label: str
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    n: int
    n_clusters: int | None
    method: str
    n_reference: int
    n_model: int
    flags: tuple[str, ...] = ()
    condition: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields (``flags`` a list)."""
        return {**asdict(self), "flags": list(self.flags)}

    def csv_row(self) -> dict[str, Any]:
        """:meth:`to_dict` with ``flags`` joined by ``;`` (one CSV cell, empty if none)."""
        return {**asdict(self), "flags": ";".join(self.flags)}


@dataclass(frozen=True)
class Disagreement:
    """A record on which some model differs from the reference: ``metrics`` on which it
    does, ``max_abs_difference`` over them, and per model name ``state``, ``answer``,
    ``response`` (raw text), ``scores``, ``error``."""

    id: str
    groups: dict[str, str]
    reference: Any
    metrics: list[str]
    max_abs_difference: float
    models: dict[str, dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields."""
        return asdict(self)


@dataclass(repr=False)
class Comparison:
    """The result of :func:`compare_runs`; ``models[0]`` … in order, ``reference`` is
    the name of the model the others are compared with. ``repr()`` is one line (at most
    200 characters); a notebook shows the tables (``_repr_html_``, bounded in size);
    :meth:`to_pandas` gives the models table or the paired differences."""

    benchmark: str
    runs: list[Path]
    models: list[ModelRun]
    metrics: list[MetricSpec]
    group_keys: list[str]
    reference: str
    threshold: float
    paired: list[PairedRow] = field(default_factory=list)
    disagreements: list[Disagreement] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    partial_runs: list[Path] = field(default_factory=list)
    sample_set: SampleSet | None = None
    #: model name -> why its row is not ranked (PARTIAL run, other data;
    #: :func:`heritage_eval.report.comparability.unranked_rows`)
    not_ranked: dict[str, str] = field(default_factory=dict)
    #: study folders: the condition tag (``"k"``) and, per condition compared, its
    #: models (their records and statistics of that condition only); ``None`` / empty
    #: for plain runs (:mod:`heritage_eval.report.compare_conditions`)
    condition_key: str | None = None
    conditions: dict[str, list[ModelRun]] = field(default_factory=dict)

    def __repr__(self) -> str:
        from heritage_eval.report.notebook_repr import comparison_repr

        return comparison_repr(self)

    def _repr_html_(self) -> str:
        from heritage_eval.report.notebook_html import comparison_html

        return comparison_html(self)

    def to_pandas(self, what: str = "models") -> Any:
        """``what="models"``: the models table, one row per model with each metric's
        value, ``_ci_low``, ``_ci_high``, ``_n``, ``_flags`` columns
        (:func:`~heritage_eval.report.notebook_frames.comparison_models_frame`);
        ``what="paired"``: the paired differences, :class:`PairedRow` fields as columns.
        Score units (fractions), as ``summary.json``. A ``pandas.DataFrame``; raises
        ``ValueError`` for another ``what``."""
        from heritage_eval.report import notebook_frames as frames

        if what == "models":
            return frames.comparison_models_frame(self)
        if what == "paired":
            return frames.comparison_paired_frame(self)
        raise ValueError(f"what must be 'models' or 'paired', not {what!r}")


def _pick_reference(models: list[ModelRun], reference: str | None) -> ModelRun:
    if reference is None:
        return models[0]
    exact = [m for m in models if m.name == reference] or [
        m for m in models if m.model == reference]
    if len(exact) == 1:
        return exact[0]
    names = ", ".join(m.name for m in models)
    why = "names several models" if exact else "is none of the models"
    raise CompareError(f"reference {reference!r} {why}; the models are: {names}")


def _paired(ref: ModelRun, other: ModelRun, spec: MetricSpec, seed: int,
            n_resamples: int, condition: str | None = None) -> PairedRow:
    rv, ov = counted_scores(ref, spec), counted_scores(other, spec)
    ids = [i for i in rv if i in ov]
    clusters = [cluster_of(rv[i][0], spec.cluster) for i in ids] if spec.cluster else None
    groups = ([rv[i][0].groups.get(spec.macro_over, "") for i in ids]
              if spec.macro_over else None)
    res = paired_difference([ov[i][1] for i in ids], [rv[i][1] for i in ids], clusters,
                            groups, seed=seed, n_resamples=n_resamples, bounds=spec.bounds)
    return PairedRow(other.name, ref.name, spec.name, spec.label, res.difference,
                     res.ci_low, res.ci_high, res.p_value, res.n, res.n_clusters,
                     res.method, len(rv), len(ov), res.flags, condition)


def _entry(r: SampleRecord) -> dict[str, Any]:
    return {"state": r.state.value, "answer": r.answer, "response": r.response_text,
            "scores": dict(r.scores), "error": r.error}


def _disagreements(models: list[ModelRun], ref: ModelRun, specs: list[MetricSpec],
                   threshold: float) -> list[Disagreement]:
    counted = {m.name: {s.name: counted_scores(m, s) for s in specs} for m in models}
    binary = {s.name: all(v in (0.0, 1.0) for m in models
                          for _, v in counted[m.name][s.name].values()) for s in specs}
    index = [{r.id: r for r in reversed(m.records)} for m in models]  # first of an id
    found: list[tuple[float, int, Disagreement]] = []
    seen: set[str] = set()
    for pos, rec in enumerate(ref.records):
        if rec.id in seen:
            continue
        seen.add(rec.id)
        diffs = [(s.name, abs(a[1] - b[1])) for m in models if m is not ref for s in specs
                 if (a := counted[m.name][s.name].get(rec.id)) is not None
                 and (b := counted[ref.name][s.name].get(rec.id)) is not None]
        hits = [(n, d) for n, d in diffs if (d > 0 if binary[n] else d >= threshold - _TOL)]
        names, worst = [n for n, _ in hits], max((d for _, d in hits), default=0.0)
        if names:
            entries = {m.name: _entry(ix[rec.id]) for m, ix in zip(models, index, strict=True)
                       if rec.id in ix}
            found.append((worst, pos, Disagreement(rec.id, dict(rec.groups), rec.reference,
                                                   list(dict.fromkeys(names)), worst,
                                                   entries)))
    found.sort(key=lambda t: (-t[0], t[1]))
    return [d for _, _, d in found]


def compare_runs(run_dirs: Sequence[str | Path], *, reference: str | None = None,
                 threshold: float = 0.1, seed: int = 0,
                 n_resamples: int = 2000, samples: str = "common") -> Comparison:
    """Compare the models of the run folders ``run_dirs`` (see the module docstring).

    ``reference``: a model name or spec (default: the first model of the first run);
    ``threshold``: disagreement threshold for non-0/1 metrics, in score units (> 0);
    ``samples``: ``common`` (default) scores every model on the samples all of them
    counted, recomputing their statistics and naming what was dropped; ``all`` keeps
    each run's own numbers and flags different sample sets as not comparable
    (:mod:`heritage_eval.report.sample_sets`). Study folders are compared per condition
    (:mod:`heritage_eval.report.compare_conditions`).
    Raises :class:`CompareError` (no run, one folder given twice, runs of several
    benchmarks, no record, bad reference or threshold, study folders of different
    conditions or with no condition in common, no sample in common under
    ``samples="common"``) and
    :class:`~heritage_eval.report.runs.RunReadError` (a folder is not a run, its
    results belong to another configuration, or its ``samples.jsonl`` has an unreadable
    line or holds other records than its ``summary.json`` counts:
    :func:`~heritage_eval.report.runs.check_records`).
    """
    if not run_dirs:
        raise CompareError("no run folder given")
    if not threshold > 0:
        raise CompareError(f"threshold must be > 0, not {threshold}")
    if samples not in SAMPLE_RULES:
        raise CompareError(f"samples must be one of {', '.join(SAMPLE_RULES)}, "
                           f"not {samples!r}")
    same_folder(run_dirs)
    runs = [read_run(p, whole=True) for p in run_dirs]
    # a run is of its summary's benchmark (a study such as hcsu-k-sweep holds records of
    # its task benchmark); the records name it only for a folder without one
    benches = {r.benchmark for r in runs if r.benchmark} | {
        x.benchmark for r in runs if not r.benchmark for x in r.records}
    if len(benches) != 1:
        listing = "; ".join(f"{r.path}: {r.benchmark}" for r in runs)
        raise CompareError(f"runs of different benchmarks cannot be compared ({listing})")
    try:
        cond = condition_key(runs)
    except ConditionError as exc:
        raise CompareError(str(exc)) from None
    notes = [n for r in runs if (n := unfinished_note(r.path)) is not None]
    first = runs[0].summary
    specs = metric_specs(first)
    for r in runs[1:]:
        if spec_dicts(r.summary) != spec_dicts(first):
            notes.append(f"{r.path}: its metric definitions differ from {runs[0].path}'s; "
                         f"those of {runs[0].path} are used")
    keys = [str(k) for k in first.get("group_keys", [])]
    keys += [k for s in specs for k in s.by if k not in keys]
    models = model_runs(runs, specs, keys, notes)
    if not models:
        raise CompareError("the run folders hold no sample record: "
                           + ", ".join(str(r.path) for r in runs))
    for m in models:  # one sample twice is refused when the folder is read
        keys += [str(k) for k in m.block.get("groups", {}) if k not in keys]
    try:
        values = [] if cond is None else keep_common(models, cond, specs, keys, notes)
    except ConditionError as exc:
        raise CompareError(str(exc)) from None
    sample_set = align(models, specs, keys, samples)
    if samples == "common" and sample_set.n_common == 0:
        counts = ", ".join(f"{m} {n}" for m, n in sample_set.n_counted.items())
        raise CompareError(
            "the models have no sample in common (samples counted per model: "
            f"{counts}; 0 in common): nothing to compare. Compare runs over the same data "
            "and task, or use --samples all to set each run's own numbers side by side")
    if cond is not None:
        values = drop_empty(models, cond, values, notes)
    notes += policy_notes([(str(r.path), r.summary) for r in runs])
    notes += sample_set.notes()
    conditions = {} if cond is None else by_condition(models, cond, values, specs, keys)
    blocks: list[tuple[str | None, list[ModelRun]]] = [*conditions.items()] or [
        (None, models)]
    notes += [(f"{cond} = {v}: " if v is not None else "") + note
              for v, ms in blocks for note in coverage_notes(ms, specs)]
    notes += [w for w in [different_data_warning(runs)] if w]
    ref = _pick_reference(models, reference)
    comp = Comparison(benches.pop(), [r.path for r in runs], models, specs, keys, ref.name,
                      threshold, warnings=notes,
                      partial_runs=[r.path for r in runs if r.summary.get("partial")],
                      sample_set=sample_set, not_ranked=unranked_rows(models, runs),
                      condition_key=cond, conditions=conditions)
    at = models.index(ref)  # each block lists the models in the same order
    comp.paired = [_paired(ms[at], m, s, seed, n_resamples, v) for v, ms in blocks
                   for m in ms if m is not ms[at] for s in specs]
    comp.disagreements = _disagreements(models, ref, specs, threshold)
    notes += [(f"{cond} = {p.condition}: " if p.condition is not None else "")
              + f"{p.model} vs {p.reference}, {p.label}: the paired difference is over the "
              f"{p.n} scored record(s) common to both ({p.model} has {p.n_model}, "
              f"{p.reference} {p.n_reference})" for p in comp.paired
              if p.n < max(p.n_model, p.n_reference)]
    notes += unscored_notes(comp)
    return comp


def same_folder(run_dirs: Sequence[str | Path]) -> None:
    """Raise :class:`CompareError` when two of ``run_dirs`` are one folder, however
    spelled (``x``, ``x/``, ``./x``, ``y/../x``, a symbolic link to ``x``; compared by
    device and inode): its models would be paired with themselves, every difference 0
    with a meaningless interval. Paths that do not exist are left to the reader."""
    seen: dict[tuple[int, int], Path] = {}
    for raw in run_dirs:
        path = Path(raw)
        try:
            st = path.stat()
        except OSError:
            continue
        first = seen.setdefault((st.st_dev, st.st_ino), path)
        if first is not path:
            raise CompareError(f"{first} and {path} are the same run folder: its models "
                               "would be compared with themselves (every difference 0, a "
                               "meaningless interval); give each run folder once")


def unscored_notes(comp: Comparison) -> list[str]:
    """One warning naming the metrics that no compared model scored on any record (a
    metric turned off, such as ``--no-bertscore``, or no answer scored); empty when
    there is none. Their cells are "—", and their paired differences have no value
    though records were answered in common: they pair records both models *scored*
    (:class:`PairedRow` ``n_model`` / ``n_reference`` count those)."""
    blocks = [*comp.conditions.values()] or [comp.models]
    none = [s.label for s in comp.metrics
            if not any((m.block.get("metrics", {}).get(s.name) or {}).get("value")
                       is not None for ms in blocks for m in ms)]
    if not none:
        return []
    return [f"{', '.join(none)}: no model scored any record (a metric turned off, such as "
            "--no-bertscore, or no answer scored): no value and no paired difference "
            "(no record both models scored)"]


def coverage_notes(models: list[ModelRun], specs: list[MetricSpec]) -> list[str]:
    """A warning per macro metric (a mean over the groups of ``spec.macro_over``, e.g.
    Ancient-Bench's Overall over the media) whose models cover different groups: their
    headline values average different things and are not comparable (the tables do not
    rank a headline over other groups: :mod:`heritage_eval.report.comparability`)."""
    out = []
    for spec in specs:
        if not spec.macro_over:
            continue
        covered = {m.name: sorted(v for v, ests in m.block.get("groups", {}).get(
            spec.macro_over, {}).items() if (ests.get(spec.name) or {}).get("value")
            is not None) for m in models}
        every = sorted({v for vs in covered.values() for v in vs})
        if len({tuple(vs) for vs in covered.values()}) > 1:
            parts = [f"{name}: {len(vs)} of {len(every)}"
                     + (f" (without {', '.join(v for v in every if v not in vs)})"
                        if len(vs) < len(every) else "") for name, vs in covered.items()]
            out.append(f"{spec.label}: the headline is the mean over {spec.macro_over} "
                       f"groups and the models cover different ones ({'; '.join(parts)}): "
                       "their headline values are not comparable")
    return out
