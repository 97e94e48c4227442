"""Values ↔ small integer codes, for per-record facts kept in typed columns."""

from __future__ import annotations

from typing import Any


class ValueCodes:
    """Values ↔ codes 0, 1, 2 … in first-seen order; ``None`` ↔ -1. ``values[code]`` is
    the value back."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self._codes: dict[Any, int] = {}

    def code(self, value: Any, key: Any = None) -> int:
        """The code of ``value``; ``key``: what identifies it when the value itself is not
        hashable (e.g. a dict's sorted items)."""
        if value is None:
            return -1
        k = value if key is None else key
        c = self._codes.get(k)
        if c is None:
            c = self._codes[k] = len(self.values)
            self.values.append(value)
        return c

    def find(self, value: Any) -> int | None:
        """The code ``value`` already has, or ``None`` (no code is made)."""
        return self._codes.get(value)
