"""``export hf muse`` of a question file generated from the real MUSE sample: ``datasets``
loads it, every question is a row with all its images, and ``run muse --questions``
on the export scores as on the original file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from heritage_eval.cli.main import main
from heritage_eval.curate.hf.card import read_front_matter
from tests.conftest import realdata

REAL = realdata("muse")
#: jigsaw questions show the artwork with a hole plus piece images: several images a row
TASKS = ("jigsaw_puzzle", "object_count", "cultural_identification")


@pytest.fixture(scope="module")
def qfile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = Path(REAL)
    path = tmp_path_factory.mktemp("muse") / "q.jsonl"
    assert main(["muse", "generate", "--annotations", str(root / "annotations.json"),
                 "--images", str(root / "images"), "--out", str(path), "--tasks", *TASKS,
                 "--no-progress"]) == 0
    return path


@pytest.fixture(autouse=True)
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HERITAGE_EVAL_HF_CACHE", str(tmp_path / "he_cache"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))


def _questions(path: Path) -> list[dict[str, Any]]:
    """Hand count: every line after the header of the question file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["kind"] == "header"
    return [json.loads(x) for x in lines[1:] if x.strip()]


def test_export_loads_with_datasets_and_keeps_every_image(qfile: Path, tmp_path: Path) -> None:
    import datasets

    out = tmp_path / "hf"
    assert main(["export", "hf", "muse", str(qfile), "--out", str(out), "--no-progress"]) == 0
    want = _questions(qfile)
    ds = datasets.load_dataset(str(out), split="test", cache_dir=str(tmp_path / "c"))
    assert len(ds) == len(want) > 0
    by_id = {r["id"]: r for r in ds}
    assert set(by_id) == {q["id"] for q in want}
    jig = next(q for q in want if q["turns"][0]["task"] == "jigsaw_puzzle")
    row = by_id[jig["id"]]
    refs = list(dict.fromkeys([*jig["turns"][0]["images"],
                               *(o["image"] for o in jig["turns"][0]["options"]
                                 if o.get("image"))]))
    assert row["image_refs"] == refs and len(refs) >= 2
    assert len(row["images"]) == len(refs)
    piece = next(r for r in refs if not r.startswith("@images/"))
    src = Image.open(qfile.parent / piece)
    idx = refs.index(piece)
    assert np.array_equal(np.asarray(row["images"][idx].convert("RGB")),
                          np.asarray(src.convert("RGB")))
    assert json.loads(row["question"]) == jig
    header = json.loads(qfile.read_text(encoding="utf-8").splitlines()[0])
    card = read_front_matter((out / "README.md").read_text(encoding="utf-8"), "card")
    assert card["license"] == "other"
    assert f"- **seed**: {header['seed']}" in (out / "README.md").read_text(encoding="utf-8")
    counts = {i["config_name"]: i["splits"][0]["num_examples"] for i in card["dataset_info"]}
    assert counts == {"default": len(want), **{t: sum(1 for q in want
                                                     if q["turns"][0]["task"] == t)
                                               for t in TASKS}}


@pytest.mark.slow
def test_run_muse_on_the_export_scores_equal(qfile: Path, tmp_path: Path) -> None:
    out = tmp_path / "hf"
    assert main(["export", "hf", "muse", str(qfile), "--out", str(out), "--no-progress"]) == 0
    results = []
    for name, questions in (("orig", qfile), ("back", out)):
        run = tmp_path / name
        assert main(["run", "muse", "--questions", str(questions), "--model",
                     "baseline:random", "--out", str(run), "--no-cache"]) == 0
        summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
        rows = [json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines()]
        results.append((summary["results"], [(r["id"], r["state"], r["scores"])
                                             for r in rows]))
    assert results[0] == results[1]
    assert len(results[0][1]) == len(_questions(qfile))  # one turn per question here
