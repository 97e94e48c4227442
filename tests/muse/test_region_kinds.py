"""Label Studio regions and stored sizes over generated inputs (docs/images.md).

Expected boxes are computed here from the rule in words (percent / 100, clamp within the
tolerance, refuse beyond it) or, for rotated boxes, by complex-number rotation of the
four corners in pixels: independent of ``box_from_percent``'s own arithmetic.
"""

from __future__ import annotations

import cmath
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from heritage_eval.benchmarks.muse.labelstudio import load_labelstudio
from heritage_eval.benchmarks.muse.labelstudio_rules import (
    FRACTION_LIMIT,
    PCT_TOLERANCE,
    BoxGeometryError,
    box_from_percent,
    image_file_size,
    size_disagreement,
)

EPS = 1e-6  # a step well above float noise (1e-13 here) and the 1e-9 guard
pct = st.floats(0, 100, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(x=pct, y=pct, w=pct, h=pct)
def test_inside_boxes_are_divided_by_100(x: float, y: float, w: float, h: float) -> None:
    """A box inside the image (edges at 0..100) becomes value / 100 rounded to 6
    decimals; one whose width or height rounds to 0 there is refused."""
    if x + w > 100 or y + h > 100:
        return
    expected = [round(v / 100, 6) for v in (x, y, w, h)]
    if expected[2] <= 0 or expected[3] <= 0:
        with pytest.raises(BoxGeometryError, match="no area"):
            box_from_percent({"x": x, "y": y, "width": w, "height": h})
        return
    coords, notes = box_from_percent({"x": x, "y": y, "width": w, "height": h})
    assert coords == pytest.approx(expected, abs=1e-6)
    assert any("0–1 fractions" in n for n in notes) == (max(x, y, w, h) <= FRACTION_LIMIT)


@settings(max_examples=200, deadline=None)
@given(x=pct, y=pct, w=st.floats(-100, 100, allow_nan=False),
       h=st.floats(-100, 100, allow_nan=False))
def test_negative_sizes_are_the_mirrored_box(x: float, y: float, w: float, h: float) -> None:
    """A negative width / height means the box extends left / up: the result is that of
    the box with positive sizes starting at ``x + w`` / ``y + h``."""
    mirrored = {"x": min(x, x + w), "y": min(y, y + h), "width": abs(w), "height": abs(h)}
    try:
        want = box_from_percent(mirrored)[0]
    except BoxGeometryError:
        with pytest.raises(BoxGeometryError):
            box_from_percent({"x": x, "y": y, "width": w, "height": h})
        return
    assert box_from_percent({"x": x, "y": y, "width": w, "height": h})[0] == want


@pytest.mark.parametrize("edge", ["left", "top", "right", "bottom"])
@pytest.mark.parametrize(("over", "kept"), [
    (0.0, True), (PCT_TOLERANCE - EPS, True), (PCT_TOLERANCE, True),
    (PCT_TOLERANCE + EPS, False), (1.0, False), (50.0, False)])
def test_overshoot_threshold_is_monotone(edge: str, over: float, kept: bool) -> None:
    """An edge beyond the image by at most PCT_TOLERANCE points is clamped (a note),
    beyond it refused; tested at the threshold and one step either side, on each edge."""
    box = {"x": 20.0, "y": 20.0, "width": 30.0, "height": 30.0}
    if edge == "left":
        box |= {"x": -over}
    elif edge == "top":
        box |= {"y": -over}
    elif edge == "right":
        box |= {"x": 70.0 + over}
    else:
        box |= {"y": 70.0 + over}
    if not kept:
        with pytest.raises(BoxGeometryError):
            box_from_percent(box)
        return
    coords, notes = box_from_percent(box)
    x0, y0, w, h = coords
    assert x0 >= 0 and y0 >= 0 and x0 + w <= 1 + 1e-9 and y0 + h <= 1 + 1e-9
    assert any("clamped" in n for n in notes) == (over > 0)


@pytest.mark.parametrize("field", ["x", "y", "width", "height"])
@pytest.mark.parametrize(("value", "pixel_like"), [
    (100.0, False), (100 + PCT_TOLERANCE, False), (100 + PCT_TOLERANCE + EPS, True),
    (250.0, True), (-(100 + PCT_TOLERANCE + EPS), None)])
def test_values_over_100_look_like_pixels(field: str, value: float,
                                          pixel_like: bool | None) -> None:
    """Any one value (size by magnitude) over 100 + PCT_TOLERANCE is refused as pixel
    units, whatever the others; at or under it the pixel message never appears."""
    box = {"x": 0.0, "y": 0.0, "width": 10.0, "height": 10.0, field: value}
    try:
        box_from_percent(box)
        refused = ""
    except BoxGeometryError as exc:
        refused = str(exc)
    if pixel_like is True or (pixel_like is None and field in ("width", "height")):
        assert "looks like pixel units" in refused
    else:
        assert "looks like pixel units" not in refused


@pytest.mark.parametrize(("value", "noted"), [
    (FRACTION_LIMIT - EPS, True), (FRACTION_LIMIT, True), (FRACTION_LIMIT + EPS, False)])
def test_fraction_note_threshold(value: float, noted: bool) -> None:
    """A box with every value <= FRACTION_LIMIT is kept with a note (maybe 0–1 units)."""
    coords, notes = box_from_percent({"x": 0.5, "y": 0.5, "width": value, "height": 0.5})
    assert coords[2] == round(value / 100, 6)
    assert any("0–1 fractions" in n for n in notes) == noted


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "abc", None])
def test_non_numbers_are_refused(bad: object) -> None:
    with pytest.raises(BoxGeometryError):
        box_from_percent({"x": bad, "y": 1, "width": 1, "height": 1})


