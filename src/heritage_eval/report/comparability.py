"""Which rows of a comparison table may be ranked (bold best, underlined second).

Rule (docs/how-to/view-and-compare.md, "What is ranked"; used by ``compare`` and
``paper ab-table3``): a value is ranked only among values that measure the same thing.
The *reference rows* are the rows of complete runs over the reference data; in a column
a row is ranked only when it is comparable with them:

* **PARTIAL run** (``summary.json`` ``partial``: a ``--limit`` run that left samples
  out): none of its cells is ranked; marked :data:`ROW_MARK`.
* **Different data**: what a run's provenance records of its data
  (:func:`data_identity`: a hash — MUSE's ``question_file_sha256``, any ``*sha256`` of
  the data block — and the counts of ``data_info`` / ``data_counts``: per category,
  samples, images, classes; never the path, which differs between machines for the
  same data) conflicts with the reference run's (:meth:`DataFacts.conflicts`: a shared
  hash differs, or a category both hold has another count — a run over a selection of
  the categories is not other data). The reference run is the one whose data agree with
  the most runs, ties to the first. None of its cells is ranked; marked
  :data:`ROW_MARK`; a warning names the runs. A run that records nothing of its data is
  not judged, nor are the counts of a ``--limit`` run (they count what it loaded).
* **Headline over fewer groups** (a macro metric such as Ancient-Bench's Overall, the
  mean over media): a row whose headline averages a different set of groups than the
  union of the groups the rows cover (the groups with a value for that metric) is not
  ranked in that headline column; marked :data:`HEADLINE_MARK`.

Unranked cells keep their value; a footnote says why each mark was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.report.runs import ModelRun, RunData

__all__ = ["HEADLINE_MARK", "ROW_MARK", "DataFacts", "data_identity", "different_data_warning",
           "headline_groups", "unranked_headline", "unranked_rows"]

#: Mark of a row none of whose cells is ranked (PARTIAL run, other data).
ROW_MARK = "‡"
#: Mark of a headline cell over other groups than the rows' union (not ranked).
HEADLINE_MARK = "†"
#: ``data_info`` keys naming where the data lay (not what it is).
_PLACE_KEYS = frozenset({"data", "root", "question_file", "path", "dir"})


def data_identity(summary: dict[str, Any]) -> DataFacts | None:
    """What a run's ``summary.json`` says its data was (see the module docstring), or
    ``None`` when it records neither a data hash nor data counts."""
    prov = summary.get("provenance")
    if not isinstance(prov, dict):
        return None
    info = next((prov[k] for k in ("data_info", "data_counts", "data")
                 if isinstance(prov.get(k), dict)), None)  # run / score / HCSU studies
    hashes = {k: str(v) for k, v in prov.items()
              if (k.endswith("sha256") and "data" in k) or k == "question_file_sha256"}
    hashes |= {k: str(v) for k, v in (info or {}).items() if k.endswith("sha256")}
    per = (info or {}).get("per_category")
    per_category = {str(k): v for k, v in per.items()} if isinstance(per, dict) else None
    counts = {k: v for k, v in (info or {}).items() if k not in _PLACE_KEYS
              and k != "per_category" and not k.endswith("sha256")}
    if summary.get("partial") or prov.get("limit") is not None:
        per_category, counts = None, {}  # a --limit run counted only what it loaded
    if not hashes and per_category is None and not counts:
        return None
    return DataFacts(hashes, per_category, counts)


@dataclass(frozen=True)
class DataFacts:
    """A run's recorded data: ``hashes`` (key -> hex), ``per_category`` (category ->
    count, when recorded) and the other ``counts`` (samples, images, classes …)."""

    hashes: dict[str, str]
    per_category: dict[str, Any] | None
    counts: dict[str, Any]

    def conflicts(self, other: DataFacts) -> bool:
        """Whether the two runs are over different data: a hash recorded by both
        differs; else, with per-category counts on both sides, a category both hold has
        different counts (a run over a selection of categories is not other data); else
        a count recorded by both differs."""
        shared = self.hashes.keys() & other.hashes.keys()
        if shared:
            return any(self.hashes[k] != other.hashes[k] for k in shared)
        if self.per_category is not None and other.per_category is not None:
            both = self.per_category.keys() & other.per_category.keys()
            return any(self.per_category[c] != other.per_category[c] for c in both)
        both = self.counts.keys() & other.counts.keys()
        return any(self.counts[k] != other.counts[k] for k in both)


def _other_data(runs: Sequence[RunData]) -> list[Path]:
    """The runs over other data than the reference run's: the run with recorded data
    that agrees with the most runs (ties: the first)."""
    facts = [data_identity(r.summary) for r in runs]
    known = [(i, f) for i, f in enumerate(facts) if f is not None]
    if not known:
        return []
    agree = [sum(not f.conflicts(g) for _, g in known) for _, f in known]
    ref = known[agree.index(max(agree))][1]
    return [runs[i].path for i, f in known if f.conflicts(ref)]


def unranked_rows(models: Sequence[ModelRun], runs: Sequence[RunData]) -> dict[str, str]:
    """Model name -> why none of its cells is ranked (``"PARTIAL run"``, ``"other
    data"``, or both joined by ``"; "``), for the models that are not ranked."""
    partial = {r.path for r in runs if r.summary.get("partial")}
    other = set(_other_data(runs))
    out: dict[str, str] = {}
    for m in models:
        why = [w for w, hit in (("PARTIAL run", m.run_dir in partial),
                                ("other data", m.run_dir in other)) if hit]
        if why:
            out[m.name] = "; ".join(why)
    return out


def different_data_warning(runs: Sequence[RunData]) -> str | None:
    """A warning naming the runs over other data than the reference data, or ``None``."""
    other = _other_data(runs)
    if not other:
        return None
    return ("runs over different data (the data recorded in summary.json provenance "
            "differs from that of most runs): " + ", ".join(map(str, other))
            + "; their values are not ranked and are marked " + ROW_MARK)


def headline_groups(m: ModelRun, spec: MetricSpec) -> frozenset[str]:
    """The groups of ``spec.macro_over`` with a value of ``spec`` in ``m``'s block."""
    groups = m.block.get("groups", {}).get(spec.macro_over or "", {})
    return frozenset(str(g) for g, ests in groups.items() if isinstance(ests, dict)
                     and isinstance(ests.get(spec.name), dict)
                     and ests[spec.name].get("value") is not None)


def unranked_headline(models: Sequence[ModelRun], spec: MetricSpec) -> dict[str, list[str]]:
    """For a macro metric: model name -> the groups its headline lacks (sorted), for
    the models whose headline covers another set of groups than the union of all
    models' (empty when ``spec`` is not a macro metric)."""
    if not spec.macro_over:
        return {}
    covered = {m.name: headline_groups(m, spec) for m in models}
    union = frozenset().union(*covered.values())
    return {name: sorted(union - c) for name, c in covered.items() if c != union}
