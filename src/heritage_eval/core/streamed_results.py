"""A streamed run's results read back in sample order, one sample at a time.

A run plans one conversation per sample (or none: a sample that failed to load), sends
them through :func:`heritage_eval.core.runner.stream_items` and scores each answer as it
arrives, so that neither every conversation nor every result is held (memory flat in
dataset size). Three pieces connect the two ends:

- :class:`SamplePlan` plans lazily and remembers, for the samples planned and not yet
  read back, which were sent (a bounded queue: the runner's window plus any run of
  unsent samples);
- :func:`in_sample_order` pairs every sample id with its result (``None``: not sent);
- :class:`OnePassResults` is the ``Mapping`` a benchmark's ``iter_score`` reads: looking a
  sample up *consumes* it (asked in sample order, nothing is buffered).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from heritage_eval.core.runner import ItemResult, RunItem
from heritage_eval.core.types import Conversation


class SamplePlan:
    """Plans ``samples`` lazily with ``plan`` (a sample -> its conversation, or ``None``
    when nothing is sent). Iterate :meth:`items` (the runner's input); ``order`` holds
    ``(sample id, sent)`` for each sample planned and not yet paired with its result;
    ``on_skip`` is called for each sample not sent (e.g. to advance a progress bar)."""

    def __init__(self, samples: Iterable[Any], plan: Callable[[Any], Conversation | None],
                 on_skip: Callable[[], None] | None = None) -> None:
        self._samples = samples
        self._plan = plan
        self._on_skip = on_skip
        self.order: deque[tuple[str, bool]] = deque()

    def items(self) -> Iterator[RunItem]:
        """One :class:`RunItem` per sample sent, in sample order, planned as asked for."""
        for sample in self._samples:
            conv = self._plan(sample)
            sid = str(sample.id)
            self.order.append((sid, conv is not None))
            if conv is None:
                if self._on_skip is not None:
                    self._on_skip()
                continue
            yield RunItem(id=sid, conversation=conv)


def in_sample_order(plan: SamplePlan, results: Iterator[ItemResult]
                    ) -> Iterator[tuple[str, ItemResult | None]]:
    """``(sample id, result)`` for every sample of ``plan``, in sample order: the result
    of a sample sent (``results`` yields them in the order of ``plan.items()``), ``None``
    for one not sent. Raises ``RuntimeError`` when ``results`` ends early or gives a
    result for another item (a runner bug)."""
    order = plan.order
    held: ItemResult | None = None
    while True:
        if not order:
            held = next(results, None)  # plans further: fills ``order``
            if not order:
                return
        sid, sent = order.popleft()
        if not sent:
            yield sid, None
            continue
        res = held if held is not None else next(results, None)
        held = None
        if res is None or res.id != sid:
            raise RuntimeError(f"the runner gave {res.id if res else 'no result'!r} for "
                               f"sample {sid!r}")
        yield sid, res


class OnePassResults(Mapping[str, ItemResult]):
    """``{sample id: ItemResult}`` over the pairs of :func:`in_sample_order`, read once.

    ``results[id]`` / ``results.get(id)`` *consume* the entry: asked in sample order each
    lookup takes the next pair and nothing is kept; a sample asked ahead of its turn
    buffers those before it. ``id in results`` does not consume. Iterating (``items()``,
    ``len()``) reads every remaining pair into the buffer first — correct, but no longer
    flat in memory."""

    def __init__(self, pairs: Iterator[tuple[str, ItemResult | None]]) -> None:
        self._pairs = pairs
        self._ahead: dict[str, ItemResult | None] = {}

    def _find(self, key: str) -> bool:
        """Read pairs into the buffer until ``key``'s; whether it was found."""
        if key in self._ahead:
            return True
        for sid, res in self._pairs:
            self._ahead[sid] = res
            if sid == key:
                return True
        return False

    def __getitem__(self, key: str) -> ItemResult:
        if not self._find(key):
            raise KeyError(key)
        res = self._ahead.pop(key)
        if res is None:
            raise KeyError(key)
        return res

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]``, or ``default`` where that raises ``KeyError`` (what
        ``Mapping.get`` does), without the exception: asked in sample order, the next
        pair is taken as it comes, not stored (issue 23: a look-up per sample)."""
        if not self._ahead:
            for sid, res in self._pairs:
                if sid == key:
                    return default if res is None else res
                self._ahead[sid] = res
                break
        if not self._find(key):
            return default
        res = self._ahead.pop(key)
        return default if res is None else res

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._find(key) and self._ahead[key] is not None

    def _drain(self) -> None:
        for sid, res in self._pairs:
            self._ahead[sid] = res

    def __iter__(self) -> Iterator[str]:
        self._drain()
        return iter([k for k, v in self._ahead.items() if v is not None])

    def __len__(self) -> int:
        self._drain()
        return sum(v is not None for v in self._ahead.values())


#: What a wrapped mapping's ``get`` gives for an absent key (``None`` may be a value).
_ABSENT: Any = object()


class MappedResults(Mapping[str, ItemResult]):
    """``results`` with ``fn`` applied to each value as it is read (lazily: a one-pass
    ``results`` stays one-pass)."""

    def __init__(self, results: Mapping[str, ItemResult],
                 fn: Callable[[ItemResult], ItemResult]) -> None:
        self._results = results
        self._fn = fn

    def __getitem__(self, key: str) -> ItemResult:
        return self._fn(self._results[key])

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]``, or ``default`` where that raises ``KeyError`` (what
        ``Mapping.get`` does), through the wrapped mapping's own ``get`` (no exception
        raised and caught per look-up)."""
        found = self._results.get(key, _ABSENT)
        if found is _ABSENT:
            return default
        try:
            return self._fn(found)
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return key in self._results

    def __iter__(self) -> Iterator[str]:
        return iter(self._results)

    def __len__(self) -> int:
        return len(self._results)
