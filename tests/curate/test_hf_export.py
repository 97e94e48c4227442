"""``export hf`` of Ancient-Bench and HCSU: ``datasets`` loads the folder offline, row
counts match the sources, images decode to the source pixels, the card's YAML parses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image

from heritage_eval.cli.main import main
from heritage_eval.curate.hf.card import read_front_matter
from tests.conftest import realdata

ROOT = Path(__file__).resolve().parents[2]
DEMO_AB = ROOT / "data" / "demo" / "ancient_bench"
REAL_AB = realdata("ancient_bench")
REAL_HCSU = realdata("hcsu")


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """``datasets`` imported with the Hub switched off and its cache under tmp_path."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setenv("HERITAGE_EVAL_HF_CACHE", str(tmp_path / "he_cache"))
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True, raising=False)
    return datasets


def _export(*words: str) -> int:
    return main(["export", "hf", *words, "--no-progress"])


def _conv_lines(root: Path) -> dict[str, list[dict[str, Any]]]:
    """Hand count: the non-empty lines of every <medium>/conv.jsonl."""
    return {p.parent.name: [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines()
                            if x.strip()] for p in sorted(root.glob("*/conv.jsonl"))}


def _pixels(img: Image.Image) -> np.ndarray:
    return np.asarray(img.convert("RGB"))


def test_demo_ancient_bench_loads_with_datasets(tmp_path: Path, offline: Any) -> None:
    out = tmp_path / "hf"
    assert _export("ancient-bench", str(DEMO_AB), "--out", str(out),
                   "--license", "cc-by-4.0") == 0
    lines = _conv_lines(DEMO_AB)
    n = sum(len(v) for v in lines.values())
    assert n == 27  # 9 media x 3 lines (data/demo/ancient_bench/*/conv.jsonl)
    ds = offline.load_dataset(str(out), split="test", cache_dir=str(tmp_path / "c"))
    assert len(ds) == n
    assert type(ds.features["image"]).__name__ == "Image"
    row = next(r for r in ds if r["id"] == "seals/seals_000001")
    assert row["human_gt"] == lines["seals"][0]["human_gt"] == "長樂\n未央"
    source = Image.open(DEMO_AB / "seals" / "images" / "seals_000001.jpg")
    assert np.array_equal(_pixels(row["image"]), _pixels(source))
    seals = offline.load_dataset(str(out), "seals", split="test",
                                 cache_dir=str(tmp_path / "c"))
    assert sorted(seals["image_stem"]) == ["seals_000001", "seals_000002", "seals_000003"]
    card = read_front_matter((out / "README.md").read_text(encoding="utf-8"), "card")
    assert card["license"] == "cc-by-4.0"
    names = {c["config_name"] for c in card["configs"]}
    assert names == {"default", *lines}
    info = {i["config_name"]: i["splits"][0]["num_examples"] for i in card["dataset_info"]}
    assert info["default"] == 27 and info["seals"] == 3


def test_real_ancient_bench_rows_and_pixels(tmp_path: Path, offline: Any) -> None:
    root = Path(REAL_AB)
    out = tmp_path / "hf"
    assert _export("ancient-bench", str(root), "--out", str(out)) == 0
    lines = _conv_lines(root)
    # hand count of the real sample (its README): 10 rubbings + 4 calligraphy + 20 oracle
    assert {m: len(v) for m, v in lines.items()} == {
        "calligraphys": 4, "inscription_rubbings": 10, "oracle_bone_artifacts": 20}
    ds = offline.load_dataset("parquet", data_files=str(out / "data" / "*" / "*.parquet"),
                              split="train", cache_dir=str(tmp_path / "c"))
    assert len(ds) == 34
    by_id = {r["id"]: r for r in ds}
    for medium, items in lines.items():
        for item in items:
            stem = item["image"].rsplit(".", 1)[0]
            row = by_id[f"{medium}/{stem}"]
            assert row["human_gt"] == item["human_gt"]
    first = lines["inscription_rubbings"][0]
    row = by_id[f"inscription_rubbings/{first['image'].rsplit('.', 1)[0]}"]
    src = Image.open(root / "inscription_rubbings" / "images" / first["image"])
    assert np.array_equal(_pixels(row["image"]), _pixels(src))
    card = read_front_matter((out / "README.md").read_text(encoding="utf-8"), "card")
    assert card["license"] == "other"  # default when --license is not given


