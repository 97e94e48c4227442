"""Loading the release layout: real sample, malformed records, missing images, zips."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from heritage_eval.benchmarks.hcsu.archive import ArchiveError
from heritage_eval.benchmarks.hcsu.loader import HcsuDataError, load_hcsu
from heritage_eval.benchmarks.hcsu.schema import HcsuDataset
from tests.hcsu.conftest import REAL


def test_real_sample_classes_and_counts(real: HcsuDataset) -> None:
    # Counts from ../shared/realdata/hcsu/SOURCES.md: 27 + 28 images (Bei), 27 + 27 (Tie).
    assert real.problems == []
    assert {k: len(c.images) for k, c in real.classes.items()} == {
        "Bei/佚名-隶书": 27, "Bei/李斯-篆书": 28, "Tie/文徵明-楷书": 27, "Tie/王羲之-行书": 27}
    assert real.domains() == ["Bei", "Tie"]
    cls = real.classes["Tie/王羲之-行书"]
    assert cls.calligrapher == "王羲之" and cls.script_type == "行书"
    assert cls.description is not None and cls.description.startswith("Eastern Jin running")
    img = next(i for i in real.images if i.id == "Bei/李斯-篆书/世_2")
    assert img.char == "世" and img.path.is_file() and img.record.birth_year == -284
    # an unknown extra field of the release is kept
    assert img.record.model_extra is not None and img.record.model_extra["calligrapher_en"]


def _mini_release(tmp_path: Path, records: list[dict[str, object]]) -> Path:
    root = tmp_path / "rel"
    (root / "tie" / "王羲之-行书").mkdir(parents=True, exist_ok=True)
    for name in ("不_1.png", "之_1.png"):
        shutil.copyfile(REAL / "tie" / "王羲之-行书" / name, root / "tie" / "王羲之-行书" / name)
    (root / "tie_annotations.json").write_text(json.dumps(records, ensure_ascii=False),
                                               encoding="utf-8")
    return root


def _rec(filename: str, **extra: object) -> dict[str, object]:
    return {"filename": filename, "char": filename.split("/")[-1][0], "calligrapher": "王羲之",
            "script_type": "行书", "quality": "clear", "description": "d", **extra}


def test_bad_records_and_missing_images_are_reported_not_fatal(tmp_path: Path) -> None:
    no_calligrapher = _rec("王羲之-行书/之_1.png")
    del no_calligrapher["calligrapher"]
    root = _mini_release(tmp_path, [
        _rec("王羲之-行书/不_1.png", museum="Palace Museum"),
        no_calligrapher,
        "not a record",
        _rec("王羲之-行书/永_1.png"),          # image not on disk
        _rec("王羲之-行书/不_1.png"),          # duplicate
    ])
    ds = load_hcsu(root)
    assert [i.id for i in ds.images] == ["Tie/王羲之-行书/不_1", "Tie/王羲之-行书/永_1"]
    assert ds.images[0].record.model_extra == {"museum": "Palace Museum"}
    assert ds.images[1].load_error is not None and "永_1.png" in ds.images[1].load_error
    # the missing image stays in its class (draws never move) with its load error: a
    # question that draws it is that sample's data error (schema.StyleClass.images)
    assert [(i.id, i.load_error is None) for i in ds.classes["Tie/王羲之-行书"].images] == \
        [("Tie/王羲之-行书/不_1", True), ("Tie/王羲之-行书/永_1", False)]
    joined = "\n".join(ds.problems)
    assert "record 1: invalid or missing field(s) calligrapher" in joined
    assert "record 2: not a JSON object" in joined
    assert "record 4: duplicate filename" in joined
    assert "image file not found" in joined


def test_unreadable_annotation_file_names_the_file(tmp_path: Path) -> None:
    root = _mini_release(tmp_path, [])
    (root / "tie_annotations.json").write_text("[{", encoding="utf-8")
    with pytest.raises(HcsuDataError, match=r"tie_annotations\.json"):
        load_hcsu(root)
    with pytest.raises(HcsuDataError, match="data folder not found"):
        load_hcsu(tmp_path / "nope")


@pytest.mark.skipif(shutil.which("zip") is None, reason="needs the 'zip' tool to encrypt")
def test_password_protected_zip(tmp_path: Path) -> None:
    src = _mini_release(tmp_path, [_rec("王羲之-行书/不_1.png"), _rec("王羲之-行书/之_1.png")])
    rel = tmp_path / "release"
    rel.mkdir()
    shutil.copyfile(src / "tie_annotations.json", rel / "tie_annotations.json")
    # ZipCrypto archive with a leading tie/ folder, as the release ships it
    subprocess.run(["zip", "-q", "-r", "-P", "s3cret", str(rel / "tie.zip"), "tie"],
                   cwd=src, check=True)
    with pytest.raises(ArchiveError, match=r"tie\.zip"):
        load_hcsu(rel, extract_to=tmp_path / "x1", password="wrong")
    with pytest.raises(ArchiveError, match="password"):
        load_hcsu(rel, extract_to=tmp_path / "x2", password=None)
    ds = load_hcsu(rel, extract_to=tmp_path / "x3", password="s3cret")
    assert [i.id for i in ds.images] == ["Tie/王羲之-行书/不_1", "Tie/王羲之-行书/之_1"]
    assert all(i.path.is_file() and i.load_error is None for i in ds.images)
    assert (tmp_path / "x3" / "tie" / "王羲之-行书" / "不_1.png").read_bytes() == \
        (src / "tie" / "王羲之-行书" / "不_1.png").read_bytes()
    assert "s3cret" not in "".join(p.read_text("utf-8", "ignore") for p in
                                   (tmp_path / "x3").rglob("*") if p.is_file()
                                   and p.suffix != ".png")


def test_annotation_file_with_a_bom_loads(tmp_path: Path) -> None:
    # files saved by Windows editors start with EF BB BF; json.loads rejected them before
    root = _mini_release(tmp_path, [])
    (root / "tie_annotations.json").write_text(
        json.dumps([_rec("王羲之-行书/不_1.png"), _rec("王羲之-行书/之_1.png")],
                   ensure_ascii=False), encoding="utf-8-sig")
    assert (root / "tie_annotations.json").read_bytes()[:3] == b"\xef\xbb\xbf"
    assert [i.id for i in load_hcsu(root).images] == ["Tie/王羲之-行书/不_1",
                                                      "Tie/王羲之-行书/之_1"]


def test_odd_records_and_files_are_reported(tmp_path: Path) -> None:
    root = _mini_release(tmp_path, [
        _rec("王羲之-行书/不_1.png", char=""),              # empty character
        _rec("../bei/佚名-隶书/不_1.png"),                   # leaves tie/
        _rec("/etc/passwd"),                                 # absolute
    ])
    shutil.copytree(REAL / "bei" / "佚名-隶书", root / "bei" / "佚名-隶书")
    ds = load_hcsu(root, domains=("Tie",))
    assert [i.id for i in ds.images] == ["Tie/王羲之-行书/不_1"]  # escapes refused
    joined = "\n".join(ds.problems)
    assert "record 0: empty 'char'" in joined
    assert "record 1: filename '../bei/佚名-隶书/不_1.png' leaves the Tie folder" in joined
    assert "record 2: filename '/etc/passwd' leaves the Tie folder" in joined
    # 之_1.png is on disk but no record names it
    assert any(p.endswith("之_1.png: image on disk has no record in tie_annotations.json "
                          "(warning: not used)") for p in ds.problems)
    # an empty list is a problem, not a silent empty domain
    (root / "bei_annotations.json").write_text("[]", encoding="utf-8")
    both = load_hcsu(root)
    assert any("bei_annotations.json: the annotation list is empty" in p
               for p in both.problems)


def test_unknown_generated_keys_are_reported(real: HcsuDataset, tmp_path: Path) -> None:
    from heritage_eval.api import run_config
    from heritage_eval.benchmarks.hcsu.options import discrimination_config

    gen = tmp_path / "gen.json"
    gen.write_text(json.dumps({"王羲之-行书": "a", "Tie/王羲之-楷书": "typo"},
                              ensure_ascii=False), encoding="utf-8")
    ds = HcsuDataset(real.root, real.images, real.classes, [])
    config = run_config("hcsu-discrimination", data=real.root, model="baseline:random",
                        out=tmp_path / "run", descriptions="generated",
                        generated_descriptions=str(gen), k=2)
    task = discrimination_config(config.options, dataset=ds)
    assert (task.k, task.descriptions, task.per_class) == (2, "generated", 90)
    assert ds.problems == [f"{gen}: key 'Tie/王羲之-楷书' matches no class of the data "
                           "(expected a class key like 'Tie/王羲之-行书' or a style like "
                           "'王羲之-行书'); ignored"]


def _zip_release(tmp_path: Path, stored: bool) -> Path:
    src = _mini_release(tmp_path, [_rec("王羲之-行书/不_1.png"), _rec("王羲之-行书/之_1.png")])
    rel = tmp_path / ("stored" if stored else "deflated")
    rel.mkdir()
    shutil.copyfile(src / "tie_annotations.json", rel / "tie_annotations.json")
    subprocess.run(["zip", "-q", "-r", *(["-0"] if stored else []), "-P", "s3cret",
                    str(rel / "tie.zip"), "tie"], cwd=src, check=True)
    return rel


def _lucky_wrong_password(archive: Path) -> str:
    """A wrong password that passes ZipCrypto's 1-byte header check of the first file
    member (about 1 in 256 do; searched deterministically)."""
    import zipfile

    with zipfile.ZipFile(archive) as zf:
        first = next(i for i in zf.infolist() if not i.is_dir())
        for n in range(20000):
            pw = f"wrong{n}"
            try:
                zf.open(first, pwd=pw.encode()).close()
            except RuntimeError:
                continue
            return pw
    raise AssertionError("no lucky password in 20000 tries")


@pytest.mark.skipif(shutil.which("zip") is None, reason="needs the 'zip' tool to encrypt")
@pytest.mark.parametrize("stored", [False, True])
def test_lucky_wrong_password_is_reported_and_cleaned(tmp_path: Path, stored: bool) -> None:
    # before: a deflated member raised a raw zlib.error and left a .part file behind; a
    # stored one said "Bad CRC-32" (read as corruption)
    rel = _zip_release(tmp_path, stored)
    pw = _lucky_wrong_password(rel / "tie.zip")
    out = tmp_path / "x"
    with pytest.raises(ArchiveError, match=r"wrong password \(or corrupt archive\)") as exc:
        load_hcsu(rel, extract_to=out, password=pw)
    assert "王羲之-行书" in str(exc.value)  # the member name decoded, not cp437 mojibake
    assert not [p for p in out.rglob("*") if p.is_file()]  # no partial file left
    with pytest.raises(ArchiveError, match="HCSU_ZIP_PASSWORD"):
        load_hcsu(rel, extract_to=out, password=None)
