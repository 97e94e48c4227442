"""The Wild domain's multi-part encrypted archive (``wild.zip.001`` …): read as one zip
without joining the parts on disk, decrypted with the password from an environment
variable, and loaded by the run commands; a missing part or a wrong password is a clear
error that never shows the password. The archive is made here with the Info-ZIP ``zip``
CLI (``zip -e -P``: ZipCrypto; Python's zipfile cannot write encrypted zips, pyzipper is
not installed) and cut with coreutils ``split``, as 7-Zip's "split to volumes" does."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from heritage_eval.benchmarks.hcsu.archive import (
    ArchiveError,
    MultiPartFile,
    archive_parts,
    extract_multipart,
    holds_wild_archive,
    wild_root,
)
from heritage_eval.cli.main import main

PASSWORD = "s3cret-wild-pw"
pytestmark = pytest.mark.skipif(shutil.which("zip") is None or shutil.which("split") is None,
                                reason="needs the 'zip' and 'split' command-line tools")


@pytest.fixture
def wild(tmp_path: Path) -> Path:
    """``tmp/release/wild.zip.001…`` of a ``wild/`` tree in the release layout: two Tie
    classes of 3 noise images each (incompressible, so the archive spans several parts)."""
    src = tmp_path / "src"
    records = []
    rng = random.Random(0)
    for style in ("甲-楷书", "乙-行书"):
        (src / "wild" / "tie" / style).mkdir(parents=True)
        for n, char in enumerate("永和九", 1):
            img = Image.frombytes("L", (48, 48), bytes(rng.randrange(256) for _ in range(2304)))
            img.save(src / "wild" / "tie" / style / f"{char}_{n}.png")
            who, script = style.split("-")
            records.append({"filename": f"{style}/{char}_{n}.png", "char": char,
                            "calligrapher": who, "script_type": script, "quality": "clear",
                            "description": f"style of {who}"})
    (src / "wild" / "tie_annotations.json").write_text(
        json.dumps(records, ensure_ascii=False), encoding="utf-8")
    subprocess.run(["zip", "-q", "-r", "-e", "-P", PASSWORD, "wild.zip", "wild"], cwd=src,
                   check=True)
    release = tmp_path / "release"
    release.mkdir()
    subprocess.run(["split", "-b", "4000", "-d", "-a", "3", "--numeric-suffixes=1",
                    str(src / "wild.zip"), str(release / "wild.zip.")], check=True)
    return release


def test_parts_read_as_one_stream(wild: Path, tmp_path: Path) -> None:
    parts = archive_parts(wild / "wild.zip.001")
    joined = (tmp_path / "src" / "wild.zip").read_bytes()
    assert len(parts) >= 4 and [p.name for p in parts][:2] == ["wild.zip.001", "wild.zip.002"]
    with MultiPartFile(parts) as f:
        assert f.read() == joined  # the byte-for-byte concatenation, in numeric order
        f.seek(-22, 2)  # the end-of-central-directory record (no comment): PK\x05\x06
        assert f.read(4) == b"PK\x05\x06"
        f.seek(3990)
        assert f.read(20) == joined[3990:4010]  # across the first part boundary


def test_extract_with_the_password(wild: Path, tmp_path: Path) -> None:
    target = tmp_path / "out"
    assert extract_multipart(wild / "wild.zip.001", target, PASSWORD) == []
    src = tmp_path / "src" / "wild"
    files = sorted(p.relative_to(src) for p in src.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(target) for p in target.rglob("*") if p.is_file())
    assert all((target / f).read_bytes() == (src / f).read_bytes() for f in files)
    assert len(files) == 7  # 6 images + tie_annotations.json, the top wild/ folder dropped


def test_errors_name_the_archive_never_the_password(wild: Path, tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="a password is required") as exc:
        extract_multipart(wild / "wild.zip.001", tmp_path / "a", None)
    assert "wild.zip" in str(exc.value)
    with pytest.raises(ArchiveError, match="wrong password") as exc:
        extract_multipart(wild / "wild.zip.001", tmp_path / "b", "not-it")
    assert "not-it" not in str(exc.value)
    (wild / "wild.zip.002").unlink()
    with pytest.raises(ArchiveError, match=r"part\(s\) wild.zip.002 missing") as exc:
        archive_parts(wild / "wild.zip.001")
    with pytest.raises(ArchiveError, match="not the first part"):
        archive_parts(wild / "wild.zip.003")


def test_wild_root_only_for_a_folder_without_its_own_layout(wild: Path, tmp_path: Path) -> None:
    assert holds_wild_archive(wild)
    assert wild_root(wild, tmp_path / "x", PASSWORD) == tmp_path / "x" / "wild"
    (wild / "tie").mkdir()  # a release folder of its own wins: nothing is extracted
    assert not holds_wild_archive(wild)
    assert wild_root(wild, tmp_path / "y", PASSWORD) == wild
    assert not (tmp_path / "y").exists()


def test_run_loads_the_wild_archive(wild: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("WILD_PW", PASSWORD)
    out = tmp_path / "run"
    assert main(["run", "hcsu-discrimination", "--data", str(wild), "--zip-password-env",
                 "WILD_PW", "--model", "baseline:image-similarity", "--k", "2",
                 "--out", str(out)]) == 0
    assert (out / "extracted" / "wild" / "tie" / "甲-楷书" / "永_1.png").is_file()
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["models"]["baseline:image-similarity"]["n_records"] == 6
    written = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert PASSWORD.encode() not in written
    assert PASSWORD not in capsys.readouterr().err
    # Without the password: a usage error naming the variable, exit 2.
    monkeypatch.delenv("WILD_PW")
    assert main(["run", "hcsu-discrimination", "--data", str(wild), "--zip-password-env",
                 "WILD_PW", "--model", "baseline:image-similarity", "--k", "2",
                 "--out", str(tmp_path / "run2")]) == 2
    assert "a password is required" in capsys.readouterr().err


def test_empty_parts_are_skipped(tmp_path: Path) -> None:
    # Parts of 3, 0, 4, 0 and 1 bytes read as the 8 bytes in order, seeks included.
    parts = []
    for n, data in enumerate((b"abc", b"", b"defg", b"", b"h"), 1):
        parts.append(tmp_path / f"x.zip.{n:03d}")
        parts[-1].write_bytes(data)
    assert [p.name for p in archive_parts(parts[0])] == [p.name for p in parts]
    with MultiPartFile(parts) as f:
        assert f.read() == b"abcdefgh"
        f.seek(3)
        assert f.read(2) == b"de"
        f.seek(-1, 2)
        assert f.read() == b"h"


def test_robustness_study_reads_the_wild_archive(wild: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # Table 4's conditions are made from the extracted Wild images: Wild (Raw) is
    # OUT/extracted/wild, and its Wild-Resize / canonical copies have every image.
    monkeypatch.setenv("WILD_PW", PASSWORD)
    out = tmp_path / "rob"
    assert main(["hcsu", "robustness", "--data", str(wild), "--zip-password-env", "WILD_PW",
                 "--model", "baseline:image-similarity", "--tasks", "discrimination",
                 "--k", "2", "--workers", "1", "--out", str(out)]) == 0
    rows = json.loads((out / "summary.json").read_text(encoding="utf-8"))["results"]
    assert [r["condition"] for r in rows] == ["Wild (Raw)", "Wild-Resize", "Origin"]
    assert rows[0]["data"] == str(out / "extracted" / "wild")
    for sub in ("wild-resize", "canonical"):
        assert len(list((out / "conditions" / sub / "tie").rglob("*.png"))) == 6
