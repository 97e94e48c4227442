"""The per-sample facts of a streamed Ancient-Bench run, kept in columns.

A streamed ``run`` / ``score`` keeps, per (model, sample), what the summary body needs
(:class:`~.records.RowFacts`: scores, edit counts, state, error reason, ``script`` /
``period``). As objects those are ~0.4 KiB each (270,000 pairs: ~110 MiB); here they are
typed arrays — about 40 bytes per row — and rows are handed out as small read-only views
(:class:`FactRow`) while the tables are built, so the numbers are those of the same facts
in the same order. A row's id is kept only where the summary names it: the rows with an
error reason (the summary's ``errors`` list); the id of any other row reads as ``""``.
At 100,000 rows that leaves out ~4.5 MiB of ids the tables never read.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

from heritage_eval.benchmarks.ancient_bench.records import RowFacts
from heritage_eval.core.codes import ValueCodes
from heritage_eval.core.columns import Column
from heritage_eval.core.types import Outcome

#: Integer facts, stored as 16-bit ints with -1 for ``None`` (counts: never negative); a
#: column is widened to 32 bits the first time a count does not fit (an answer of more
#: than 32,767 tokens).
INT_FIELDS = ("insertions", "deletions", "substitutions", "st_only_substitutions",
              "n_pred_tokens", "n_gt_tokens")
_STATES = list(Outcome)
_STATE_CODE = {s: i for i, s in enumerate(_STATES)}
_EMPTY: Mapping[str, Any] = {}
_NO_ERROR: tuple[None, None, str] = (None, None, "")


class FactTable(Sequence["FactRow"]):
    """Rows of facts appended in order (:meth:`add`); a ``Sequence`` of :class:`FactRow`.

    Floats are stored as IEEE doubles (the same values), ``None`` scores as NaN (scores
    are in [0, 1], never NaN), ``None`` counts as -1; error reasons, and ids, are kept
    only for the rows that have an error reason or kind (:attr:`FactRow.id` is ``""``
    for the others).
    """

    def __init__(self) -> None:
        self._models, self._cats, self._meta = ValueCodes(), ValueCodes(), ValueCodes()
        # blocked columns (:class:`~heritage_eval.core.columns.Column`): growing, they
        # never copy what they hold (one array each left ~8 MiB of holes at 100,000 rows)
        self._model, self._cat = Column("H"), Column("H")
        self._state = Column("B")
        self._ned, self._f1 = Column("d"), Column("d")
        self._ints = {f: Column("h") for f in INT_FIELDS}  # widened when needed
        self._meta_code = Column("i")
        # per row with an error reason or kind: (error, error_kind, id)
        self._errors: dict[int, tuple[str | None, str | None, str]] = {}

    def add(self, f: RowFacts) -> None:
        """Append one row's facts."""
        i = len(self._state)
        self._model.append(self._models.code(f.model))
        self._cat.append(self._cats.code(f.category))
        self._state.append(_STATE_CODE[f.state])
        self._ned.append(math.nan if f.ned_score is None else f.ned_score)
        self._f1.append(math.nan if f.f1 is None else f.f1)
        for name, col in self._ints.items():
            value = getattr(f, name)
            try:
                col.append(-1 if value is None else value)
            except OverflowError:  # a count above 32,767: 32-bit from now on
                self._ints[name] = col = col.retyped("i")
                col.append(value)
        meta = f.metadata
        self._meta_code.append(
            self._meta.code(dict(meta), tuple(sorted(meta.items()))) if meta else -1)
        if f.error is not None or f.error_kind is not None:
            self._errors[i] = (f.error, f.error_kind, f.id)

    def __len__(self) -> int:
        return len(self._state)

    @overload
    def __getitem__(self, i: int) -> FactRow: ...
    @overload
    def __getitem__(self, i: slice) -> list[FactRow]: ...

    def __getitem__(self, i: int | slice) -> FactRow | list[FactRow]:
        return FactRows(self, range(len(self)))[i]

    def __iter__(self) -> Iterator[FactRow]:
        return (FactRow(self, i) for i in range(len(self)))

    def rows_of(self, model: str) -> FactRows:
        """The rows of ``model``, in order, as a view (4 bytes per row, not a list of
        views): what the summary reads per model."""
        code = self._models.find(model)
        indices = array("I")
        if code is not None:
            indices.extend(i for i, m in enumerate(self._model) if m == code)
        return FactRows(self, indices)

    def _int(self, name: str, i: int) -> int | None:
        value = self._ints[name][i]
        return None if value < 0 else value

    def _float(self, col: Column, i: int) -> float | None:
        value = col[i]
        return None if math.isnan(value) else value


class FactRows(Sequence["FactRow"]):
    """Some rows of a :class:`FactTable` (``indices``, in order: an ``array`` or a
    ``range``), handed out as :class:`FactRow` views; indexing as a list's (negative
    indices, slices; ``IndexError`` out of range)."""

    __slots__ = ("indices", "table")

    def __init__(self, table: FactTable, indices: Sequence[int]) -> None:
        self.table, self.indices = table, indices

    def __len__(self) -> int:
        return len(self.indices)

    @overload
    def __getitem__(self, i: int) -> FactRow: ...
    @overload
    def __getitem__(self, i: slice) -> list[FactRow]: ...

    def __getitem__(self, i: int | slice) -> FactRow | list[FactRow]:
        if isinstance(i, slice):
            return [FactRow(self.table, j) for j in self.indices[i]]
        return FactRow(self.table, self.indices[i])

    def __iter__(self) -> Iterator[FactRow]:
        table = self.table
        return (FactRow(table, i) for i in self.indices)


class FactRow:
    """One row of a :class:`FactTable` (what :class:`~.records.RowLike` reads)."""

    __slots__ = ("_i", "_t")

    def __init__(self, table: FactTable, i: int) -> None:
        self._t, self._i = table, i

    @property
    def model(self) -> str:
        return str(self._t._models.values[self._t._model[self._i]])

    @property
    def id(self) -> str:
        """The sample id of a row with an error reason or kind; ``""`` for any other row
        (not kept: the summary names only the rows in error)."""
        return self._t._errors.get(self._i, _NO_ERROR)[2]

    @property
    def category(self) -> str:
        return str(self._t._cats.values[self._t._cat[self._i]])

    @property
    def state(self) -> Outcome:
        return _STATES[self._t._state[self._i]]

    @property
    def ned_score(self) -> float | None:
        return self._t._float(self._t._ned, self._i)

    @property
    def f1(self) -> float | None:
        return self._t._float(self._t._f1, self._i)

    @property
    def error(self) -> str | None:
        return self._t._errors.get(self._i, _NO_ERROR)[0]

    @property
    def error_kind(self) -> str | None:
        return self._t._errors.get(self._i, _NO_ERROR)[1]

    @property
    def insertions(self) -> int | None:
        return self._t._int("insertions", self._i)

    @property
    def deletions(self) -> int | None:
        return self._t._int("deletions", self._i)

    @property
    def substitutions(self) -> int | None:
        return self._t._int("substitutions", self._i)

    @property
    def st_only_substitutions(self) -> int | None:
        return self._t._int("st_only_substitutions", self._i)

    @property
    def n_pred_tokens(self) -> int | None:
        return self._t._int("n_pred_tokens", self._i)

    @property
    def n_gt_tokens(self) -> int | None:
        return self._t._int("n_gt_tokens", self._i)

    @property
    def metadata(self) -> Mapping[str, Any]:
        code = self._t._meta_code[self._i]
        return _EMPTY if code < 0 else self._t._meta.values[code]
