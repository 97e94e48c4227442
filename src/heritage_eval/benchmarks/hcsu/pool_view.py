"""A list minus a few positions, without copying it: :class:`PoolView`.

A class's distractor (or shot) pool is its domain's (or the data's) sorted classes less
those of its own style: a list per class held C lists of about C entries (with
``--distractor-pool all``, 32 MB at 2,000 classes). A view keeps one shared list and
the few positions left out.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, TypeVar, overload

T = TypeVar("T")


class PoolView(Sequence[T]):
    """``base`` without the items at the positions ``skip`` (sorted ascending, few).

    Indexing (``int``, negative from the end; a slice gives a list), ``len``, iteration
    and equality (with a list, tuple or view) as for the list it stands for, so
    ``random.sample`` draws from it exactly as from that list. Raises ``IndexError``
    for an index outside ``[-len, len)``."""

    __slots__ = ("_base", "_skip")

    def __init__(self, base: Sequence[T], skip: tuple[int, ...]) -> None:
        self._base, self._skip = base, skip

    def __len__(self) -> int:
        return len(self._base) - len(self._skip)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError(f"pool index {index} out of range (length {n})")
        for s in self._skip:
            if s > i:
                break
            i += 1
        return self._base[i]

    def __iter__(self) -> Iterator[T]:
        skip = set(self._skip)
        return (x for j, x in enumerate(self._base) if j not in skip)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (PoolView, list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to a list: unhashable like it

    def as_set(self) -> set[T]:
        """The items as a set (items hashable)."""
        return set(self._base).difference(self._base[j] for j in self._skip)

    def to_list(self) -> list[T]:
        """A new list of the items (a copy of ``base`` less the skipped positions)."""
        out = list(self._base)
        for j in reversed(self._skip):
            del out[j]
        return out
