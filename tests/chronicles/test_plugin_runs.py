"""The chronicles-ocr plug-in end to end: ``run`` (offline models), ``score``, ``--limit``,
the protocols, the viewer, ``compare``, the Python API and the export.

Needs the plug-in installed (``make setup`` does: ``pip install -e plugins/chronicles-ocr``).
Expected values: record counts by hand from the demo set (9 ancient images × 4 tasks +
12 modern × 2 = 60; ``jiaguwen-03`` has no recognition target); scores from the official
judge and summary stored in ``fixtures/official`` (make_reference.sh), and by hand where
the corrected protocol departs from them (docs/chronicles-ocr.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("chronicles_ocr")

from tests.chronicles.layout import CLI, DEMO, OFFICIAL, PRED
from tests.chronicles.layout import run_cli as he

if not CLI.exists() or he("score", "chronicles-ocr", "--help").returncode != 0:
    pytest.skip("the chronicles-ocr plug-in is not installed", allow_module_level=True)


def records(run: Path) -> list[dict[str, Any]]:
    lines = (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def summary(run: Path) -> dict[str, Any]:
    data = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def official_row(tag: str, sheet: str) -> dict[str, Any]:
    book = json.loads((OFFICIAL / "summary.json").read_text(encoding="utf-8"))
    return next(r for r in book[sheet] if r["模型名称"] == tag)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("chronicles_runs")


@pytest.fixture(scope="module")
def random_run(runs: Path) -> Path:
    done = he("run", "chronicles-ocr", "--data", str(DEMO), "--model", "baseline:random",
              "--out", str(runs / "random"))
    assert done.returncode == 0, done.stderr
    return runs / "random"


@pytest.fixture(scope="module")
def replay_run(runs: Path) -> Path:
    """The recorded answers of the probe tag ``probe-a``, replayed through ``run``."""
    done = he("run", "chronicles-ocr", "--data", str(DEMO), "--model",
              "chronicles-replay:probe-a", "--model-option",
              f"results={PRED / 'probe-a' / 'results.jsonl'}", "--out", str(runs / "replay"))
    assert done.returncode == 0, done.stderr
    return runs / "replay"


@pytest.fixture(scope="module")
def corrected(runs: Path) -> Path:
    done = he("score", "chronicles-ocr", "--data", str(DEMO), "--predictions", str(PRED),
              "--protocol", "corrected", "--out", str(runs / "corrected"))
    assert done.returncode == 0, done.stderr
    return runs / "corrected"


def test_random_baseline_run(random_run: Path) -> None:
    recs = records(random_run)
    assert len(recs) == 60
    by_id = {r["id"]: r for r in recs}
    target_less = by_id["images/甲骨文/jiaguwen-03.png#recognition"]
    assert target_less["state"] == "unparsed" and target_less["details"]["no_target"]
    assert target_less["scores"] == {"recognition": 0.0}     # official: a skipped 0
    # baseline:random answers the classification options only; an empty spotting answer
    # has no box list: left out of Spotting (official), like summarize.py does
    spots = [r for r in recs if r["groups"]["task"] == "spotting"]
    assert {r["state"] for r in spots} == {"unscored"} and len(spots) == 9
    names = {"甲骨文", "金文", "篆书", "隶书", "楷书", "行书", "草书"}
    assert all(r["answer"] in names
               for r in recs if r["groups"]["task"] == "classification")
    body = summary(random_run)
    assert body["group_keys"] == ["script", "task", "group"]
    assert body["official_summary"]["baseline:random"]["评分分析"][0][
        "平均分_古代/Spotting"] is None
    assert "# Chronicles-OCR" in (random_run / "summary.md").read_text(encoding="utf-8")


def test_replayed_run_matches_the_official_summary(replay_run: Path) -> None:
    got = summary(replay_run)["official_summary"]["chronicles-replay:probe-a"]
    for sheet in ("评分分析", "按字体分析"):
        want = {**official_row("probe-a", sheet), "模型名称": "chronicles-replay:probe-a"}
        assert got[sheet] == [want]
    # the red box the model was shown lies in the run folder (recognition records)
    rec = next(r for r in records(replay_run) if r["id"].endswith("jinwen-01.png#recognition"))
    path = rec["turns"][0]["images"][0]["path"]
    assert rec["image_root"] is None and (replay_run / path).is_file()
    assert path.startswith("redbox/") and rec["reference"] == "宝"


def test_limit_marks_the_run_partial(runs: Path) -> None:
    out = runs / "limit"
    done = he("run", "chronicles-ocr", "--data", str(DEMO), "--model", "baseline:random",
              "--limit", "1", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "PARTIAL" in done.stderr and summary(out)["partial"] is True
    # the first image of each script and task: 3 ancient × 4 + 4 modern × 2
    assert len(records(out)) == 20


def test_protocols_differ_where_the_code_and_readme_do(runs: Path, corrected: Path) -> None:
    done = he("score", "chronicles-ocr", "--data", str(DEMO), "--predictions", str(PRED),
              "--out", str(runs / "official"))
    assert done.returncode == 0, done.stderr
    official = summary(runs / "official")["official_summary"]
    fixed = summary(corrected)["official_summary"]
    # perfect: official Recognition counts the target-less oracle-bone image as 0:
    # (2/3 + 1 + 1) / 3 = 88.9; corrected leaves it out: 100.0
    assert official["perfect"]["评分分析"][0]["平均分_古代/Recognition"] == 88.9
    assert fixed["perfect"]["评分分析"][0]["平均分_古代/Recognition"] == 100.0
    # empty: no spotting answer can be read; official leaves Spotting empty, corrected 0
    assert official["empty"]["评分分析"][0]["平均分_古代/Spotting"] is None
    assert fixed["empty"]["评分分析"][0]["平均分_古代/Spotting"] == 0.0
    assert summary(corrected)["protocol"]["name"] == "corrected"
    # every run also judges each record under the other protocol: the official run's
    # "other" tables are the corrected run's tables, and the differing cells are listed
    both = summary(runs / "official")
    assert both["other_protocol"]["name"] == "corrected"
    assert both["other_protocol"]["official_summary"] == fixed
    assert {"model": "perfect", "sheet": "评分分析", "column": "平均分_古代/Recognition",
            "official": 88.9, "corrected": 100.0} in both["protocol_differences"]
    md = (runs / "official" / "summary.md").read_text(encoding="utf-8")
    assert "| `perfect` | 评分分析 | 平均分_古代/Recognition | 88.9 | 100.0 |" in md


def test_view_draws_boxes_diffs_and_red_boxes(replay_run: Path, runs: Path) -> None:
    site = runs / "site"
    done = he("view", str(replay_run), "--out", str(site))
    assert done.returncode == 0, done.stderr
    pages = "".join(p.read_text(encoding="utf-8") for p in (site / "data").glob("*.js"))
    assert 'class=\\"box correct\\"' in pages and 'class=\\"box chosen\\"' in pages
    assert "answer against reference" in pages           # the parsing diff
    assert "image sent (red box)" in pages
    assert "renderer failed" not in pages and "cannot be imported" not in done.stderr


def test_compare_two_runs(random_run: Path, replay_run: Path, runs: Path) -> None:
    done = he("compare", str(replay_run), str(random_run), "--out", str(runs / "compare"))
    assert done.returncode == 0, done.stderr
    assert "chronicles-ocr: 2 model(s)" in done.stdout


def test_python_api_run_and_score(runs: Path) -> None:
    import heritage_eval as api

    run = api.evaluate("chronicles-ocr", data=str(DEMO), model="baseline:random",
                       out=str(runs / "api-run"), tasks=["classification"],
                       scripts="oracle_bone,楷书")
    assert run.status == 0 and len(run.records) == 6  # 3 + 3 images, one task
    scored = api.score("chronicles-ocr", data=str(DEMO), predictions=str(PRED),
                       models=["perfect"], out=str(runs / "api-score"))
    assert list(scored.summary["official_summary"]) == ["perfect"]
    assert scored.summary["official_summary"]["perfect"]["评分分析"] == [
        official_row("perfect", "评分分析")]
    with pytest.raises(api.OptionsError):
        api.score("chronicles-ocr", data=str(DEMO), predictions=str(PRED),
                  out=str(runs / "bad"), protocol="readme")


def test_export_round_trip(corrected: Path, runs: Path) -> None:
    # the plug-in's own command (entry-point group heritage_eval.commands)
    done = he("export", "chronicles-ocr", str(corrected), str(runs / "exported"),
              "--data", str(DEMO))
    assert done.returncode == 0, done.stderr
    written = {p.parent.name: p for p in (runs / "exported").glob("*/results.jsonl")}
    assert sorted(written) == sorted(p.name for p in PRED.iterdir() if p.is_dir())
    again = runs / "rescored"
    done = he("score", "chronicles-ocr", "--data", str(DEMO), "--predictions",
              str(runs / "exported"), "--protocol", "corrected", "--out", str(again))
    assert done.returncode == 0, done.stderr
    assert summary(again)["official_summary"] == summary(corrected)["official_summary"]
    line = json.loads(written["perfect"].read_text(encoding="utf-8").splitlines()[0])
    assert list(line)[:3] == ["image_path", "font_type", "annotation"]  # release fields
    assert set(line["infer_results"]) == {"字体分类", "字符提取", "字符检测", "单字识别"}
