"""``CompactIds`` behaves as a list of the same strings (reference: ``list``), for any
strings — CJK, emoji, lone surrogates, empty — and any index or slice."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from heritage_eval.core.compact_ids import CompactIds
from heritage_eval.core.lazy_samples import ReiterableSamples, sample_ids

_IDS = st.lists(st.text(alphabet=st.characters(codec=None), max_size=8), max_size=30)


@given(ids=_IDS, index=st.integers(-40, 40), start=st.none() | st.integers(-40, 40),
       stop=st.none() | st.integers(-40, 40), step=st.none() | st.integers(-5, 5).filter(
           lambda s: s != 0))
def test_same_as_a_list(ids: list[str], index: int, start: int | None, stop: int | None,
                        step: int | None) -> None:
    compact = CompactIds(ids)
    assert len(compact) == len(ids)
    assert list(compact) == ids and compact == ids
    assert compact[start:stop:step] == ids[start:stop:step]
    if -len(ids) <= index < len(ids):
        assert compact[index] == ids[index]
    else:
        with pytest.raises(IndexError):
            compact[index]
    for i in ids[:3]:
        assert i in compact
    grown = CompactIds(ids)
    grown.append("\ud800x")  # a lone surrogate survives
    assert grown[-1] == "\ud800x" and list(grown) == [*ids, "\ud800x"]


def test_non_strings_are_refused() -> None:
    with pytest.raises(TypeError, match="int"):
        CompactIds(["a", 1])  # type: ignore[list-item]


def test_sample_ids_hands_the_kept_ids_over_without_copying() -> None:
    ids = CompactIds(["a/1", "b/2"])
    seq: ReiterableSamples[object] = ReiterableSamples(lambda: iter([1, 2]), 2, ids)
    assert sample_ids(seq) is ids


def test_memory_is_the_bytes_plus_eight_per_id() -> None:
    names = [f"oracle_bones/img_{i:06d}" for i in range(20_000)]  # 23 ASCII bytes each
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        compact = CompactIds(names)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # by hand: 20,000 x (23 + 8) = 620,000 bytes; bytearray and array over-allocate by
    # at most 1/8 as they grow (CPython's growth rule), so < 720,000. The same ids as
    # str objects take 20,000 x 72 bytes (sys.getsizeof of a 23-character ASCII str)
    assert len(compact) == 20_000 and held < 720_000
