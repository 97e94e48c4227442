"""Study folders compared per condition (``compare`` of ``hcsu k-sweep`` / ``shot-sweep`` /
``ablation`` / ``robustness`` runs).

A study folder holds several conditions in one run: K = 2 … 5 (chance 50 % … 20 %),
shot counts, description modes, image variants. Its ``summary.json`` names the
condition tag (``condition_keys``, e.g. ``["k"]``) and every record carries it in its
groups (and in its id, ``<target>#k=3``). A value pooled over conditions measures no
setting, so such folders are compared **per condition** (docs/how-to/view-and-compare.md,
"Study folders"):

- the runs must name the same condition tag (a run naming none, from a version before
  ``condition_keys``, is taken per the others' tag), and every record must carry it;
  otherwise the comparison is refused (:class:`ConditionError`);
- only the condition values that *every* compared model has are compared; the records
  of the others are left out, with a warning naming them; when no value is common the
  comparison is refused;
- within each condition the models are ranked, paired (records of that condition only)
  and tabulated on their own; nothing is pooled over conditions;
- a condition left with no record of some model once the models are lined up on their
  common samples (:mod:`heritage_eval.report.sample_sets`) is left out too, with a
  warning (:func:`drop_empty`): its block would be a row of "—" with n 0 per model.
  Folders with no sample in common at all are refused before that
  (:func:`heritage_eval.report.compare.compare_runs`).

:func:`condition_key` reads the tag, :func:`keep_common` drops the conditions not common
to all, :func:`by_condition` splits each model into one :class:`ModelRun` per condition
(its statistics recomputed on that condition's records, which gives the per-condition
values ``summary.json`` states under ``groups.<tag>``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.summary import model_block
from heritage_eval.report.runs import ModelRun, RunData

__all__ = ["ConditionError", "by_condition", "condition_key", "drop_empty", "keep_common"]


class ConditionError(ValueError):
    """Study folders that cannot be compared per condition (the message says why)."""


def _keys(run: RunData) -> tuple[str, ...]:
    keys = run.summary.get("condition_keys")
    return tuple(str(k) for k in keys) if isinstance(keys, list) else ()


def condition_key(runs: Sequence[RunData]) -> str | None:
    """The condition tag shared by the study folders ``runs`` (the first of their
    ``condition_keys``), or ``None`` when none of them names one. A run that names none
    (a study folder written before ``condition_keys`` existed) is compared per the
    others' tag when its records carry it. Raises :class:`ConditionError` when the runs
    name different tags or a record lacks the tag."""
    named = {r.path: keys for r in runs if (keys := _keys(r))}
    if not named:
        return None
    if len(set(named.values())) > 1:
        listing = "; ".join(f"{p}: {', '.join(k)}" for p, k in named.items())
        raise ConditionError("study folders are compared per condition, and these runs "
                             f"name different conditions ({listing})")
    key = next(iter(named.values()))[0]
    for r in runs:
        missing = sum(1 for x in r.records if key not in x.groups)
        if missing:
            raise ConditionError(f"{r.path}: {missing} record(s) carry no {key!r} group, "
                                 "so they cannot be compared per condition")
    return key


def _values(m: ModelRun, key: str) -> list[str]:
    return list(dict.fromkeys(r.groups[key] for r in m.records))


def keep_common(models: Sequence[ModelRun], key: str, specs: Sequence[MetricSpec],
                group_keys: Sequence[str], notes: list[str]) -> list[str]:
    """The condition values every model has, in the first model's order. Records of the
    other values are dropped from their models (``records`` and ``block`` replaced in
    place; a warning per model in ``notes``). Raises :class:`ConditionError` when no
    value is common."""
    held = {m.name: _values(m, key) for m in models}
    common = [v for v in held[models[0].name] if all(v in vs for vs in held.values())]
    if not common:
        listing = "; ".join(f"{name}: {', '.join(vs) or 'none'}" for name, vs in held.items())
        raise ConditionError(f"no {key} value is common to every model ({listing}): study "
                             "folders are compared per condition, and each condition needs "
                             "every model")
    for m in models:
        extra = [v for v in held[m.name] if v not in common]
        if not extra:
            continue
        kept = [r for r in m.records if r.groups[key] in common]
        notes.append(f"{m.name}: {key} = {', '.join(extra)} left out ({len(m.records) - len(kept)}"
                     f" record(s)): not every model has that condition")
        m.records = kept
        m.block = model_block(kept, specs, group_keys)
    return common


def drop_empty(models: Sequence[ModelRun], key: str, values: Sequence[str],
               notes: list[str]) -> list[str]:
    """The values of ``values`` in which every model still holds a record (after the
    common-sample alignment), in order; a warning in ``notes`` names the others (no
    sample of that condition is common to every model, so it has nothing to compare).
    Models are not changed: they hold no record of a value left out."""
    kept = [v for v in values if all(any(r.groups.get(key) == v for r in m.records)
                                     for m in models)]
    gone = [v for v in values if v not in kept]
    if gone:
        notes.append(f"{key} = {', '.join(gone)} left out: no sample of it is common to "
                     "every model, so there is nothing to compare there")
    return kept


def by_condition(models: Sequence[ModelRun], key: str, values: Sequence[str],
                 specs: Sequence[MetricSpec], group_keys: Sequence[str]
                 ) -> dict[str, list[ModelRun]]:
    """Condition value -> one :class:`ModelRun` per model holding that condition's
    records, its ``block`` recomputed over them (grouped by ``group_keys`` without
    ``key``); models in the order of ``models``."""
    keys = [k for k in group_keys if k != key]
    out: dict[str, list[ModelRun]] = {}
    for value in values:
        out[value] = []
        for m in models:
            records = [r for r in m.records if r.groups[key] == value]
            out[value].append(replace(m, records=records,
                                      block=model_block(records, specs, keys)))
    return out