def test_real_hcsu_rows_fields_and_pixels(tmp_path: Path, offline: Any) -> None:
    root = Path(REAL_HCSU)
    out = tmp_path / "hf"
    assert _export("hcsu", str(root), "--out", str(out), "--license", "mit") == 0
    bei = json.loads((root / "bei_annotations.json").read_text(encoding="utf-8"))
    tie = json.loads((root / "tie_annotations.json").read_text(encoding="utf-8"))
    assert len(bei) + len(tie) == 109  # 27 + 28 + 27 + 27 (realdata README)
    ds = offline.load_dataset(str(out), split="test", cache_dir=str(tmp_path / "c"))
    assert len(ds) == 109
    tie_only = offline.load_dataset(str(out), "tie", split="test",
                                    cache_dir=str(tmp_path / "c"))
    assert len(tie_only) == len(tie)
    rec = tie[0]
    row = next(r for r in ds if r["domain"] == "Tie" and r["filename"] == rec["filename"])
    for key in ("char", "calligrapher", "script_type", "dynasty", "quality"):
        assert row[key] == rec[key]
    assert json.loads(row["record"]) == rec  # the record as given, extra fields included
    assert row["style_class"] == f"Tie/{rec['calligrapher']}-{rec['script_type']}"
    src = Image.open(root / "tie" / rec["filename"])
    assert np.array_equal(_pixels(row["image"]), _pixels(src))
    card = read_front_matter((out / "README.md").read_text(encoding="utf-8"), "card")
    assert card["license"] == "mit"
    body = (out / "README.md").read_text(encoding="utf-8")
    assert "| Tie/王羲之-行书 | 27 |" in body  # per-class count (realdata README: 27)


def test_small_shards_stream_and_keep_every_row(tmp_path: Path) -> None:
    out = tmp_path / "hf"
    # 0.05 MiB shards: the demo images are ~50 kB each, so most media need 2+ shards
    assert _export("ancient-bench", str(DEMO_AB), "--out", str(out),
                   "--max-shard-mb", "0.05") == 0
    shards = sorted((out / "data").glob("*/*.parquet"))
    assert len(shards) > 9
    per: dict[str, int] = {}
    for s in shards:
        assert s.name.startswith("test-") and "-of-" in s.name
        per[s.parent.name] = per.get(s.parent.name, 0) + pq.ParquetFile(s).metadata.num_rows
    assert per == {m: 3 for m in _conv_lines(DEMO_AB)}
    for medium in per:  # names count the shards of their config: test-i-of-N
        files = sorted((out / "data" / medium).glob("*.parquet"))
        assert [f.name for f in files] == [f"test-{i:05d}-of-{len(files):05d}.parquet"
                                           for i in range(len(files))]


def test_refuses_non_empty_out_and_leaves_it(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "hf"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert _export("ancient-bench", str(DEMO_AB), "--out", str(out)) == 2
    assert "not empty" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    assert _export("ancient-bench", str(DEMO_AB), "--out", str(out), "--overwrite") == 0
    assert not (out / "keep.txt").exists() and (out / "README.md").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp left


def test_bad_source_is_a_usage_error(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert _export("hcsu", str(DEMO_AB), "--out", str(tmp_path / "x")) == 2
    err = capsys.readouterr().err
    assert "error:" in err and str(DEMO_AB) in err
    assert not (tmp_path / "x").exists()


def test_failed_export_leaves_nothing_behind(tmp_path: Path) -> None:
    from collections.abc import Iterator

    from heritage_eval.curate.hf.export import write_export
    from heritage_eval.curate.hf.spec import Column, ExportSource, Row

    def rows() -> Iterator[Row]:
        yield "a", {"id": "1"}
        raise OSError("disk went away")  # as a read error halfway through would

    src = ExportSource(benchmark="ancient-bench", columns=[Column("id", "string", "")],
                       total=2, rows=rows)
    out = tmp_path / "old"
    out.mkdir()
    (out / "README.md").write_text("previous export")
    with pytest.raises(OSError, match="disk went away"):
        write_export(src, out, "mit", 1 << 20, overwrite=True, progress=False)
    assert (out / "README.md").read_text() == "previous export"  # old export intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old"]  # temp folder removed
