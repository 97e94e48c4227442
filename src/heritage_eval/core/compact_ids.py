"""Sample ids held compactly: :class:`CompactIds`, a read-only sequence of strings stored
as one UTF-8 buffer and one offset array.

A run keeps the id of every sample it plans (the engine checks that they are distinct and
that a resumed folder would lose no row). As 100,000 ``str`` objects these take ~7 MiB
and, being small objects that live for the whole run among the short-lived records of
each window, keep the allocator's memory pools from being given back (the process grew
by about twice the ids' own size). Stored here they take the ids' UTF-8 bytes plus 8
bytes each, in two blocks; a string is made again when it is read.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import overload


class CompactIds(Sequence[str]):
    """The strings ``ids`` (any iterable, read once) in order; ``append`` adds one more.

    Indexing, iteration, ``len`` and ``in`` behave as on a ``list`` of the same strings
    (``ids[i]`` decodes one string; a slice gives a list). Lone surrogates are kept
    (stored with ``surrogatepass``). Raises ``TypeError`` when an item is not a ``str``.
    Memory: the UTF-8 bytes of the ids plus 8 bytes per id.
    """

    __slots__ = ("_data", "_ends")

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._data = bytearray()
        self._ends = array("Q")
        for i in ids:
            self.append(i)

    def append(self, item: str) -> None:
        """Add ``item`` at the end. Raises ``TypeError`` for a non-string."""
        if not isinstance(item, str):
            raise TypeError(f"CompactIds holds strings, not {type(item).__name__}")
        self._data += item.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._data))

    def __len__(self) -> int:
        return len(self._ends)

    def _at(self, i: int) -> str:
        start = self._ends[i - 1] if i else 0
        return self._data[start:self._ends[i]].decode("utf-8", "surrogatepass")

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        n = len(self._ends)
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(n))]
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError(f"id index {index} out of range (length {n})")
        return self._at(i)

    def __iter__(self) -> Iterator[str]:
        data, start = self._data, 0
        for end in self._ends:
            yield data[start:end].decode("utf-8", "surrogatepass")
            start = end

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CompactIds):
            return self._data == other._data and self._ends == other._ends
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other,
                                                                         strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable (append), as a list

    def __repr__(self) -> str:
        return f"CompactIds(n={len(self)})"
