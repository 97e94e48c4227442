"""``validate ancient-bench``: the real sample, the bundled demo, and one synthetic bad
input per check, each asserting the exact ``file:line: level[code]`` of the finding."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from heritage_eval.cli.main import main
from heritage_eval.curate.validate.ancient_bench import validate_release
from heritage_eval.curate.validate.report import Finding
from tests.conftest import realdata

REAL = realdata("ancient_bench")
DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "ancient_bench"


def _noise(path: Path, seed: int, size: int = 64) -> None:
    """A random greyscale PNG (distinct seeds give perceptual hashes far apart)."""
    rng = np.random.default_rng(seed)
    Image.fromarray(rng.integers(0, 256, (size, size), dtype=np.uint8)).save(path)


def _release(root: Path, lines: list[str], n_images: int = 3,
             category: str = "inscription_rubbings") -> Path:
    folder = root / category
    (folder / "images").mkdir(parents=True)
    for i in range(n_images):
        _noise(folder / "images" / f"{chr(97 + i)}.png", seed=i)
    (folder / "conv.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "conv.jsonl"


def _line(image: str, gt: str) -> str:
    return json.dumps({"image": image, "human_gt": gt}, ensure_ascii=False)


def _codes(findings: list[Finding]) -> list[tuple[str, int | None, str, str]]:
    return [(Path(f.file).name, f.line, f.level, f.code) for f in findings]


def test_real_sample_passes_with_three_genuine_simplified_forms(
        capsys: pytest.CaptureFixture[str]) -> None:
    # The only findings on the real sample are three simplified code points in the
    # calligraphy transcriptions, checked by hand against OpenCC's STCharacters table:
    # 内 -> 內 (Lantingxu p2), 将 -> 將 (p4; SOURCES.md lists 将 as a kept written form),
    # 来 -> 來 (Wen Zhengming). 于 and 咸 also change under s2t but are valid traditional
    # characters (their s2t candidates include themselves), so they are not reported.
    assert main(["validate", "ancient-bench", "--data", str(REAL), "--no-progress"]) == 0
    out = capsys.readouterr().out.splitlines()
    conv = REAL / "calligraphys" / "conv.jsonl"
    assert out[:3] == [
        f"{conv}:2: warning[simplified-form]: simplified form(s) in a traditional "
        "transcription: 内→內 (OpenCC s2t); keep only if the artifact writes them so",
        f"{conv}:3: warning[simplified-form]: simplified form(s) in a traditional "
        "transcription: 将→將 (OpenCC s2t); keep only if the artifact writes them so",
        f"{conv}:4: warning[simplified-form]: simplified form(s) in a traditional "
        "transcription: 来→來 (OpenCC s2t); keep only if the artifact writes them so"]
    # 3 media folders; 4 + 10 + 20 lines, one image each (README of the real data)
    assert out[3] == (f"ancient-bench {REAL}: 0 errors, 3 warnings (checked 3 files, "
                      "34 lines, 34 images)")
    assert len(out) == 4


def test_bundled_demo_passes(capsys: pytest.CaptureFixture[str]) -> None:
    # The demo's Lantingxu line 1 writes 群 (s2t: 羣 only), the one finding.
    assert main(["validate", "ancient-bench", "--data", str(DEMO), "--no-progress"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{DEMO / 'calligraphys' / 'conv.jsonl'}:1: warning[simplified-form]: simplified "
        "form(s) in a traditional transcription: 群→羣 (OpenCC s2t); keep only if the "
        "artifact writes them so",
        f"ancient-bench {DEMO}: 0 errors, 1 warning (checked 9 files, 27 lines, 27 images)"]


def test_malformed_line_is_reported_with_its_number_and_the_rest_checked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conv = _release(tmp_path, [_line("a.png", "君諱全"), _line("b.png", "字景完"),
                               '{"image": "c.png" "human_gt": "x"}',
                               _line("d.png", "敦煌")])
    report_file = tmp_path / "out" / "report.json"
    rc = main(["validate", "ancient-bench", "--data", str(tmp_path), "--no-progress",
               "--json", str(report_file)])
    out = capsys.readouterr().out.splitlines()
    assert rc == 1
    # Python's JSON error: the ',' was expected where the second key's quote stands,
    # 0-based index 18 of the line -> column 19.
    assert out[0] == (f"{conv}:3: error[json-malformed]: malformed JSON (Expecting ',' "
                      "delimiter: column 19)")
    # line 4 was still checked: its image d.png does not exist
    assert out[1].startswith(f"{conv}:4: error[image-missing]: image file not found: ")
    # c.png exists but line 3 could not name it
    assert out[2] == (f"{conv.parent / 'images' / 'c.png'}: warning[image-unlisted]: no line "
                      f"of {conv} names this image: it is never evaluated")
    assert out[3] == (f"ancient-bench {tmp_path}: 2 errors, 1 warning (checked 1 file, "
                      "4 lines, 2 images)")
    data = json.loads(report_file.read_text(encoding="utf-8"))
    assert data["errors"] == 2 and data["warnings"] == 1
    assert data["codes"] == {"error[image-missing]": 1, "error[json-malformed]": 1,
                             "warning[image-unlisted]": 1}
    assert data["findings"][0] == {"level": "error", "file": str(conv), "line": 3,
                                   "code": "json-malformed",
                                   "message": "malformed JSON (Expecting ',' delimiter: "
                                              "column 19)"}


def test_corrupt_png_is_an_error(tmp_path: Path) -> None:
    conv = _release(tmp_path, [_line("a.png", "君"), _line("b.png", "字")], n_images=2)
    png = conv.parent / "images" / "b.png"
    png.write_bytes(png.read_bytes()[:200])  # header intact, pixel data cut off
    report = validate_release(tmp_path, progress=False)
    assert _codes(report.findings) == [("conv.jsonl", 2, "error", "image-corrupt")]


def test_not_an_image_and_too_large_header(tmp_path: Path) -> None:
    conv = _release(tmp_path, [_line("a.png", "君"), _line("b.png", "字")], n_images=1)
    (conv.parent / "images" / "b.png").write_bytes(b"not an image at all")
    big = tmp_path / "seals"
    (big / "images").mkdir(parents=True)
    # 21,000 x 21,000 = 441 Mpx > the 400 Mpx decode limit; refused from the header
    Image.new("1", (21_000, 21_000)).save(big / "images" / "big.png")
    (big / "conv.jsonl").write_text(_line("big.png", "印") + "\n", encoding="utf-8")
    report = validate_release(tmp_path, progress=False)
    assert sorted(_codes(report.findings)) == [
        ("conv.jsonl", 1, "error", "image-too-large"),
        ("conv.jsonl", 2, "error", "image-unreadable")]


def test_empty_ground_truth_after_normalisation(tmp_path: Path) -> None:
    # "。，" is punctuation only: the official normalisation drops it, nothing is left
    # (the check also reports the stray punctuation itself, as a warning).
    _release(tmp_path, [_line("a.png", "君"), _line("b.png", "。，"), _line("c.png", "  ")])
    report = validate_release(tmp_path, progress=False)
    assert _codes(report.findings) == [("conv.jsonl", 2, "error", "gt-empty"),
                                       ("conv.jsonl", 2, "warning", "stray-punctuation"),
                                       ("conv.jsonl", 3, "error", "gt-empty")]


def test_unbalanced_note_and_unknown_tag(tmp_path: Path) -> None:
    _release(tmp_path, [_line("a.png", "<note>眉批\n正文"),
                        _line("b.png", "正文</ignore>"),
                        _line("c.png", "□<unrecognisable>字")],
             category="traditional_chinese_book_editions")
    report = validate_release(tmp_path, progress=False)
    assert _codes(report.findings) == [("conv.jsonl", 1, "error", "tag-unbalanced"),
                                       ("conv.jsonl", 2, "error", "tag-unbalanced"),
                                       ("conv.jsonl", 3, "error", "tag-unknown")]
    by_line = {f.line: f.message for f in report.findings}
    assert by_line[1] == "<note> is never closed"
    assert by_line[2] == "</ignore> without an opening tag (column 3 of the text)"
    assert by_line[3].startswith("<unrecognisable> is not a tag of the standard (did you "
                                 "mean <unrecognizable>?)")


def test_simplified_character_in_traditional_text(tmp_path: Path) -> None:
    # 后 is a valid traditional character (s2t candidates 後 后): not reported;
    # 时 has only 時, 国 only 國.
    _release(tmp_path, [_line("a.png", "皇后之時"), _line("b.png", "时国")], n_images=2)
    report = validate_release(tmp_path, progress=False)
    assert [(f.line, f.level, f.code, f.message) for f in report.findings] == [
        (2, "warning", "simplified-form", "simplified form(s) in a traditional "
         "transcription: 时→時, 国→國 (OpenCC s2t); keep only if the artifact writes "
         "them so")]


def test_duplicated_image_names_both_files(tmp_path: Path) -> None:
    conv = _release(tmp_path, [_line("a.png", "君"), _line("b.png", "字"),
                               _line("c.png", "景")])
    images = conv.parent / "images"
    # c.png becomes a 2x upscaled copy of a.png: same perceptual hash
    Image.open(images / "a.png").resize((128, 128)).save(images / "c.png")
    report = validate_release(tmp_path, progress=False)
    assert len(report.findings) == 1
    f = report.findings[0]
    assert (f.file, f.line, f.level, f.code) == (str(conv), 3, "warning", "duplicate-image")
    assert f.message.startswith(f"{images / 'c.png'} looks like {images / 'a.png'} "
                                f"({conv}:1; perceptual hashes ")


def test_symbol_look_alikes_and_repeated_line(tmp_path: Path) -> None:
    _release(tmp_path, [_line("a.png", "子＝孫▢"), _line("b.png", "上帝"),
                        _line("a.png", "重")], n_images=2, category="bamboo_wooden_slips")
    report = validate_release(tmp_path, progress=False)
    assert [(f.line, f.code, f.message) for f in report.findings] == [
        (1, "placeholder-form", "'▢' (U+25A2): the damage placeholder is □ (U+25A1, "
                                "§4.2.2); a look-alike is scored as a different character"),
        (1, "repetition-mark-form", "'＝' (U+FF1D) for '=': repetition marks are written "
                                    "'=' and '-' (§4.2.2; the evaluator keeps only these)"),
        (3, "duplicate-entry", "image 'a.png' is already named on line 1")]


def test_unknown_category_and_outside_reference(tmp_path: Path) -> None:
    conv = _release(tmp_path, [_line("../../../etc/passwd", "君")], n_images=0,
                    category="posters")
    report = validate_release(tmp_path, progress=False)
    assert _codes(report.findings) == [("conv.jsonl", None, "warning", "unknown-category"),
                                       ("conv.jsonl", 1, "error", "path-outside")]
    assert report.findings[0].file == str(conv)


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "ancient-bench", "--data", str(tmp_path / "nope")]) == 2
    assert "Ancient-Bench data folder not found" in capsys.readouterr().err
    category = tmp_path / "seals"
    category.mkdir()
    (category / "conv.jsonl").write_text(_line("a.png", "印") + "\n", encoding="utf-8")
    assert main(["validate", "ancient-bench", "--data", str(category)]) == 2
    assert "pass its parent (the release root)" in capsys.readouterr().err


def test_demo_copy_with_one_line_broken(tmp_path: Path) -> None:
    """A whole copied release: only the broken line is reported, the rest is clean."""
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root)
    conv = root / "seals" / "conv.jsonl"
    lines = conv.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1][:-2]  # cut the closing quote and brace of line 2
    conv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = validate_release(root, progress=False)
    errors = [f for f in report.findings if f.level == "error"]
    assert _codes(errors) == [("conv.jsonl", 2, "error", "json-malformed")]
    assert errors[0].file == str(conv)


def test_same_stem_two_extensions_is_a_warning(tmp_path: Path) -> None:
    # break-it finding: a.png and a.jpg share the sample id 'inscription_rubbings/a' and the
    # predictions file a.json; run renames the second 'a@2', validate said nothing
    conv = _release(tmp_path, [_line("a.png", "君"), _line("a.jpg", "字")], n_images=1)
    _noise(conv.parent / "images" / "a.jpg", seed=7)
    report = validate_release(tmp_path, progress=False)
    assert [(f.line, f.level, f.code) for f in report.findings] == [
        (2, "warning", "duplicate-stem")]
    assert "line 1" in report.findings[0].message
