"""A re-iterable, lazily produced sample sequence: :class:`ReiterableSamples`.

A benchmark whose data is large can hand the engine (``LoadedData.samples``) a sequence
that holds no sample: every ``iter()`` calls a factory that reads the data again, one
sample at a time, and ``len()`` is the count found by one counting pass at load time.
Memory is then flat in the number of samples; each pass costs one read of the data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from typing import Any, TypeVar, overload

from heritage_eval.core.compact_ids import CompactIds

T = TypeVar("T")


class ReiterableSamples(Sequence[T]):
    """``factory()`` re-run for every iteration; ``n``: the number of items it yields.

    ``factory``: a zero-argument callable returning a fresh iterator over the same items
    in the same order on every call (e.g. a generator re-reading a file). ``n``: that
    iterator's length (>= 0), counted once by the caller. Indexing (``seq[i]``,
    ``seq[a:b]``) walks a fresh iterator (O(i)); a slice is returned as a list. Raises
    ``ValueError`` for a negative ``n`` (or ``ids`` of another length),
    ``IndexError`` for an index outside
    ``[-n, n)``, and ``RuntimeError`` when an iteration yields a different number of
    items than ``n`` (the data changed under the run).
    """

    __slots__ = ("_factory", "_n", "ids")

    def __init__(self, factory: Callable[[], Iterator[T]], n: int,
                 ids: Sequence[str] | None = None) -> None:
        if n < 0:
            raise ValueError(f"ReiterableSamples: negative length {n}")
        if ids is not None and len(ids) != n:
            raise ValueError(f"ReiterableSamples: {len(ids)} ids for {n} samples")
        self._factory = factory
        self._n = n
        #: the samples' ids in order, when the counting pass kept them (``None``: not
        #: kept); lets :func:`sample_ids` answer without a pass over the data
        self.ids = ids

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[T]:
        count = 0
        for item in self._factory():
            count += 1
            yield item
        if count != self._n:
            raise RuntimeError(f"the data changed while running: a pass gave {count} "
                               f"samples, the first gave {self._n}")

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return list(islice(self._factory(), *index.indices(self._n)))
        i = index + self._n if index < 0 else index
        if not 0 <= i < self._n:
            raise IndexError(f"sample index {index} out of range (length {self._n})")
        return next(islice(self._factory(), i, None))

    def __bool__(self) -> bool:
        return self._n > 0

    def __repr__(self) -> str:
        return f"ReiterableSamples(n={self._n})"


def sample_ids(samples: Sequence[Any]) -> Sequence[str]:
    """The ids (``str(sample.id)``) of ``samples`` in order: from
    :attr:`ReiterableSamples.ids` without reading the data when they were kept, else one
    pass."""
    if isinstance(samples, ReiterableSamples) and samples.ids is not None:
        if isinstance(samples.ids, CompactIds):
            return samples.ids  # as kept: no string per id made and held again
        return [str(i) for i in samples.ids]
    return [str(getattr(s, "id", "")) for s in samples]
