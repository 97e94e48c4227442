"""``as_codes`` / ``first_labels`` of integer labels: the counting path (labels in
``0..DENSE_SPAN-1``) gives exactly the codes of the sorting path and of the rule itself.

Rule (the module's): codes number the distinct labels in order of first appearance;
``first_labels`` gives each code's label. References: the plain-Python loop of
``as_codes`` over a list (the rule written out), and the sorting path (``DENSE_SPAN``
patched to 0).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.stats import inputs
from heritage_eval.stats.inputs import as_codes, first_labels


def _rule(labels: list[int]) -> tuple[list[int], list[int]]:
    """Codes in order of first appearance, and each code's label, by hand."""
    index: dict[int, int] = {}
    codes = [index.setdefault(v, len(index)) for v in labels]
    return codes, list(index)


LABELS = st.lists(st.integers(0, 40), max_size=60)


@settings(max_examples=200, deadline=None)
@given(labels=LABELS, dtype=st.sampled_from([np.int32, np.int64, np.uint8, np.intp]))
def test_counting_path_follows_the_rule(labels: list[int], dtype: type) -> None:
    arr = np.array(labels, dtype=dtype)
    codes, k = as_codes(arr, "groups", len(labels))
    want_codes, want_labels = _rule(labels)
    assert codes.tolist() == want_codes and k == len(want_labels)
    assert codes.dtype == np.intp
    assert first_labels(arr, codes, k) == want_labels
    # the same from a list (the Python loop) and from the sorting path
    assert as_codes(labels, "groups", len(labels))[0].tolist() == want_codes


@settings(max_examples=100, deadline=None)
@given(labels=st.lists(st.integers(-5, 2**40), max_size=40))
def test_large_or_negative_labels_take_the_sorting_path(labels: list[int]) -> None:
    arr = np.array(labels, dtype=np.int64)
    codes, k = as_codes(arr, "clusters", len(labels))
    want_codes, want_labels = _rule(labels)
    assert codes.tolist() == want_codes and k == len(want_labels)
    assert first_labels(arr, codes, k) == want_labels


def test_sorting_path_gives_the_same_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    arr = rng.integers(0, 9, 5_000).astype(np.int32)
    dense = as_codes(arr, "groups", arr.size)
    monkeypatch.setattr(inputs, "DENSE_SPAN", 0)
    sort = as_codes(arr, "groups", arr.size)
    assert dense[1] == sort[1] and np.array_equal(dense[0], sort[0])


def test_length_mismatch_is_named() -> None:
    with pytest.raises(ValueError, match="groups has 2 entries but there are 3 values"):
        as_codes(np.array([0, 1]), "groups", 3)
