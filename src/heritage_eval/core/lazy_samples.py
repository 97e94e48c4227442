"""A re-iterable, lazily produced sample sequence: :class:`ReiterableSamples`.

A benchmark whose data is large can hand the engine (``LoadedData.samples``) a sequence
that holds no sample: every ``iter()`` calls a factory that reads the data again, one
sample at a time, and ``len()`` is the count found by one counting pass at load time.
Memory is then flat in the number of samples; each pass costs one read of the data.

Because the data is read again, a file replaced during the run (same ids, same line
count, other answers) would silently mix two versions of the data. A ``guard`` (e.g.
:func:`file_identities` of the files the passes read) is taken when the sequence is made
and compared at the start and the end of every pass: a difference raises
:class:`DataChangedError` naming what changed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar, overload

from heritage_eval.core.compact_ids import CompactIds

T = TypeVar("T")

#: the identity :func:`file_identities` gives a file that cannot be stat'ed (missing)
MISSING: tuple[str] = ("missing",)


class DataChangedError(RuntimeError):
    """The data a :class:`ReiterableSamples` reads again changed while running (another
    count of samples, or a guarded file replaced or modified). The message starts with
    ``"the data changed while running: "`` and names what changed."""


def file_identities(paths: Iterable[str | Path]) -> tuple[tuple[str, object], ...]:
    """``((str(path), (st_size, st_mtime_ns, st_ino)), …)`` for ``paths`` in order: a
    ``guard`` for :class:`ReiterableSamples`. A file that cannot be stat'ed (missing,
    unreadable folder) gets :data:`MISSING` instead of its identity; never raises."""
    out: list[tuple[str, object]] = []
    for p in paths:
        try:
            st = os.stat(p)
        except (OSError, ValueError):  # ValueError: a NUL byte in the path
            out.append((str(p), MISSING))
            continue
        out.append((str(p), (st.st_size, st.st_mtime_ns, st.st_ino)))
    return tuple(out)


def describe_change(before: object, after: object) -> str | None:
    """``None`` when ``after == before``; else what changed, in words: the paths whose
    identity differs when both are :func:`file_identities` tuples of the same paths,
    otherwise ``"its source changed"``."""
    if after == before:
        return None
    if isinstance(before, tuple) and isinstance(after, tuple) and \
            len(before) == len(after) and all(
                isinstance(b, tuple) and isinstance(a, tuple) and len(b) == len(a) == 2
                and b[0] == a[0] for b, a in zip(before, after, strict=True)):
        changed = [f"{b[0]} was {_how(b[1], a[1])}"
                   for b, a in zip(before, after, strict=True) if b[1] != a[1]]
        if changed:
            return "; ".join(changed)
    return "its source changed"


def _how(before: object, after: object) -> str:
    """How one file's identity changed, in words."""
    if after == MISSING:
        return "removed"
    return "created" if before == MISSING else "replaced or modified"


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

    ``guard``: optional zero-argument callable (e.g. ``lambda: file_identities(paths)``)
    called once here and again at the start and the end of every pass (and of every
    indexing walk); a value unequal to the first raises :class:`DataChangedError` (a
    ``RuntimeError``, as the count check) naming what changed (:func:`describe_change`).
    """

    __slots__ = ("_factory", "_guard", "_guard_value", "_n", "ids")

    def __init__(self, factory: Callable[[], Iterator[T]], n: int,
                 ids: Sequence[str] | None = None,
                 guard: Callable[[], object] | None = None) -> None:
        if n < 0:
            raise ValueError(f"ReiterableSamples: negative length {n}")
        if ids is not None and len(ids) != n:
            raise ValueError(f"ReiterableSamples: {len(ids)} ids for {n} samples")
        self._factory = factory
        self._n = n
        self._guard = guard
        self._guard_value = None if guard is None else guard()
        #: the samples' ids in order, when the counting pass kept them (``None``: not
        #: kept); lets :func:`sample_ids` answer without a pass over the data. The
        #: engine drops them once the run folder is checked (:func:`release_ids`).
        self.ids = ids

    def __len__(self) -> int:
        return self._n

    def check_unchanged(self) -> None:
        """Raise :class:`DataChangedError` when the ``guard`` gives another value than
        at construction (nothing without a guard)."""
        if self._guard is None:
            return
        what = describe_change(self._guard_value, self._guard())
        if what is not None:
            raise DataChangedError(f"the data changed while running: {what}")

    def __iter__(self) -> Iterator[T]:
        self.check_unchanged()
        count = 0
        for item in self._factory():
            count += 1
            yield item
        self.check_unchanged()
        if count != self._n:
            raise DataChangedError(f"the data changed while running: a pass gave {count} "
                                   f"samples, the first gave {self._n}")

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            self.check_unchanged()
            got = list(islice(self._factory(), *index.indices(self._n)))
            self.check_unchanged()
            return got
        i = index + self._n if index < 0 else index
        if not 0 <= i < self._n:
            raise IndexError(f"sample index {index} out of range (length {self._n})")
        self.check_unchanged()
        item = next(islice(self._factory(), i, None))
        self.check_unchanged()
        return item

    def __bool__(self) -> bool:
        return self._n > 0

    def __repr__(self) -> str:
        return f"ReiterableSamples(n={self._n})"


def release_ids(samples: Sequence[Any]) -> None:
    """Drop the ids a :class:`ReiterableSamples` kept (``ids`` becomes ``None``; anything
    else: nothing). The engine calls it once the run folder has been checked against
    them (:func:`~heritage_eval.core.rundir.open_run`), the one use they have in a run:
    at 100,000 samples they are ~4.5 MiB that would otherwise stay to the end of the
    run. :func:`sample_ids` then reads the ids from the data again if asked."""
    if isinstance(samples, ReiterableSamples):
        samples.ids = None


def sample_ids(samples: Sequence[Any]) -> Sequence[str]:
    """The ids (``str(sample.id)``) of ``samples`` in order: from
    :attr:`ReiterableSamples.ids` without reading the data when they were kept, else one
    pass."""
    if isinstance(samples, ReiterableSamples) and samples.ids is not None:
        if isinstance(samples.ids, CompactIds):
            return samples.ids  # as kept: no string per id made and held again
        return [str(i) for i in samples.ids]
    return [str(getattr(s, "id", "")) for s in samples]
