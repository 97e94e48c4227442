"""End to end: ``heritage-eval run ancient-bench`` with the bundled OCR on real data
(``../shared/realdata/ancient_bench``: stele rubbings, calligraphy pages, oracle glyphs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import realdata

from heritage_eval.cli.main import main
from heritage_eval.core.store import read_jsonl

REAL = realdata("ancient_bench")


@pytest.mark.slow
@pytest.mark.skipif(not REAL.is_dir(), reason="shared real data not present")
def test_run_rapidocr_on_real_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    argv = ["run", "ancient-bench", "--data", str(REAL), "--model", "rapidocr",
            "--limit", "2", "--out", str(out)]
    assert main(argv) == 0
    assert {p.name for p in out.iterdir()} >= {"samples.jsonl", "summary.json",
                                               "summary.md", "cache.sqlite"}
    printed = capsys.readouterr().out
    for medium in ("Oracle", "Stele", "Calligraphy", "Overall"):
        assert medium in printed
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    res = summary["results"][0]
    assert summary["benchmark"] == "ancient-bench" and res["model"] == "rapidocr"
    # 3 media folders x --limit 2 = 6 samples, all readable images -> all scored.
    assert res["states"] == {"scored": 6, "unparsed": 0, "error": 0, "unscored": 0}
    assert list(res["per_category"]) == ["oracle_bone_artifacts", "inscription_rubbings",
                                         "calligraphys"]
    for st in res["per_category"].values():
        assert st["n"] == 2
        assert 0.0 <= st["ned_score"] <= 1.0 and 0.0 <= st["f1"] <= 1.0
    # The OCR reads printed-like stele characters: something must be right overall.
    assert 0.0 < res["overall"]["ned_score"] <= 1.0
    prov = summary["provenance"]
    # rapidocr reads only the image: no prompt was used, so no prompt hashes.
    assert prov["prompt_used"] is False and prov["prompt_templates_hash"] is None
    assert prov["data_counts"]["samples"] == 6
    assert prov["protocol"]["flags"]["ignore_punc"] is True
    rows = read_jsonl(out / "samples.jsonl")
    assert len(rows) == 6
    resps = [r["turns"][0]["response"] for r in rows]
    assert all(t["text"] is not None and t["latency_s"] >= 0 for t in resps)
    assert all(r["details"]["prompt_hash"] is None and t["attempts"] == 1
               for r, t in zip(rows, resps, strict=True))
    # rapidocr reads no prompt: the turn still shows the prompt text, marked unused.
    assert all(r["turns"][0]["prompt"] and r["details"]["prompt_used"] is False
               for r in rows)
    # The size sent is capped at the default --max-side 2048 (rapidocr's own cap).
    images = [r["turns"][0]["images"] for r in rows]
    assert all(len(im) == 1 and max(im[0]["sent_width"], im[0]["sent_height"]) <= 2048
               for im in images)
    # Re-running the same command resumes the folder and re-scores from the cache with
    # identical numbers.
    assert main(argv) == 0
    rows2 = read_jsonl(out / "samples.jsonl")
    assert all(r["turns"][0]["response"]["cached"] for r in rows2)
    assert [r["scores"]["ned_score"] for r in rows2] == [r["scores"]["ned_score"]
                                                         for r in rows]
