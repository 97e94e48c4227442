"""Read-back of ``export hf`` folders given as ``--data``: the same files, the same
scores as on the original data, the cache reused, bad exports refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from heritage_eval.cli.main import main
from heritage_eval.curate.hf.read import HfReadError, materialise
from tests.conftest import realdata

ROOT = Path(__file__).resolve().parents[2]
DEMO_AB = ROOT / "data" / "demo" / "ancient_bench"
DEMO_HCSU = ROOT / "data" / "demo" / "hcsu"
REAL_HCSU = realdata("hcsu")


@pytest.fixture(autouse=True)
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    folder = tmp_path / "he_cache"
    monkeypatch.setenv("HERITAGE_EVAL_HF_CACHE", str(folder))
    return folder


def _export(bench: str, src: Path, out: Path, code: int = 0) -> Path:
    assert main(["export", "hf", bench, str(src), "--out", str(out), "--no-progress"]) == code
    return out


def _scores(run: Path) -> tuple[Any, list[tuple[str, str, dict[str, Any]]]]:
    """summary.json ``results`` and every sample's (id, state, scores)."""
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    rows = [json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines()]
    return summary["results"], [(r["id"], r["state"], r["scores"]) for r in rows]


def test_ancient_bench_materialises_the_same_files(tmp_path: Path, cache: Path) -> None:
    out = _export("ancient-bench", DEMO_AB, tmp_path / "hf")
    dest = materialise(out, "ancient-bench")
    assert dest.parent == cache and len(dest.name) == 64  # SHA-256 hex
    for conv in sorted(DEMO_AB.glob("*/conv.jsonl")):
        medium = conv.parent.name
        assert (dest / medium / "conv.jsonl").read_bytes() == conv.read_bytes()
        for image in sorted((conv.parent / "images").iterdir()):
            assert (dest / medium / "images" / image.name).read_bytes() == image.read_bytes()
    stamp = (dest / "seals" / "conv.jsonl").stat().st_mtime_ns
    assert materialise(out, "ancient-bench") == dest  # same content -> same folder
    assert (dest / "seals" / "conv.jsonl").stat().st_mtime_ns == stamp  # not rebuilt


@pytest.mark.slow
def test_ancient_bench_scores_equal_on_read_back(tmp_path: Path) -> None:
    out = _export("ancient-bench", DEMO_AB, tmp_path / "hf")
    runs = []
    for name, data in (("orig", DEMO_AB), ("back", out)):
        run = tmp_path / name
        # the demo's offline OCR model, 2 media x 1 image to stay fast
        assert main(["run", "ancient-bench", "--data", str(data), "--model", "rapidocr",
                     "--categories", "seals", "calligraphys", "--limit", "1",
                     "--out", str(run), "--no-cache"]) == 0
        runs.append(_scores(run))
    assert runs[0] == runs[1]
    assert [r[0] for r in runs[0][1]] == ["seals/seals_000001",
                                          "calligraphys/calligraphys_000001"]
    assert all(state == "scored" for _, state, _ in runs[0][1])


@pytest.mark.slow
def test_hcsu_discrimination_scores_equal_on_read_back(tmp_path: Path) -> None:
    out = _export("hcsu", DEMO_HCSU, tmp_path / "hf")
    runs = []
    for name, data in (("orig", DEMO_HCSU), ("back", out)):
        run = tmp_path / name
        assert main(["run", "hcsu-discrimination", "--data", str(data), "--model",
                     "baseline:image-similarity", "--k", "4", "--out", str(run),
                     "--no-cache"]) == 0
        runs.append(_scores(run))
    assert runs[0] == runs[1]
    assert len(runs[0][1]) == 140  # 70 + 70 records in data/demo/hcsu/*_annotations.json


def test_real_hcsu_annotations_rewritten_record_for_record(tmp_path: Path) -> None:
    root = Path(REAL_HCSU)
    dest = materialise(_export("hcsu", root, tmp_path / "hf"), "hcsu")
    for domain in ("bei", "tie"):
        want = json.loads((root / f"{domain}_annotations.json").read_text(encoding="utf-8"))
        got = json.loads((dest / f"{domain}_annotations.json").read_text(encoding="utf-8"))
        assert got == want
        for rec in want:
            assert (dest / domain / rec["filename"]).read_bytes() == \
                (root / domain / rec["filename"]).read_bytes()


def test_export_of_another_benchmark_is_refused(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = _export("hcsu", DEMO_HCSU, tmp_path / "hf")
    assert main(["run", "ancient-bench", "--data", str(out), "--model", "rapidocr",
                 "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert f"{out} is an export of 'hcsu', not of 'ancient-bench'" in err


def _rewrite_first_row(shard: Path, column: str, value: Any) -> None:
    table = pq.read_table(shard)
    rows = table.to_pylist()
    rows[0][column] = value
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)


def test_unsafe_image_name_in_an_export_is_refused(tmp_path: Path, cache: Path) -> None:
    out = _export("ancient-bench", DEMO_AB, tmp_path / "hf")
    shard = next((out / "data" / "seals").glob("*.parquet"))
    _rewrite_first_row(shard, "image_name", "../../escape.jpg")
    with pytest.raises(HfReadError, match=r"unsafe file name '\.\./\.\./escape\.jpg'"):
        materialise(out, "ancient-bench")
    assert not (tmp_path / "escape.jpg").exists()
    assert [p for p in cache.iterdir() if not p.name.startswith(".")] == []  # nothing kept


def test_parquet_without_our_metadata_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "README.md").write_text("---\nlicense: mit\n---\n")
    pq.write_table(pa.table({"x": [1]}), folder / "train.parquet")
    with pytest.raises(HfReadError, match="not written by 'heritage-eval export hf'"):
        materialise(folder, "hcsu")


def test_missing_image_travels_as_a_null_image(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from heritage_eval.benchmarks.ancient_bench.loader import load_release

    release = tmp_path / "release" / "seals"
    (release / "images").mkdir(parents=True)
    (release / "images" / "a.jpg").write_bytes(
        (DEMO_AB / "seals" / "images" / "seals_000001.jpg").read_bytes())
    (release / "conv.jsonl").write_text('{"image": "a.jpg", "human_gt": "長樂"}\n'
                                        '{"image": "gone.jpg", "human_gt": "未央"}\n'
                                        '{"human_gt": "no image field"}\n', encoding="utf-8")
    # exit 1: one sample exported without its image, one left out (rows still written)
    out = _export("ancient-bench", release.parent, tmp_path / "hf", code=1)
    err = capsys.readouterr().err
    assert "exported without its image" in err and "conv.jsonl:2" in err
    assert "not exported" in err and "conv.jsonl:3" in err
    table = pq.read_table(next((out / "data" / "seals").glob("*.parquet")))
    assert table.num_rows == 2  # line 3 has no image name: it cannot be represented
    assert table.column("image").to_pylist()[1] is None
    back = load_release(materialise(out, "ancient-bench"))
    assert [s.id for s in back.samples] == ["seals/a", "seals/gone"]
    assert back.samples[0].load_error is None
    assert "image file not found" in str(back.samples[1].load_error)
