"""Malformed fields of a release row are data errors naming ``file:line`` and the field.

Without the checks a malformed ``spotting`` / ``bbox`` / ``width`` / ``height`` read as "no
reference box" (a perfect answer then scores 0) and ``annotation: null`` as an empty
reference text. The rules (chronicles_ocr.row_checks): ``spotting`` a list of objects
whose ``bbox`` is ``{x1, y1, x2, y2}`` or 4 values, each a finite number within
±1,000,000 px; ``width`` / ``height`` positive numbers as ``int()`` reads them;
``annotation`` text. Spotting reads all three geometry fields, recognition ``spotting``
only, parsing ``annotation`` only; classification none of them. The demo set (valid
data) must load without one error.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("chronicles_ocr")

from chronicles_ocr.loader import load_release
from PIL import Image

import heritage_eval as he

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[1] / "plugins" / "chronicles-ocr" / "src" / "chronicles_ocr" / "demo"
IMAGE = "images/甲骨文/a.png"
GOOD: dict[str, Any] = {
    "image_path": IMAGE, "font_type": "甲骨文", "annotation": "天下",
    "spotting": [{"bbox": {"x1": 2, "y1": 2, "x2": 18, "y2": 18}, "modern_char": "天"},
                 {"bbox": [20, 2, 16, 16], "modern_char": "下"}],
    "width": 40, "height": 20}
TASKS = ("classification", "parsing", "spotting", "recognition")


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("geometry")
    (root / "images" / "甲骨文").mkdir(parents=True)
    Image.new("RGB", (40, 20), "white").save(root / IMAGE)
    return root


def _errors(root: Path, row: dict[str, Any], name: str = "Chronicles_OCR.jsonl"
            ) -> dict[str, str | None]:
    """Task -> load error of ``row`` written as line 2 of ``root/name`` (line 1 blank)."""
    path = root / name
    path.write_text("\n" + json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    samples = load_release(path if name != "Chronicles_OCR.jsonl" else root, seed=42).samples
    return {s.task: s.load_error for s in samples}


def _with(**fields: Any) -> dict[str, Any]:
    row = copy.deepcopy(GOOD)
    for key, value in fields.items():
        if value is _DROP:
            row.pop(key)
        else:
            row[key] = value
    return row


_DROP = object()


def test_the_valid_rows_load_without_errors(release: Path) -> None:
    assert _errors(release, GOOD) == dict.fromkeys(TASKS)
    demo = load_release(DEMO, seed=42)
    assert [s.load_error for s in demo.samples if s.load_error] == []


@pytest.mark.parametrize(("fields", "tasks", "words"), [
    ({"spotting": "garbage"}, {"spotting", "recognition"}, "spotting is 'garbage'"),
    ({"spotting": 12345}, {"spotting", "recognition"}, "spotting is 12345"),
    ({"spotting": None}, {"spotting", "recognition"}, "spotting is null"),
    ({"spotting": _DROP}, {"spotting", "recognition"}, "spotting is missing"),
    ({"spotting": [5, {"bbox": [1, 1, 5, 5]}]}, {"spotting", "recognition"},
     "spotting[0] is 5"),
    ({"width": 0}, {"spotting"}, "width 0"),
    ({"height": -5}, {"spotting"}, "height -5"),
    ({"width": "wide"}, {"spotting"}, "width 'wide'"),
    ({"width": True}, {"spotting"}, "width True"),
    ({"width": math.inf}, {"spotting"}, "width inf"),
    ({"height": _DROP}, {"spotting"}, "height is missing"),
    ({"annotation": None}, {"parsing"}, "annotation is null"),
    ({"annotation": _DROP}, {"parsing"}, "annotation is missing"),
    ({"annotation": 12345}, {"parsing"}, "annotation is 12345"),
    ({"annotation": ["天"]}, {"parsing"}, "annotation is ['天']"),
])
def test_malformed_fields_are_data_errors(release: Path, fields: dict[str, Any],
                                          tasks: set[str], words: str) -> None:
    errors = _errors(release, _with(**fields))
    assert {t for t, e in errors.items() if e} == tasks
    for task in tasks:
        assert (errors[task] or "").startswith("Chronicles_OCR.jsonl:2: "), errors[task]
        assert words in (errors[task] or "")


def test_the_error_names_the_file_given(release: Path) -> None:
    errors = _errors(release, _with(annotation=None), name="mine.jsonl")
    assert (errors["parsing"] or "").startswith("mine.jsonl:2: annotation is null")


#: values that are not a finite coordinate within ±1e6 px
BAD_VALUES = st.one_of(
    st.none(), st.booleans(), st.text(alphabet="abc, ", max_size=4),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e7, "nan", "1e400"]),
    st.floats(min_value=1e6, exclude_min=True, allow_infinity=False),
    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(),
                                                         max_size=1))
GOOD_VALUES = st.one_of(st.integers(-10**6, 10**6),
                        st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=st.integers(0, 3), value=BAD_VALUES, as_list=st.booleans())
def test_any_bad_coordinate_is_named(release: Path, index: int, value: Any,
                                     as_list: bool) -> None:
    coords = [2, 2, 18, 18]
    coords[index] = value
    bbox: Any = coords if as_list else dict(zip(("x1", "y1", "x2", "y2"), coords,
                                                strict=True))
    row = _with(spotting=[GOOD["spotting"][1], {"bbox": bbox, "modern_char": "天"}])
    errors = _errors(release, row)
    for task in ("spotting", "recognition"):
        assert (errors[task] or "").startswith("Chronicles_OCR.jsonl:2: spotting[1].bbox")
    assert errors["parsing"] is None and errors["classification"] is None


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(coords=st.lists(GOOD_VALUES, min_size=4, max_size=4), as_list=st.booleans())
def test_any_finite_coordinate_is_read(release: Path, coords: list[Any],
                                       as_list: bool) -> None:
    # a box of no positive size is not an error: the official judge drops it
    bbox: Any = coords if as_list else dict(zip(("x1", "y1", "x2", "y2"), coords,
                                                strict=True))
    errors = _errors(release, _with(spotting=[{"bbox": bbox, "modern_char": "天"}]))
    assert errors == dict.fromkeys(TASKS)


def test_a_run_never_scores_a_malformed_reference(release: Path, tmp_path: Path) -> None:
    (release / "Chronicles_OCR.jsonl").write_text(
        json.dumps(_with(spotting="garbage", annotation=None), ensure_ascii=False) + "\n",
        encoding="utf-8")
    run = he.evaluate("chronicles-ocr", data=str(release), model="baseline:random",
                      out=str(tmp_path / "run"))
    by_task = {r.groups["task"]: r for r in run.records}
    for task in ("spotting", "recognition", "parsing"):
        rec = by_task[task]
        assert rec.state.value == "error" and rec.details["error_kind"] == "data"
        assert (rec.error or "").startswith("Chronicles_OCR.jsonl:1: ")
        assert all(v is None for v in rec.scores.values())
    assert by_task["classification"].state.value != "error"
    # listed by reason in summary.md
    md = (run.path / "summary.md").read_text(encoding="utf-8")
    assert "## Left out of the scores" in md
    assert "- 2 × Chronicles_OCR.jsonl:1: spotting is 'garbage', not a list of boxes" in md
