"""Issue 22, "first contact": MUSE ``summary.md`` prints one interval table, counts
distinct artworks (5 demo scenes, not 5 x 12 task-artwork units) and ends its model part
with the provenance. Runs the bundled demo (data/demo/muse) with ``baseline:random``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heritage_eval.cli.main import main

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "muse"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("muse-demo")
    qfile = root / "questions.jsonl"
    assert main(["muse", "generate", "--annotations", str(DEMO / "annotations.json"),
                 "--images", str(DEMO), "--out", str(qfile)]) == 0
    out = root / "random"
    assert main(["run", "muse", "--questions", str(qfile), "--model", "baseline:random",
                 "--out", str(out)]) == 0
    return out


def test_one_interval_table_and_distinct_artworks(run: Path) -> None:
    md = (run / "summary.md").read_text("utf-8")
    # the interval column header appears in exactly one table (the platform's section)
    assert md.count("95 % confidence intervals") == 1
    assert "## 95 % intervals —" not in md and "Average (mean over tasks)" not in md
    # the demo set is five scenes (data/demo/muse/README.md): 5 distinct artworks
    images = json.loads((DEMO / "annotations.json").read_text("utf-8"))
    assert len(images) == 5
    assert "Distinct artworks answered: **5**" in md
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    assert summary["results"][0]["n_artworks"] == 5
    # the pooled macro estimate counts (task, artwork) units: more than 5, never shown
    # as the artworks count
    pooled = summary["models"]["baseline:random"]["metrics"]["score"]["n_clusters"]
    assert pooled > 5 and f"**{pooled}**" not in md


def test_summary_md_has_provenance(run: Path) -> None:
    md = (run / "summary.md").read_text("utf-8")
    prov = json.loads((run / "summary.json").read_text("utf-8"))["provenance"]
    section = md.split("## Provenance")[1]
    assert f"data hash: `{prov['question_file_sha256']}`" in section
    assert f"config hash: `{prov['config_hash']}`" in section
    assert f"git commit: `{prov['git_commit']}`" in section or prov["git_commit"] is None
    assert "model: `baseline:random`" in section
