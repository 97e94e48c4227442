"""A typed column that grows one value at a time without moving what it holds.

A streamed run keeps a few numbers per sample in typed columns (the summary's
:class:`~heritage_eval.core.summary.ModelFacts`, Ancient-Bench's fact table). Kept as
one ``array`` each, a column grows by ``realloc``: a block too large to grow in place
is copied and the old one freed. With twenty columns growing side by side the freed
blocks pile up inside the C heap, which cannot give them back: measured on a 100,000-
sample Ancient-Bench run (``mallinfo2``), the heap's free space rose from 4 to 12 MiB
while the columns themselves held ~8 MiB. Blocked, it rose to 7.7 MiB, and the process
held 4 MiB less at the last record.

:class:`Column` keeps its values in blocks of :data:`BLOCK` values: only the last block
grows, a full block is never copied again, and the last block's growth reuses the holes
the previous one left (the same sizes, in the same order). The slack is at most one
block per column.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

#: Values per block: 128 KiB of doubles (glibc's default threshold for a block of its
#: own mapping), 16 KiB of bytes.
BLOCK = 16_384


class Column:
    """Values of one ``array`` type code (``"d"``, ``"i"``, ``"B"`` …) in insertion order.

    ``append`` raises what ``array.append`` raises (``OverflowError`` for a value the
    type cannot hold, ``TypeError`` for a wrong type), leaving the column unchanged.
    Indexing takes an ``int`` (negative counts from the end; ``IndexError`` outside);
    iteration, ``len`` and :meth:`numpy` (a copy) read every value in order.
    """

    __slots__ = ("_full", "_tail", "typecode")

    def __init__(self, typecode: str, values: Iterable[Any] = ()) -> None:
        self.typecode = typecode
        self._full: list[array[Any]] = []
        self._tail: array[Any] = array(typecode)
        for v in values:
            self.append(v)

    def append(self, value: Any) -> None:
        """Add ``value`` at the end."""
        tail = self._tail
        tail.append(value)
        if len(tail) >= BLOCK:
            self._full.append(tail)
            self._tail = array(self.typecode)

    def __len__(self) -> int:
        return len(self._full) * BLOCK + len(self._tail)

    def __getitem__(self, index: int) -> Any:
        full = self._full
        if index >= 0:  # the common case first: a full block, then the last one
            block, at = divmod(index, BLOCK)
            if block < len(full):
                return full[block][at]
            if block == len(full) and at < len(self._tail):
                return self._tail[at]
        n = len(self)
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError(f"column index {index} out of range (length {n})")
        block, at = divmod(i, BLOCK)
        return (full[block] if block < len(full) else self._tail)[at]

    def __iter__(self) -> Iterator[Any]:
        return chain(*self._full, self._tail)

    def numpy(self) -> npt.NDArray[Any]:
        """A copy of every value as one numpy array of the column's C type (``array``
        type codes are numpy's)."""
        dtype = np.dtype(self.typecode)
        parts = [np.frombuffer(b, dtype=dtype) for b in (*self._full, self._tail) if b]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

    def retyped(self, typecode: str) -> Column:
        """A new column of the same values in type ``typecode`` (e.g. ``"h"`` widened to
        ``"i"``). Raises ``OverflowError`` when a value does not fit, ``TypeError``
        when it is of another kind (a float for an integer type)."""
        out = Column(typecode)
        out._full = [array(typecode, b) for b in self._full]
        out._tail = array(typecode, self._tail)
        return out
