"""Outputs of a canonicalized tree follow their sources: an output is reused only when it
was made from the source file that is there now (``canonical_sources``); an edited,
switched or deleted source never leaves an old image behind.

Reference for every check: a fresh ``canonicalize_tree`` of the same source into an
empty folder; the re-used folder must hold the same image and annotation bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from PIL import Image

from heritage_eval.benchmarks.hcsu.canonical_batch import TreeReport, Variant, canonicalize_tree
from heritage_eval.benchmarks.hcsu.canonical_sources import SOURCES
from heritage_eval.benchmarks.hcsu.loader import load_hcsu
from heritage_eval.benchmarks.hcsu.studies import prepare_conditions

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "hcsu"
CLASSES = {"bei": ["cwTeX圆体字库-圆体", "cwTeX粗黑字库-黑体"],
           "tie": ["cwTeX楷体字库-楷书", "文鼎楷体字库-楷书"]}
CHARS = ("不_1", "世_1", "之_1")
NOT_COMPARED = {"canonicalize.json", SOURCES}  # run facts (timings, paths, inodes)


def make_source(root: Path, bmp: bool = False) -> Path:
    """A 12-image release from the bundled demo set (2 classes x 3 chars per domain);
    ``bmp``: the Tie images as BMP (uncompressed: an edit keeps the file size)."""
    for domain, classes in CLASSES.items():
        records = json.loads((DEMO / f"{domain}_annotations.json").read_text("utf-8"))
        names = {f"{c}/{ch}.png" for c in classes for ch in CHARS}
        keep = [r for r in records if r["filename"] in names]
        for name in sorted(names):
            out = root / domain / name
            out.parent.mkdir(parents=True, exist_ok=True)
            if bmp and domain == "tie":
                Image.open(DEMO / domain / name).convert("RGB").save(out.with_suffix(".bmp"))
            else:
                shutil.copyfile(DEMO / domain / name, out)
        if bmp and domain == "tie":
            keep = [dict(r, filename=r["filename"].replace(".png", ".bmp")) for r in keep]
        (root / f"{domain}_annotations.json").write_text(
            json.dumps(keep, ensure_ascii=False), encoding="utf-8")
    return root


def digests(root: Path) -> dict[str, str]:
    """SHA-256 of every file under ``root`` but the run-fact files."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name not in NOT_COMPARED}


def run(src: Path, dst: Path, variant: Variant = "canonical",
        save_stages: bool = False) -> TreeReport:
    return canonicalize_tree(src, dst, variant, workers=1, save_stages=save_stages,
                             progress=False)


def assert_as_fresh(src: Path, dst: Path, fresh: Path, variant: Variant = "canonical",
                    save_stages: bool = False) -> None:
    """``dst`` holds the bytes a fresh run of ``src`` writes into the empty ``fresh``."""
    run(src, fresh, variant, save_stages)
    assert digests(dst) == digests(fresh)


def rotate(path: Path) -> None:
    """Rotate ``path`` by 180 degrees in place (same name, same format)."""
    with Image.open(path) as im:
        im.load()
        rotated = im.rotate(180)
    rotated.save(path)


@pytest.mark.parametrize("variant", ["canonical", "wild-resize"])
def test_unchanged_rerun_writes_nothing(tmp_path: Path, variant: Variant) -> None:
    src, dst = make_source(tmp_path / "src"), tmp_path / "dst"
    first = run(src, dst, variant, save_stages=True)
    assert (first.written, first.skipped, first.remade, first.removed) == (12, 0, 0, 0)
    before = {p: p.stat().st_mtime_ns for p in dst.rglob("*") if p.name != "canonicalize.json"}
    again = run(src, dst, variant, save_stages=True)
    assert (again.written, again.skipped, again.remade, again.removed) == (0, 12, 0, 0)
    # no image, stage, annotation copy or source record was written again
    assert {p: p.stat().st_mtime_ns for p in dst.rglob("*")
            if p.name != "canonicalize.json"} == before
    assert_as_fresh(src, dst, tmp_path / "fresh", variant, save_stages=True)


def test_in_place_edit_is_remade(tmp_path: Path) -> None:
    src, dst = make_source(tmp_path / "src"), tmp_path / "dst"
    run(src, dst, save_stages=True)
    edited = src / "bei" / CLASSES["bei"][0] / "不_1.png"
    rotate(edited)
    report = run(src, dst, save_stages=True)
    assert (report.written, report.skipped, report.remade) == (1, 11, 1)
    assert_as_fresh(src, dst, tmp_path / "fresh", save_stages=True)


def test_edit_keeping_size_and_mtime_is_remade(tmp_path: Path) -> None:
    """Same name, same byte size, mtime set back with os.utime: the change time (which
    utime cannot set) still tells the file was changed."""
    src, dst = make_source(tmp_path / "src", bmp=True), tmp_path / "dst"
    run(src, dst)
    edited = src / "tie" / CLASSES["tie"][0] / "之_1.bmp"
    old, old_bytes = edited.stat(), edited.read_bytes()
    rotate(edited)
    os.utime(edited, ns=(old.st_atime_ns, old.st_mtime_ns))
    now = edited.stat()
    assert (now.st_size, now.st_mtime_ns) == (old.st_size, old.st_mtime_ns)
    assert edited.read_bytes() != old_bytes
    report = run(src, dst)
    assert (report.written, report.skipped, report.remade) == (1, 11, 1)
    assert_as_fresh(src, dst, tmp_path / "fresh")


