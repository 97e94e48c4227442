"""``OnePassResults.get`` / ``MappedResults.get`` answer as ``Mapping.get`` does.

Issue 23 gave both their own ``get`` (no ``KeyError`` raised and caught per sample). The
reference is ``collections.abc.Mapping.get`` itself, called on a second, identical
object: the same answers, in the same order, for generated pair lists (results and
unsent samples, ``None``) and generated look-up sequences (in order, ahead of order,
repeated, absent keys), and the same state left (what ``len`` then counts).
"""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.core.runner import ItemResult
from heritage_eval.core.streamed_results import MappedResults, OnePassResults
from heritage_eval.core.types import Response

ids = st.sampled_from(["a", "b", "c", "d", "e", "zz"])


def _pairs(spec: list[tuple[str, bool]]) -> list[tuple[str, ItemResult | None]]:
    seen: set[str] = set()
    out: list[tuple[str, ItemResult | None]] = []
    for sid, sent in spec:
        if sid in seen:  # sample ids are distinct
            continue
        seen.add(sid)
        out.append((sid, ItemResult(sid, [Response(text=sid)]) if sent else None))
    return out


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(ids, st.booleans()), max_size=6), st.lists(ids, max_size=8))
def test_one_pass_get_is_mapping_get(spec: list[tuple[str, bool]], asks: list[str]) -> None:
    pairs = _pairs(spec)
    fast, ref = OnePassResults(iter(pairs)), OnePassResults(iter(pairs))
    for key in asks:
        assert fast.get(key) is Mapping.get(ref, key)
        assert fast.get(key, "x") == Mapping.get(ref, key, "x")
    assert len(fast) == len(ref)


def _upper(res: ItemResult) -> ItemResult:
    if res.id == "d":
        raise KeyError("d")  # a mapping function's own KeyError: Mapping.get hides it
    return ItemResult(res.id, [Response(text=(res.responses[0].text or "").upper())])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(ids, st.booleans()), max_size=6), st.lists(ids, max_size=8))
def test_mapped_get_is_mapping_get(spec: list[tuple[str, bool]], asks: list[str]) -> None:
    pairs = _pairs(spec)
    fast = MappedResults(OnePassResults(iter(pairs)), _upper)
    ref = MappedResults(OnePassResults(iter(pairs)), _upper)
    for key in asks:
        got, want = fast.get(key), Mapping.get(ref, key)
        assert (got is None) == (want is None)
        if got is not None and want is not None:
            assert got.responses[0].text == want.responses[0].text == key.upper()
    plain = {sid: res for sid, res in pairs if res is not None}
    assert MappedResults(plain, _upper).get("absent", 7) == 7
