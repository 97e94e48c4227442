"""Parity with the official Ancient-Bench evaluator on real data.

``../shared/realdata/ancient_bench_official_demo/expected.json`` holds the official
script's own numbers (run-checkpoint.py @ c51284fc, unmodified; see that folder's
README): per sample (NED score, F1, normalised token lists), per category (totals, counts,
means) and overall, for the default flags and two variants (all flags true / all false).
Every number must be reproduced exactly (``==``). The official scores were computed with
the 27 ground-truth lines that lack predictions removed, hence ``--missing skip``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import realdata

from heritage_eval.benchmarks.ancient_bench.loader import Release, load_release
from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags, tokenize
from heritage_eval.benchmarks.ancient_bench.pipeline import score_prediction_folder
from heritage_eval.benchmarks.ancient_bench.predictions import MissingPredictionsError
from heritage_eval.benchmarks.ancient_bench.report import build_summary
from heritage_eval.cli.main import main
from heritage_eval.core.store import read_jsonl

DEMO = realdata("ancient_bench_official_demo")
MODELS = ["demo-model-a", "demo-model-b"]

pytestmark = pytest.mark.skipif(not DEMO.is_dir(), reason="shared real data not present")


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    return json.loads((DEMO / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def release() -> Release:
    return load_release(DEMO / "gt", check_images=False)


def _variant(expected: dict[str, Any], name: str) -> tuple[dict[str, Any], NormalizationFlags]:
    if name == "default":
        return expected, NormalizationFlags(**expected["official_config"]["verifier_params"])
    block = expected["variants"][name]
    return block, NormalizationFlags(**block["verifier_params"])


@pytest.mark.parametrize("variant", ["default", "all_true", "all_false"])
def test_every_number_equals_official(expected: dict[str, Any], release: Release,
                                      variant: str) -> None:
    block, flags = _variant(expected, variant)
    scored = score_prediction_folder(release, DEMO / "predictions", MODELS, flags, "skip")
    rows = {(r.model, r.category, r.image): r for r in scored.records}
    assert len(scored.records) == len(block["samples"]) == 292
    for s in block["samples"]:
        r = rows[(s["model"], s["category"], s["image"])]
        assert r.state.value == "scored"
        assert r.ned_score == s["ned_score"], s["image"]
        assert r.f1 == s["f1"], s["image"]
        if "gt_tokens" in s:  # token lists are stored for the default flags only
            assert tokenize(r.normalized_ground_truth or "") == s["gt_tokens"], s["image"]
            assert tokenize(r.normalized_prediction or "") == s["pred_tokens"], s["image"]
    summary = build_summary(scored.records, MODELS, release.categories, {}, {},
                            scored.missing)
    for res in summary["results"]:
        model = res["model"]
        official = block["official_evaluation_report"][model]
        assert list(res["per_category"]) == list(official)  # paper order, all 9
        for cat, st in res["per_category"].items():
            exp = block["per_category"][model][cat]
            assert st["n"] == exp["count"] == official[cat]["count"]
            assert st["ned_score"] == exp["mean_ned_score"]
            assert st["f1"] == exp["mean_f1"]
        assert res["overall"]["ned_score"] == block["overall"][model]["ned_score"]
        assert res["overall"]["f1"] == block["overall"][model]["f1"]


def test_missing_error_mode_refuses(release: Release) -> None:
    # The official script stops at the first missing file; strict mode lists all 54.
    with pytest.raises(MissingPredictionsError) as info:
        score_prediction_folder(release, DEMO / "predictions", MODELS, NormalizationFlags(),
                                "error")
    assert len(info.value.paths) == 54
    assert info.value.paths[0].name == "oracle_bone_artifacts_000003.json"


def test_cli_score_skip_matches_official(tmp_path: Path, expected: dict[str, Any],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "scored"
    rc = main(["score", "ancient-bench", "--data", str(DEMO / "gt"), "--predictions",
               str(DEMO / "predictions"), "--out", str(out), "--missing", "skip"])
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["benchmark"] == "ancient-bench"
    assert [r["model"] for r in summary["results"]] == MODELS
    for res in summary["results"]:
        m = res["model"]
        assert res["overall"] == {"ned_score": expected["overall"][m]["ned_score"],
                                  "f1": expected["overall"][m]["f1"]}
        for cat, st in res["per_category"].items():
            assert st["ned_score"] == expected["per_category"][m][cat]["mean_ned_score"]
            assert st["f1"] == expected["per_category"][m][cat]["mean_f1"]
        assert len(res["missing_predictions"]) == 27
        assert res["states"]["scored"] == 146 and res["states"]["error"] == 0
    rows = read_jsonl(out / "samples.jsonl")
    assert len(rows) == 292
    for key in ("model", "state", "id", "groups", "scores", "answer", "reference",
                "details"):
        assert key in rows[0]
    assert set(rows[0]["groups"]) == {"category", "medium"}
    assert set(rows[0]["scores"]) == {"ned_score", "f1"}
    for key in ("image_name", "insertions", "deletions", "substitutions",
                "normalized_prediction"):
        assert key in rows[0]["details"]
    table = capsys.readouterr().out
    # The official LaTeX table shows demo-model-b overall 0.81 / 0.89; ours is in percent.
    assert "| demo-model-b |" in table and "80.58 / 89.14" in table
    assert "Oracle" in table and "Calligraphy" in table and "Overall" in table


def test_cli_score_strict_fails_and_writes_nothing(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "strict"
    rc = main(["score", "ancient-bench", "--data", str(DEMO / "gt"), "--predictions",
               str(DEMO / "predictions"), "--out", str(out), "--missing", "error"])
    assert rc == 1
    assert "54 prediction file(s) missing" in capsys.readouterr().err
    assert not (out / "summary.json").exists()


def test_cli_score_missing_empty_scores_zero(tmp_path: Path, expected: dict[str, Any]) -> None:
    out = tmp_path / "empty"
    rc = main(["score", "ancient-bench", "--data", str(DEMO / "gt"), "--predictions",
               str(DEMO / "predictions"), "--out", str(out)])  # default: --missing empty
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    rows = read_jsonl(out / "samples.jsonl")
    missing = [r for r in rows if r["details"]["missing_prediction"]]
    # 27 lines x 2 models, each scored as an empty answer: NED score 0, F1 0.
    assert len(missing) == 54
    assert all(r["state"] == "scored" and r["scores"]["ned_score"] == 0.0
               and r["scores"]["f1"] == 0.0 for r in missing)
    for res in summary["results"]:
        assert len(res["missing_predictions"]) == 27
        for cat, st in res["per_category"].items():
            # 3 lines without prediction per category are now counted.
            assert st["n"] == expected["per_category"][res["model"]][cat]["count"] + 3
    # demo-model-a is perfect elsewhere, so each category mean is n_ok / (n_ok + 3).
    res_a = summary["results"][0]
    oracle = res_a["per_category"]["oracle_bone_artifacts"]
    assert oracle["ned_score"] == pytest.approx(22 / 25)


def test_cli_flag_overrides_match_official_variant(tmp_path: Path,
                                                   expected: dict[str, Any]) -> None:
    # --ignore-st --ignore-case on top of the official preset = the all_true variant.
    out = tmp_path / "all_true"
    rc = main(["score", "ancient-bench", "--data", str(DEMO / "gt"), "--predictions",
               str(DEMO / "predictions"), "--out", str(out), "--missing", "skip",
               "--ignore-st", "--ignore-case"])
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["protocol"]["flags"] == {"ignore_st": True, "ignore_punc": True,
                                            "ignore_space": True, "ignore_case": True,
                                            "collapse_u25a1": False}
    variant = expected["variants"]["all_true"]["overall"]
    for res in summary["results"]:
        assert res["overall"]["ned_score"] == variant[res["model"]]["ned_score"]
        assert res["overall"]["f1"] == variant[res["model"]]["f1"]