@settings(max_examples=200, deadline=None)
@given(x=st.floats(0, 90), y=st.floats(0, 90), w=st.floats(1, 50), h=st.floats(1, 50),
       rot=st.floats(-720, 720), size=st.tuples(st.integers(10, 4000), st.integers(10, 4000)))
def test_rotated_box_is_the_pixel_bounding_box(x: float, y: float, w: float, h: float,
                                               rot: float, size: tuple[int, int]) -> None:
    """Rotation (degrees clockwise, screen axes, about the top-left corner) is applied in
    pixels; the result is the axis-aligned bounds, clamped to the image; a box entirely
    outside is refused. Reference: corners as complex numbers times e^(i rot)."""
    W, H = size
    origin = complex(x * W / 100, y * H / 100)
    turn = cmath.exp(1j * math.radians(rot))  # y down: +angle is clockwise on screen
    corners = [origin + c * turn for c in (0, w * W / 100, complex(w * W / 100, h * H / 100),
                                           complex(0, h * H / 100))]
    xs = [c.real * 100 / W for c in corners]
    ys = [c.imag * 100 / H for c in corners]
    x0, y0 = max(min(xs), 0), max(min(ys), 0)
    x1, y1 = min(max(xs), 100), min(max(ys), 100)
    value = {"x": x, "y": y, "width": w, "height": h, "rotation": rot}
    if rot % 360 == 0:
        return  # unrotated: covered above
    expected = [round(v / 100, 6) for v in (x0, y0, x1 - x0, y1 - y0)]
    if expected[2] <= 0 or expected[3] <= 0:
        with pytest.raises(BoxGeometryError):
            box_from_percent(value, size)
        return
    coords, _ = box_from_percent(value, size)
    assert coords == pytest.approx(expected, abs=2e-6)
    with pytest.raises(BoxGeometryError, match="needs the image size"):
        box_from_percent(value, None)


# ---- stored size against the file ------------------------------------------------------

sides = st.integers(1, 5000)


@settings(max_examples=300, deadline=None)
@given(fw=sides, fh=sides, k=st.floats(0.05, 20))
def test_scaled_copies_are_called_scaled(fw: int, fh: int, k: float) -> None:
    """A size scaled by any factor and rounded to whole pixels is "scaled" (or equal),
    never "different aspect"; its transpose is "transposed" unless square."""
    sw, sh = max(1, round(fw * k)), max(1, round(fh * k))
    if min(fw * k, fh * k) < 1:
        return  # a side rounded up from under one pixel keeps no aspect
    assert size_disagreement((sw, sh), (fw, fh)) in (None, "scaled")
    if fw != fh and sw != sh:
        assert size_disagreement((sh, sw), (fw, fh)) in ("transposed", "scaled")


