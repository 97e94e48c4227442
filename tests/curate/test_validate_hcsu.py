"""``validate hcsu``: the real sample and the demo set (K-way feasibility by hand), and
one synthetic bad input per check with its exact ``file:line`` and code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from heritage_eval.benchmarks.hcsu.discrimination import DEFAULT_K
from heritage_eval.cli.main import main
from heritage_eval.curate.validate import cli
from heritage_eval.curate.validate.hcsu import validate_hcsu
from heritage_eval.curate.validate.imagecheck import DEFAULT_PHASH_DISTANCE
from tests.conftest import realdata

REAL = realdata("hcsu")
DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "hcsu"


def _record(filename: str, **over: Any) -> dict[str, Any]:
    style = filename.split("/")[0]
    calligrapher, script = style.split("-")
    rec = {"filename": filename, "char": filename.split("/")[1][0],
           "calligrapher": calligrapher, "script_type": script, "quality": "clear",
           "description": f"style of {style}"}
    rec.update(over)
    return {k: v for k, v in rec.items() if v is not None}


def _dataset(root: Path, records: list[dict[str, Any]], images: list[str]) -> Path:
    """``bei_annotations.json`` with one record per line (record i on line i + 2) and
    random-noise PNGs (distinct seeds: perceptual hashes far apart)."""
    for seed, rel in enumerate(images):
        path = root / "bei" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(seed)
        Image.fromarray(rng.integers(0, 256, (48, 48), dtype=np.uint8)).save(path)
    ann = root / "bei_annotations.json"
    ann.write_text("[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in records)
                   + "\n]\n", encoding="utf-8")
    return ann


FILES = ["甲-隶书/不_1.png", "甲-隶书/之_1.png", "甲-隶书/人_1.png",
         "乙-篆书/不_1.png", "乙-篆书/之_1.png", "乙-篆书/人_1.png"]


def _summary_line(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_defaults_mirror_the_benchmark() -> None:
    assert cli.HCSU_DEFAULT_K == DEFAULT_K
    assert cli.PHASH_DEFAULT == DEFAULT_PHASH_DISTANCE


def test_real_sample_needs_k_2(capsys: pytest.CaptureFixture[str]) -> None:
    # 4 classes, 2 per domain: the domain pool offers 1 distractor class per target,
    # so the paper's K = 8 (7 distractors) is infeasible and K = 2 is the largest.
    assert main(["validate", "hcsu", "--data", str(REAL), "--no-progress"]) == 1
    out = _summary_line(capsys)
    assert out == [
        f"{REAL / 'bei_annotations.json'}: error[k-infeasible]: K=8 needs 7 distractor "
        "classes per target, but domain Bei offers only 1 for Bei/佚名-隶书, Bei/李斯-篆书; "
        "lower --k to at most 2 or use --distractor-pool all",
        f"{REAL / 'tie_annotations.json'}: error[k-infeasible]: K=8 needs 7 distractor "
        "classes per target, but domain Tie offers only 1 for Tie/文徵明-楷书, "
        "Tie/王羲之-行书; lower --k to at most 2 or use --distractor-pool all",
        # 27 + 28 Bei and 27 + 27 Tie images (realdata README)
        f"hcsu {REAL}: 2 errors, 0 warnings (checked 2 files, 109 records, 109 images, "
        "4 classes)"]
    assert main(["validate", "hcsu", "--data", str(REAL), "--k", "2", "--no-progress"]) == 0
    assert _summary_line(capsys) == [f"hcsu {REAL}: 0 errors, 0 warnings (checked 2 files, "
                                     "109 records, 109 images, 4 classes)"]


def test_demo_k_limits_by_pool(capsys: pytest.CaptureFixture[str]) -> None:
    # 5 font classes per domain: 4 distractors in the domain (K <= 5), 9 in both.
    assert main(["validate", "hcsu", "--data", str(DEMO), "--k", "5", "--no-progress"]) == 0
    assert _summary_line(capsys)[-1] == (f"hcsu {DEMO}: 0 errors, 0 warnings (checked 2 "
                                         "files, 140 records, 140 images, 10 classes)")
    assert main(["validate", "hcsu", "--data", str(DEMO), "--k", "6", "--no-progress"]) == 1
    out = _summary_line(capsys)
    assert out[0].startswith(f"{DEMO / 'bei_annotations.json'}: error[k-infeasible]: K=6 "
                             "needs 5 distractor classes per target, but domain Bei ")
    assert out[1].startswith(f"{DEMO / 'tie_annotations.json'}: error[k-infeasible]: K=6 ")
    assert "offers only 4 for" in out[0] and "lower --k to at most 5" in out[0]
    assert main(["validate", "hcsu", "--data", str(DEMO), "--k", "6", "--distractor-pool",
                 "all", "--no-progress"]) == 0


def test_missing_field_and_missing_image_and_unannotated(tmp_path: Path) -> None:
    records = [_record(f) for f in FILES]
    records[2] = _record(FILES[2], quality=None)                 # line 4: no 'quality'
    records.append(_record("乙-篆书/山_1.png"))                    # line 8: no image file
    ann = _dataset(tmp_path, records, [*FILES, "乙-篆书/水_1.png"])  # 水: no record
    report = validate_hcsu(tmp_path, k=2, progress=False)
    found = [(Path(f.file).name, f.line, f.level, f.code) for f in report.sorted_findings()]
    # sorted by path: ".../bei/乙-篆书/水_1.png" < ".../bei_annotations.json" ('/' < '_')
    assert found == [("水_1.png", None, "warning", "image-unannotated"),
                     ("bei_annotations.json", 4, "error", "field-missing"),
                     ("bei_annotations.json", 8, "error", "image-missing")]
    messages = [f.message for f in report.sorted_findings()][1:]
    assert messages[0].startswith("field 'quality': Field required (required: filename, "
                                  "char, calligrapher, script_type, quality)")
    missing = (tmp_path / "bei" / "乙-篆书" / "山_1.png").resolve()
    assert messages[1] == f"annotation without image: {missing}"
    assert report.sorted_findings()[1].file == str(ann)


def test_class_too_small_and_duplicate_image(tmp_path: Path) -> None:
    files = [*FILES, "丙-楷书/不_1.png"]  # class 丙 has one image only
    _dataset(tmp_path, [_record(f) for f in files], files)
    images = tmp_path / "bei" / "乙-篆书"
    # 乙/人 becomes an upscaled copy of 乙/不 (same perceptual hash)
    Image.open(images / "不_1.png").resize((96, 96)).save(images / "人_1.png")
    report = validate_hcsu(tmp_path, k=2, progress=False)
    found = [(f.line, f.level, f.code) for f in report.sorted_findings()]
    assert found == [(None, "error", "class-too-small"), (7, "warning", "duplicate-image")]
    assert report.sorted_findings()[0].message == (
        "class Bei/丙-楷书 has 1 usable image(s): a K-way question needs 2 (the target and "
        "another image of its class as the reference)")
    assert str(images / "不_1.png") in report.sorted_findings()[1].message


def test_corrupt_image_and_folder_mismatch_and_duplicate_record(tmp_path: Path) -> None:
    records = [_record(f) for f in FILES]
    records[4] = _record(FILES[4], calligrapher="丁")     # line 6: lies in 乙-篆书/
    records.append(_record(FILES[0]))                      # line 8: same file again
    _dataset(tmp_path, records, FILES)
    bad = tmp_path / "bei" / FILES[1]
    bad.write_bytes(bad.read_bytes()[:120])                # line 3: truncated PNG
    report = validate_hcsu(tmp_path, k=2, progress=False)
    found = [(f.line, f.level, f.code) for f in report.sorted_findings()]
    # class 丁-篆书 holds one image (line 6's): too small (file-level finding, first);
    # 甲-隶书 keeps 2 usable images (不 once, 人; 之 is corrupt)
    assert found == [(None, "error", "class-too-small"), (3, "error", "image-corrupt"),
                     (6, "warning", "class-folder-mismatch"), (8, "error", "duplicate-record")]
    assert "class Bei/丁-篆书 has 1 usable image(s)" in report.sorted_findings()[0].message


def test_malformed_annotation_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ann = _dataset(tmp_path, [_record(f) for f in FILES[:2]], FILES[:2])
    lines = ann.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace('"char"', "char")  # line 3: an unquoted key
    ann.write_text("\n".join(lines), encoding="utf-8")
    assert main(["validate", "hcsu", "--data", str(tmp_path), "--k", "2",
                 "--no-progress"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{ann}:3: error[json-malformed]: malformed JSON (Expecting "
                             "property name enclosed in double quotes: column ")


def test_usage_error_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "hcsu", "--data", str(tmp_path)]) == 2
    assert "no HCSU data under" in capsys.readouterr().err
    assert main(["validate", "hcsu", "--data", str(tmp_path / "missing")]) == 2
    with pytest.raises(SystemExit) as exc:
        main(["validate", "hcsu", "--data", str(tmp_path), "--k", "1"])
    assert exc.value.code == 2
