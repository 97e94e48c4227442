"""Loader for the official release layout, including every kind of bad input.

Each bad line must become one sample with ``load_error`` naming ``file:line``; loading
never stops. Fixtures are written to a temporary folder by the tests themselves.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from heritage_eval.benchmarks.ancient_bench.loader import load_release
from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.records import build_record


def _png(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8), "white").save(path)


def _line(**item: object) -> bytes:
    return json.dumps(item, ensure_ascii=False).encode("utf-8")


@pytest.fixture()
def release_dir(tmp_path: Path) -> Path:
    seals = tmp_path / "seals"
    _png(seals / "a.png")                 # image beside conv.jsonl
    _png(seals / "images" / "b.png")      # image in images/
    _png(seals / "e.png")
    lines = [
        _line(image="a.png", human_gt="王未\n央印", script="seal", period="Han",
              institution="Museum X"),                       # 1 good, with metadata
        _line(image="b.png", human_gt="平舆"),               # 2 good, image in images/
        b'{"image": "c.png", "human_gt": ',                   # 3 malformed JSON
        b'{"image": "d.png", "human_gt": "\xff\xfe"}',        # 4 not UTF-8
        b"",                                                  # 5 blank: skipped
        _line(image="e.png", human_gt="  "),                 # 6 empty ground truth
        _line(image="missing.png", human_gt="翦"),           # 7 image file absent
        b"[1, 2]",                                            # 8 not an object
        _line(image="e.png"),                                 # 9 no human_gt
    ]
    (seals / "conv.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    oracle = tmp_path / "oracle_bone_artifacts"
    _png(oracle / "o1.jpg")
    (oracle / "conv.jsonl").write_bytes(_line(image="o1.jpg", human_gt="貞") + b"\n")
    return tmp_path


def test_good_lines_and_metadata(release_dir: Path) -> None:
    rel = load_release(release_dir)
    # Paper order: Oracle before Seal, whatever the folder names sort to.
    assert rel.categories == ["oracle_bone_artifacts", "seals"]
    by_id = {s.id: s for s in rel.samples}
    a = by_id["seals/a"]
    assert a.load_error is None and a.target == "王未\n央印"
    assert a.metadata == {"line": 1, "image_name": "a.png", "script": "seal",
                          "period": "Han", "institution": "Museum X"}
    assert Path(str(a.image)) == release_dir / "seals" / "a.png"
    b = by_id["seals/b"]
    assert b.load_error is None
    assert Path(str(b.image)) == release_dir / "seals" / "images" / "b.png"


def test_each_bad_line_is_one_error_sample(release_dir: Path) -> None:
    rel = load_release(release_dir)
    seals = [s for s in rel.samples if s.category == "seals"]
    conv = release_dir / "seals" / "conv.jsonl"
    # 9 physical lines, the blank one skipped -> 8 samples, 6 of them errors.
    assert len(seals) == 8
    errors = {s.metadata["line"]: s.load_error for s in seals if s.load_error}
    assert sorted(errors) == [3, 4, 6, 7, 8, 9]
    assert rel.n_load_errors == 6
    for line, reason in errors.items():
        assert reason is not None and reason.startswith(f"{conv}:{line}: ")
    assert "malformed JSON" in str(errors[3])
    assert "not valid UTF-8" in str(errors[4])
    assert "empty ground truth" in str(errors[6])
    assert "image file not found" in str(errors[7])
    assert "expected a JSON object" in str(errors[8])
    assert "human_gt" in str(errors[9])


def test_error_sample_becomes_error_row(release_dir: Path) -> None:
    rel = load_release(release_dir)
    bad = next(s for s in rel.samples if s.metadata["line"] == 7)
    row = build_record(bad, "m", "翦", None, NormalizationFlags())
    # Even a correct answer is not scored when the sample failed to load.
    assert row.state.value == "error" and row.ned_score is None
    assert row.error == bad.load_error


def test_ground_truth_without_images(release_dir: Path) -> None:
    # Scoring predictions needs only conv.jsonl: a missing image is not an error then.
    rel = load_release(release_dir, check_images=False)
    lines = sorted(s.metadata["line"] for s in rel.samples
                   if s.category == "seals" and s.load_error)
    assert lines == [3, 4, 6, 8, 9]


def test_select_limit_unknown(release_dir: Path, tmp_path: Path) -> None:
    rel = load_release(release_dir, categories=["Seal"], limit=2)
    assert rel.categories == ["seals"]
    assert [s.id for s in rel.samples] == ["seals/a", "seals/b"]
    with pytest.raises(ValueError, match="bronze_rubbings"):
        load_release(release_dir, categories=["Bronze"])
    with pytest.raises(FileNotFoundError):
        load_release(tmp_path / "nowhere")
    # A folder that is not one of the nine media is loaded, with a warning.
    extra = release_dir / "murals"
    _png(extra / "m.png")
    (extra / "conv.jsonl").write_bytes(_line(image="m.png", human_gt="壁") + b"\n")
    rel = load_release(release_dir)
    assert rel.categories[-1] == "murals"
    assert any("murals" in w for w in rel.warnings)


def test_ground_truth_empty_after_normalisation(release_dir: Path) -> None:
    # Only punctuation: non-empty on disk, empty once normalised -> error, not a 0/1 score.
    conv = release_dir / "oracle_bone_artifacts" / "conv.jsonl"
    conv.write_bytes(_line(image="o1.jpg", human_gt="。，") + b"\n")
    sample = load_release(release_dir, categories=["oracle"]).samples[0]
    row = build_record(sample, "m", "貞", None, NormalizationFlags())
    assert row.state.value == "error"
    assert f"{conv}:1" in str(row.error) and "empty after normalisation" in str(row.error)


def test_malformed_json_reason_reads_well(release_dir: Path) -> None:
    # Line 3 becomes an unterminated string; its opening quote is character 32 of the line
    # (counted by hand: '{"image": "c.png", "human_gt": ' is 31 characters).
    conv = release_dir / "seals" / "conv.jsonl"
    raw = conv.read_bytes().split(b"\n")
    raw[2] = b'{"image": "c.png", "human_gt": "abc'
    conv.write_bytes(b"\n".join(raw))
    bad = next(s for s in load_release(release_dir).samples if s.metadata["line"] == 3)
    # Python's msg is "Unterminated string starting at"; the column follows a colon, as
    # in Python's own str(exc), never "starting at at column".
    assert bad.load_error == (f"{conv}:3: malformed JSON "
                              "(Unterminated string starting at: column 32)")


def test_empty_conv_file_warns(release_dir: Path) -> None:
    conv = release_dir / "oracle_bone_artifacts" / "conv.jsonl"
    conv.write_bytes(b"\n\n")  # only blank lines
    rel = load_release(release_dir)
    assert rel.categories == ["oracle_bone_artifacts", "seals"]
    assert not [s for s in rel.samples if s.category == "oracle_bone_artifacts"]
    assert [w for w in rel.warnings if str(conv) in w] == [
        f"{conv} is empty (no sample lines): category 'oracle_bone_artifacts' has no samples"]


def test_wrong_data_path_hints(release_dir: Path) -> None:
    # A category folder instead of the release root: hint to pass its parent.
    with pytest.raises(FileNotFoundError, match="pass its parent") as info:
        load_release(release_dir / "seals")
    assert str(release_dir.resolve()) in str(info.value)
    # A file: said to be a file, not "not found".
    with pytest.raises(FileNotFoundError, match="is a file, not a folder"):
        load_release(release_dir / "seals" / "conv.jsonl")


def test_read_error_midway_ends_the_category_with_an_error_sample(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """conv.jsonl is read line by line: an I/O error after the first line keeps that
    line's sample and adds the category's one error sample (the file is not held whole)."""
    from heritage_eval.benchmarks.ancient_bench.loader import iter_category

    folder = tmp_path / "seals"
    (folder / "images").mkdir(parents=True)
    _png(folder / "images" / "a.png")
    conv = folder / "conv.jsonl"
    conv.write_bytes(_line(image="a.png", human_gt="王印") + b"\n"
                     + _line(image="b.png", human_gt="私印") + b"\n")

    class Failing:
        def __init__(self, fh: object) -> None:
            self.fh = fh

        def __enter__(self) -> Failing:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()  # type: ignore[attr-defined]

        def __iter__(self) -> Failing:
            return self

        def readline(self, size: int = -1) -> bytes:  # as the capped line reader asks
            line: bytes = self.fh.readline(size)  # type: ignore[attr-defined]
            if b"b.png" in line:
                raise OSError(5, "Input/output error")
            return line

        def __next__(self) -> bytes:
            line: bytes = self.fh.readline()  # type: ignore[attr-defined]
            if b"b.png" in line:
                raise OSError(5, "Input/output error")
            if not line:
                raise StopIteration
            return line

    from heritage_eval.benchmarks.ancient_bench import loader

    real_open = loader.open_regular  # the loader's one way to open conv.jsonl
    monkeypatch.setattr(loader, "open_regular", lambda p, *a, **k: Failing(real_open(p))
                        if Path(p) == conv else real_open(p, *a, **k))
    samples = list(iter_category(folder, notes=False))
    assert [s.id for s in samples] == ["seals/a", "seals/conv.jsonl"]
    assert samples[0].load_error is None
    assert samples[1].load_error is not None and "Input/output error" in samples[1].load_error
