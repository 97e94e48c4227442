"""The one sample record: published JSON Schema in sync, round trip, image references."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image
from pydantic import ValidationError

import heritage_eval
from heritage_eval.core.record import (
    SampleRecord,
    TurnRecord,
    image_ref,
    sample_json_schema,
)
from heritage_eval.core.records_io import read_records

SCHEMA_FILE = Path(heritage_eval.__file__).parent / "schemas" / "sample-1.json"


def test_published_schema_is_the_generated_one() -> None:
    # regenerate with: python -c "…sample_json_schema()…" (see the README, 'Sample record')
    assert json.loads(SCHEMA_FILE.read_text(encoding="utf-8")) == sample_json_schema()
    props = sample_json_schema()["properties"]
    assert props["schema"]["const"] == "heritage-eval/sample/1"
    assert {"id", "benchmark", "model", "groups", "state", "scores", "turns", "answer",
            "reference", "error", "details"} <= set(props)


def test_round_trip_and_image_reference(tmp_path: Path) -> None:
    img = tmp_path / "data" / "seals" / "a.png"
    img.parent.mkdir(parents=True)
    Image.new("RGB", (300, 120), "white").save(img)
    ref = image_ref(img, tmp_path / "data", role="target", sent=[150, 60])
    # the header gives the original size; the path is relative to the data root
    assert (ref.path, ref.width, ref.height, ref.sent_width) == ("seals/a.png", 300, 120, 150)
    rec = SampleRecord(id="a", benchmark="ancient-bench", model="rapidocr", state="scored",
                       groups={"medium": "Seal"}, scores={"ned_score": 0.5},
                       turns=[TurnRecord(prompt="轉寫", images=[ref])], reference="天地")
    line = rec.to_json_line()
    assert line.startswith('{"schema": "heritage-eval/sample/1"') and "轉寫" in line
    assert SampleRecord.model_validate_json(line) == rec
    with pytest.raises(ValidationError):  # an unknown field is refused, not dropped
        SampleRecord.model_validate({**json.loads(line), "outcome": "scored"})


def test_reading_skips_bad_lines_with_file_and_line(tmp_path: Path) -> None:
    rec = SampleRecord(id="a", benchmark="b", model="m", state="error", error="x")
    p = tmp_path / "samples.jsonl"
    p.write_text(rec.to_json_line() + "\n" + '{"schema": "heritage-eval/sample/9"}\n'
                 + rec.to_json_line()[:20] + "\n")  # a truncated last line
    warnings: list[str] = []
    assert [r.id for r in read_records(p, warnings)] == ["a"]
    assert [w.split(": ")[0] for w in warnings] == [f"{p}:2", f"{p}:3"]


@pytest.mark.parametrize(("path", "root"), [
    ("a/b.png", "."), ("/r/a/./b.png", "/r/"), ("/r", "/r"), ("/r/a/../b.png", "/r/a"),
    ("x.png", None), ("/r//a//b.png", "/r//"), ("/r/ab/c", "/r/a"), ("/r/a/b/", "/r/a"),
    ("/", "/"), ("/a/b", "/")])
def test_relative_image_path_equals_relpath_formula(path: str, root: str | None) -> None:
    # the reference is the formula relative_image_path used before issue 11:
    # Path(os.path.relpath(abspath, root)).as_posix() under the root, else absolute
    import os

    from heritage_eval.core.record import relative_image_path

    p = os.path.abspath(path)
    expected = Path(p).as_posix()
    if root is not None:
        base = os.path.abspath(root)
        if p == base or p.startswith(base + os.sep):
            expected = Path(os.path.relpath(p, base)).as_posix()
    assert relative_image_path(path, root) == expected