def test_touched_or_copied_source_is_remade(tmp_path: Path) -> None:
    """A new stat identity (touch; a copy of the folder) is another source: its outputs
    are made again (the bytes are not compared), and come out as a fresh run's."""
    src, dst = make_source(tmp_path / "src"), tmp_path / "dst"
    run(src, dst)
    os.utime(src / "tie" / CLASSES["tie"][1] / "世_1.png")
    report = run(src, dst)  # one source touched: that one output remade
    assert (report.written, report.skipped, report.remade) == (1, 11, 1)
    copy = tmp_path / "copy"
    shutil.copytree(src, copy)
    report = run(copy, dst)  # every path differs: all 12 remade
    assert (report.written, report.skipped, report.remade) == (12, 0, 12)
    assert (dst / SOURCES).read_text("utf-8").count(str(copy)) == 12  # record updated
    assert_as_fresh(copy, dst, tmp_path / "fresh")


def test_other_data_folder_replaces_every_output(tmp_path: Path) -> None:
    src, dst = make_source(tmp_path / "src"), tmp_path / "dst"
    run(src, dst)
    other = make_source(tmp_path / "other")
    for png in sorted(other.rglob("*.png")):
        rotate(png)
    # one class less (with its records) in the other folder
    gone = CLASSES["tie"][1]
    shutil.rmtree(other / "tie" / gone)
    ann = other / "tie_annotations.json"
    records = json.loads(ann.read_text("utf-8"))
    ann.write_text(json.dumps([r for r in records if not r["filename"].startswith(gone)],
                              ensure_ascii=False), encoding="utf-8")
    report = run(other, dst)
    assert (report.written, report.skipped, report.remade, report.removed) == (9, 0, 9, 3)
    assert not (dst / "tie" / gone).exists()
    assert_as_fresh(other, dst, tmp_path / "fresh")
    assert json.loads((dst / "canonicalize.json").read_text("utf-8"))["source"] == str(
        other.resolve())


def test_deleted_sources_leave_no_output(tmp_path: Path) -> None:
    src, dst = make_source(tmp_path / "src"), tmp_path / "dst"
    run(src, dst, save_stages=True)
    (src / "bei" / CLASSES["bei"][1] / "世_1.png").unlink()  # its record stays listed
    shutil.rmtree(src / "tie" / CLASSES["tie"][0])  # a whole class
    (src / "bei_annotations.json").unlink()  # an annotation file
    report = run(src, dst, save_stages=True)
    assert (report.written, report.skipped, report.removed) == (0, 8, 4)
    assert not (dst / "bei_annotations.json").exists()
    assert not (dst / "_stages" / "bei" / CLASSES["bei"][1] / "masked" / "世_1.png").exists()
    assert_as_fresh(src, dst, tmp_path / "fresh", save_stages=True)
    # the loaded copy has exactly the images the source has
    assert [i.id for i in load_hcsu(dst).images] == [i.id for i in load_hcsu(src).images]


def test_edited_output_or_torn_record_is_remade(tmp_path: Path) -> None:
    src, dst = make_source(tmp_path / "src"), tmp_path / "dst"
    run(src, dst)
    (dst / "tie" / CLASSES["tie"][0] / "不_1.png").write_bytes(b"not the output")
    with (dst / SOURCES).open("a", encoding="utf-8") as fh:
        fh.write('{"out": "bei/torn')  # a run killed while writing its record
    report = run(src, dst)
    assert (report.written, report.skipped, report.remade) == (1, 11, 1)
    assert_as_fresh(src, dst, tmp_path / "fresh")


def test_outputs_without_record_are_remade(tmp_path: Path) -> None:
    """A folder made before the record existed: nothing in it can be trusted."""
    src, dst = make_source(tmp_path / "src"), tmp_path / "dst"
    run(src, dst)
    (dst / SOURCES).unlink()
    rotate(src / "bei" / CLASSES["bei"][0] / "之_1.png")
    report = run(src, dst)
    assert (report.written, report.skipped, report.remade) == (12, 0, 12)
    assert_as_fresh(src, dst, tmp_path / "fresh")


def test_robustness_conditions_follow_the_data(tmp_path: Path) -> None:
    """The reviewer's repro: every Wild image rotated between two runs of the study's
    condition step; Wild-Resize and Origin are then those of the new images."""
    wild, work = make_source(tmp_path / "wild"), tmp_path / "conditions"
    prepare_conditions(wild, work, workers=1)
    for png in sorted(wild.rglob("*.png")):
        rotate(png)
    folders = prepare_conditions(wild, work, workers=1)
    pairs: tuple[tuple[str, Variant], ...] = (("Wild-Resize", "wild-resize"),
                                              ("Origin", "canonical"))
    for name, variant in pairs:
        manifest = json.loads((folders[name] / "canonicalize.json").read_text("utf-8"))
        assert (manifest["written"], manifest["skipped"]) == (12, 0)
        assert_as_fresh(wild, folders[name], tmp_path / f"fresh-{variant}", variant)