@settings(max_examples=300, deadline=None)
@given(fw=st.integers(50, 5000), fh=st.integers(50, 5000), stretch=st.floats(1.1, 3))
def test_stretched_sizes_are_a_different_aspect(fw: int, fh: int, stretch: float) -> None:
    """Stretching one side by 10 % or more is never taken for equal or a scaled copy (it
    may be "transposed" when the stretched size happens to be the turned aspect)."""
    assert size_disagreement((round(fw * stretch), fh), (fw, fh)) in (
        "different aspect", "transposed")
    assert size_disagreement((fw, round(fh * stretch)), (fw, fh)) in (
        "different aspect", "transposed")


def _task_export(tmp_path: Path, stored: tuple[int, int] | None, rotation: float = 0.0
                 ) -> Path:
    item: dict[str, Any] = {"id": "o1", "from_name": "object", "to_name": "image",
                            "type": "rectanglelabels",
                            "value": {"x": 10, "y": 10, "width": 20, "height": 10,
                                      "rotation": rotation, "rectanglelabels": ["jug"]}}
    if stored:
        item |= {"original_width": stored[0], "original_height": stored[1]}
    path = tmp_path / "export.json"
    path.write_text(json.dumps([{"id": 1, "data": {"image": "images/a.jpg"},
                                 "annotations": [{"id": 1, "result": [item]}]}]))
    return path


def _jpeg(tmp_path: Path, size: tuple[int, int], orientation: int) -> None:
    (tmp_path / "images").mkdir(exist_ok=True)
    exif = Image.Exif()
    exif[0x0112] = orientation
    Image.new("RGB", size, (90, 90, 90)).save(tmp_path / "images" / "a.jpg",
                                              exif=exif.tobytes())


@pytest.mark.parametrize("orientation", range(1, 9))
@pytest.mark.parametrize(("stored", "kind"), [
    ("shown", None), ("raw", "transposed"), ("half", "scaled"), ("odd", "different aspect"),
    (None, None)])
def test_stored_size_against_the_file(tmp_path: Path, orientation: int, stored: str | None,
                                      kind: str | None) -> None:
    """A 300 x 200 JPEG at every orientation against stored sizes equal to its displayed
    size, its stored (unturned) size, half of it, or another aspect: the stored size is
    kept for the record and the box; each disagreement is one warning naming its kind."""
    _jpeg(tmp_path, (300, 200), orientation)
    shown = (200, 300) if orientation >= 5 else (300, 200)
    assert image_file_size(tmp_path, "images/a.jpg") == shown
    sizes = {"shown": shown, "raw": (shown[1], shown[0]),
             "half": (shown[0] // 2, shown[1] // 2), "odd": (shown[0], shown[0])}
    size = sizes[stored] if stored else None
    result = load_labelstudio(_task_export(tmp_path, size, rotation=90.0))
    (ann,) = result.annotations
    notes = [w for w in result.warnings if "stored size" in w]
    if kind is None:
        assert notes == []
    else:
        (note,) = notes
        assert f": {kind};" in note and f"{shown[0]} x {shown[1]} as displayed" in note
    assert (ann.width, ann.height) == (size or shown)
    # the rotated box was turned in the stored frame (or the file's when none is stored)
    frame = size or shown
    want, _ = box_from_percent({"x": 10, "y": 10, "width": 20, "height": 10,
                                "rotation": 90.0}, frame)
    (obj,) = ann.objects
    assert [obj.box.x, obj.box.y, obj.box.w, obj.box.h] == pytest.approx(want)


def test_items_storing_different_sizes_are_named(tmp_path: Path) -> None:
    path = _task_export(tmp_path, (300, 200))
    tasks = json.loads(path.read_text())
    second = dict(tasks[0]["annotations"][0]["result"][0], id="o2", original_width=600,
                  original_height=400)
    tasks[0]["annotations"][0]["result"].append(second)
    path.write_text(json.dumps(tasks))
    result = load_labelstudio(path)
    assert any("items store different sizes (300 x 200, 600 x 400)" in w
               for w in result.warnings)


def test_unreadable_image_file_gives_no_size(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "a.jpg").write_bytes(b"\xff\xd8\xff\xe1 not really")
    assert image_file_size(tmp_path, "images/a.jpg") is None
    assert image_file_size(tmp_path, "../a.jpg") is None
    # an export whose rotated box needs it drops that box with a reason, never crashes
    result = load_labelstudio(_task_export(tmp_path, None, rotation=30.0))
    assert any("needs the image size" in str(d) for d in result.dropped)
    (ann,) = result.annotations  # the image is kept without that box
    assert ann.objects == ()
