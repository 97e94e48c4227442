"""``Column`` reads back exactly as a list of the same values would (and as one
``array`` of the type did before), across block boundaries.

Reference: a plain ``array`` of the same type code, filled with the same values — what
the columns were before they were blocked. Blocks are made small (``BLOCK`` patched to
a few values) so that generated lengths cross several boundaries.
"""

from __future__ import annotations

from array import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.core import columns
from heritage_eval.core.columns import Column

FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)


@pytest.fixture(autouse=True)
def _small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columns, "BLOCK", 3)


@settings(max_examples=150, deadline=None)
@given(values=st.lists(FLOATS, max_size=20))
def test_doubles_read_back_bit_for_bit(values: list[float]) -> None:
    ref = array("d", values)
    col = Column("d", values)
    assert len(col) == len(ref)
    assert array("d", col).tobytes() == ref.tobytes()  # iteration, NaN bits included
    assert col.numpy().tobytes() == ref.tobytes() and col.numpy().dtype == np.float64
    for i in range(-len(ref), len(ref)):
        assert array("d", [col[i]]).tobytes() == array("d", [ref[i]]).tobytes()


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.integers(-32768, 32767), max_size=20),
       code=st.sampled_from(["h", "i", "l"]))
def test_integers_index_like_a_list(values: list[int], code: str) -> None:
    col = Column(code, values)
    assert list(col) == values and col.numpy().tolist() == values
    assert col.numpy().dtype == np.dtype(code)
    # indices -n .. -1 read the values in order, then 0 .. n-1 again (as a list's)
    assert [col[i] for i in range(-len(values), len(values))] == values + values
    for bad in (len(values), -len(values) - 1):
        with pytest.raises(IndexError):
            col[bad]


def test_a_value_that_does_not_fit_leaves_the_column_unchanged() -> None:
    # 16-bit: 40,000 overflows (as array("h").append does); the column is as before,
    # and its widened copy takes it.
    col = Column("h", [1, 2, 3, 4])  # one full block (3) and one in the last
    with pytest.raises(OverflowError):
        col.append(40_000)
    assert list(col) == [1, 2, 3, 4]
    wide = col.retyped("i")
    wide.append(40_000)
    assert list(wide) == [1, 2, 3, 4, 40_000] and wide.typecode == "i"
    assert list(col) == [1, 2, 3, 4]  # the original is not changed by the copy


def test_empty_column() -> None:
    col = Column("B")
    assert len(col) == 0 and list(col) == [] and col.numpy().dtype == np.uint8
    assert col.numpy().size == 0


def test_full_blocks_are_kept_not_copied() -> None:
    # the rule of the module: a full block is never moved again (same object after more
    # appends)
    col = Column("d", [0.0, 1.0, 2.0])
    first = col._full[0]
    for v in range(10):
        col.append(float(v))
    assert col._full[0] is first and len(col._full) == 4 and len(col) == 13
