"""The pieces of the compact load and plan, each against its reference.

- :func:`iter_json_array` yields what ``json.loads`` gives for any JSON array, whatever
  the layout and chunk size, and refuses (so the loader reads the file whole, with the
  old messages) every text ``json.loads`` rejects or that is not an array;
- :class:`PoolView` behaves as the list it stands for, ``random.sample`` included;
- a compact :class:`HcsuImage` survives pickling and keeps its record.
"""

from __future__ import annotations

import io
import json
import pickle
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.benchmarks.hcsu.annotation_stream import (
    NotAStreamableArray,
    iter_json_array,
)
from heritage_eval.benchmarks.hcsu.pool_view import PoolView
from heritage_eval.benchmarks.hcsu.schema import HcsuImage, HcsuRecord, record_facts

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8),
                    st.floats(allow_nan=False, allow_infinity=False))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)),
    max_leaves=12)


def _streamed(text: str, chunk: int) -> list[object] | None:
    """The streamed elements, or ``None`` when refused."""
    try:
        return list(iter_json_array(io.StringIO(text), chunk))
    except NotAStreamableArray:
        return None


@settings(max_examples=300, deadline=None)
@given(items=st.lists(values, max_size=6), indent=st.sampled_from([None, 0, 1, 3]),
       spaces=st.sampled_from(["", " ", "\n\t ", "\r\n"]), chunk=st.integers(1, 40),
       ascii_only=st.booleans())
def test_arrays_stream_as_json_loads_reads_them(items: list[object], indent: int | None,
                                                spaces: str, chunk: int,
                                                ascii_only: bool) -> None:
    text = spaces + json.dumps(items, indent=indent, ensure_ascii=ascii_only) + spaces
    assert _streamed(text, chunk) == json.loads(text)


# texts json.loads rejects, or whose value is no array: all refused (by hand)
REFUSED = ["", "   ", "{}", '"x"', "12", "[1,]", "[,1]", "[1 2]", "[1] [2]", "[1]x",
           "[", "[1", '["a', "[1,\n", "[tru]", "[01]", "\ufeff[1]", "[1]]", "[}",
           '[{"a" 1}]', "[NaN, {]"]


@pytest.mark.parametrize("text", REFUSED)
@pytest.mark.parametrize("chunk", [1, 3, 1 << 18])
def test_what_json_loads_rejects_is_refused(text: str, chunk: int) -> None:
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError:
        loaded = None
    assert not isinstance(loaded, list)
    assert _streamed(text, chunk) is None


def test_a_number_cut_by_a_chunk_is_read_whole() -> None:
    # "[12345]" read 3 characters at a time: "[12" must not give 12
    assert _streamed("[12345, 6.5e3]", 3) == [12345, 6500.0]


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 30), data=st.data())
def test_pool_view_is_the_list_it_stands_for(n: int, data: st.DataObject) -> None:
    base = [f"c{i}" for i in range(n)]
    skip = tuple(sorted(data.draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n))
                        if n else ()))
    want = [x for i, x in enumerate(base) if i not in skip]
    view = PoolView(base, skip)
    assert len(view) == len(want) and list(view) == want and view == want
    assert view.to_list() == want and view.as_set() == set(want)
    assert [view[i] for i in range(-len(want), len(want))] == want + want
    assert view[1:3] == want[1:3]
    for bad in (len(want), -len(want) - 1):
        with pytest.raises(IndexError):
            view[bad]
    k = data.draw(st.integers(0, len(want)))
    seed = data.draw(st.integers(0, 2**32))
    assert random.Random(seed).sample(view, k) == random.Random(seed).sample(want, k)


def test_compact_image_pickles_and_rebuilds_its_record() -> None:
    raw: dict[str, object] = {"filename": "甲-楷书/长_1.png", "char": "长",
                              "calligrapher": "甲", "script_type": "楷书", "quality": "ok",
                              "birth_year": 1.0, "tags": ["x", 2]}
    rec = HcsuRecord.model_validate(raw)
    keys, vals = record_facts(raw, rec)
    img = HcsuImage.from_facts("Bei/甲-楷书/长_1", "Bei", "Bei/甲-楷书", keys, vals,
                               "/data/bei/甲-楷书", None, 4)
    old = HcsuImage("Bei/甲-楷书/长_1", "Bei", rec, Path("/data/bei/甲-楷书/长_1.png"),
                    "bei_annotations.json record 4")
    assert img == old and hash(img) == hash(old)
    assert img.record == rec and img.record.birth_year == 1  # validated: 1.0 -> 1
    assert img.path_text == "/data/bei/甲-楷书/长_1.png"
    assert (img.style, img.calligrapher, img.script_type, img.description) == \
        ("甲-楷书", "甲", "楷书", None)
    back = pickle.loads(pickle.dumps(img))
    assert back == img and back.record.model_extra == {"tags": ["x", 2]}
    with pytest.raises(AttributeError):
        img.id = "other"
