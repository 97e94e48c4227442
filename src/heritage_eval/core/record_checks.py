"""What the engine checks in every benchmark's output before it counts — so that a
benchmark's bug (a plug-in's included) is one clear message naming the benchmark, the
sample and the value, not a statistics error far from its cause:

- :func:`check_unique_ids`: the samples ``load`` returned have distinct ids (a run folder
  holds one row per sample; two samples of one id would overwrite each other's answers
  in the cache and in ``samples.jsonl``);
- :func:`checked`: every score of a declared metric is a finite number inside the
  metric's ``bounds`` (``MetricSpec.bounds``), or ``None``.

Both raise :class:`BenchmarkOutputError`, a
:class:`~heritage_eval.core.benchmark.UsageError` (exit status 2).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from heritage_eval.core.benchmark import MetricSpec, UsageError
from heritage_eval.core.record import SampleRecord


class BenchmarkOutputError(UsageError):
    """A benchmark returned something the platform cannot count (see the module
    docstring); the message names the benchmark, the sample and the value."""


def check_unique_ids(benchmark: str, samples: Sequence[Any]) -> None:
    """Raise :class:`BenchmarkOutputError` when two of ``samples`` share an ``id`` (the
    first three such ids are named)."""
    check_distinct_ids(benchmark, [str(getattr(s, "id", "")) for s in samples])


def check_distinct_ids(benchmark: str, ids: Sequence[str]) -> None:
    """:func:`check_unique_ids` for the ids themselves (``ids``: one per sample)."""
    counts = Counter(ids)
    twice = [i for i, n in counts.items() if n > 1]
    if twice:
        shown = ", ".join(repr(i) for i in twice[:3])
        raise BenchmarkOutputError(f"benchmark {benchmark!r}: {len(twice)} sample id(s) "
                                   f"occur more than once ({shown}); every sample needs "
                                   "its own id")


def checked(benchmark: str, records: Iterable[SampleRecord],
            metrics: Sequence[MetricSpec]) -> Iterator[SampleRecord]:
    """``records`` one at a time, each score of a declared metric checked: a NaN, an
    infinity or a value outside the metric's ``bounds`` raises
    :class:`BenchmarkOutputError` naming the benchmark, the metric, the sample and the
    value."""
    specs = {m.name: m for m in metrics}
    for record in records:
        for name, value in record.scores.items():
            spec = specs.get(name)
            if spec is None or value is None:
                continue
            number = float(value)
            low, high = spec.bounds if spec.bounds is not None else (-math.inf, math.inf)
            if not math.isfinite(number) or not low <= number <= high:
                raise BenchmarkOutputError(
                    f"benchmark {benchmark!r}, sample {record.id!r}: score {name!r} = "
                    f"{value!r} is not a finite number in [{low}, {high}] (the metric's "
                    "bounds); a benchmark's scores must lie in the range it declares")
        yield record
