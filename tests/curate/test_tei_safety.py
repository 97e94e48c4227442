"""``export tei`` on markup that does not map cleanly (an unmatched or nested ``<note>``)
and on an --out holding temporary files of a killed run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from lxml import etree

from heritage_eval.cli.main import main
from heritage_eval.curate.tei.document import transcription
from heritage_eval.curate.tei.markup import markup_problems

ROOT = Path(__file__).resolve().parents[2]
DEMO_AB = ROOT / "data" / "demo" / "ancient_bench"
IMAGE = DEMO_AB / "seals" / "images" / "seals_000001.jpg"


def _release(root: Path, gts: list[str]) -> Path:
    """One medium ``seals`` with one image per ground truth (a.jpg, b.jpg, …)."""
    folder = root / "seals"
    (folder / "images").mkdir(parents=True)
    lines = []
    for i, gt in enumerate(gts):
        name = f"{chr(ord('a') + i)}.jpg"
        shutil.copyfile(IMAGE, folder / "images" / name)
        lines.append(json.dumps({"image": name, "human_gt": gt}, ensure_ascii=False))
    (folder / "conv.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def _tei(data: Path, out: Path, *extra: str) -> int:
    return main(["export", "tei", "--data", str(data), "--out", str(out), "--no-progress",
                 *extra])


def test_markup_problems_name_each_tag_and_offset() -> None:
    assert markup_problems("a<note>b</note><ignore>c</ignore>") == []
    # offsets counted by hand: "a" is 0, "<note>" starts at 1
    assert markup_problems("a<note>b") == [
        "unmatched '<note>' at character 1 (written as literal text)"]
    # outer <note> unmatched, the inner pair matched: half markup
    assert markup_problems("<note>x<note>y</note>") == [
        "unmatched '<note>' at character 0 (written as literal text)"]
    assert markup_problems("<note>x<note>y</note>z</note>") == [
        "'<note>' nested inside another <note> at character 7"]


def test_unbalanced_and_nested_notes_are_written_and_counted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gts = ["長樂", "長<note>樂", "<note>長<note>樂</note>未</note>", "未央</ignore>"]
    data = _release(tmp_path / "rel", gts)
    out = tmp_path / "tei"
    assert _tei(data, out) == 1
    captured = capsys.readouterr()
    conv = data / "seals" / "conv.jsonl"
    for line in (2, 3, 4):
        assert f"{conv}:{line}: " in captured.err
    assert f"{conv}:1:" not in captured.err
    assert "3 document(s) with unmatched or nested" in captured.out
    docs = sorted(p.name for p in (out / "seals").glob("*.xml"))
    assert docs == ["a.xml", "b.xml", "c.xml", "d.xml"]  # all still written
    for name, gt in zip(docs, gts, strict=True):  # and each reads back as its GT
        assert transcription(etree.parse(str(out / "seals" / name)).getroot()) == gt


def test_clean_release_still_exits_0(tmp_path: Path) -> None:
    assert _tei(_release(tmp_path / "rel", ["長<note>樂</note>"]), tmp_path / "tei") == 0


def test_temporaries_of_a_killed_run_do_not_block_and_are_removed(tmp_path: Path) -> None:
    data = _release(tmp_path / "rel", ["長樂", "未央"])
    out = tmp_path / "tei"
    (out / "seals").mkdir(parents=True)
    stale = out / "seals" / ".a.xml.k3j9x2.tmp"  # core.store.atomic_write_text's name
    stale.write_text("<half")
    assert _tei(data, out) == 0  # only a temporary in --out: not "non-empty"
    assert not stale.exists()
    assert sorted(p.name for p in (out / "seals").iterdir()) == ["a.xml", "b.xml"]
    # with documents present: refused without --overwrite, cleaned with it
    stale.write_text("<half")
    keep = out / "seals" / "notes.tmp"  # not the writer's pattern: kept
    keep.write_text("mine")
    assert _tei(data, out) == 2
    assert _tei(data, out, "--overwrite") == 0
    assert not stale.exists() and keep.read_text() == "mine"
