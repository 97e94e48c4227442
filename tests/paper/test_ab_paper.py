"""``paper ab-table3`` and ``paper ab-fig4`` on real runs: the official demo predictions
scored by ``score ancient-bench`` (2 models, 9 media), and a two-sample hand-made run.

Expected values: Table 3 cells are the official evaluator's own means from
``ancient_bench_official_demo/expected.json`` printed as percent with two decimals; the
Fig. 4 counts are ``Levenshtein.editops`` counts computed here on the token lists the
official script produced (``expected.json`` ``samples[].gt_tokens / pred_tokens``) and on
two pairs written by hand.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import Levenshtein
import pytest

from heritage_eval.benchmarks.ancient_bench.categories import MEDIA
from heritage_eval.cli.main import main
from tests.conftest import realdata

DEMO = realdata("ancient_bench_official_demo")
MODELS = ["demo-model-a", "demo-model-b"]


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ab") / "run"
    assert main(["score", "ancient-bench", "--data", str(DEMO / "gt"), "--predictions",
                 str(DEMO / "predictions"), "--out", str(out), "--missing", "skip"]) == 0
    return out


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    return json.loads((DEMO / "expected.json").read_text(encoding="utf-8"))


def test_table3_cells_equal_official(demo_run: Path, expected: dict[str, Any],
                                     tmp_path: Path) -> None:
    out = tmp_path / "paper"
    rc = main(["paper", "ab-table3", str(demo_run), "--type", "demo-model-a=vlm",
               "--type", "demo-model-b=ocr", "--out", str(out)])
    assert rc == 0
    rows = {r["Model"]: r for r in _csv(out / "ab_table3.csv")}
    assert rows["demo-model-a"]["group"] == "General VLMs"
    assert rows["demo-model-b"]["group"] == "OCR Specialist Models"
    for model in MODELS:
        for folder, medium in MEDIA.items():
            official = expected["per_category"][model][folder]
            assert rows[model][f"{medium} / NED"] == f"{100 * official['mean_ned_score']:.2f}"
            assert rows[model][f"{medium} / F1"] == f"{100 * official['mean_f1']:.2f}"
        overall = expected["overall"][model]
        assert rows[model]["Overall / NED"] == f"{100 * overall['ned_score']:.2f}"
        assert rows[model]["Overall / F1"] == f"{100 * overall['f1']:.2f}"
    # the official LaTeX table prints demo-model-b overall 0.81 / 0.89
    assert rows["demo-model-b"]["Overall / NED"] == "80.58"
    md = (out / "ab_table3.md").read_text(encoding="utf-8")
    line_a = next(x for x in md.splitlines() if x.startswith("| demo-model-a "))
    assert line_a.count("**100.00**") == 20  # best in all 9 media x 2 metrics + Overall
    assert "<u>80.58</u>" in md  # second best of two models: underlined
    tex = (out / "ab_table3.tex").read_text(encoding="utf-8")
    assert r"\multicolumn{2}{c}{Calligraphy}" in tex and r"\textit{OCR Specialist Models}" in tex


def test_table3_intervals_and_bad_type(demo_run: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    summary = json.loads((demo_run / "summary.json").read_text(encoding="utf-8"))
    est = summary["models"]["demo-model-b"]["groups"]["medium"]["Seal"]["ned_score"]
    assert main(["paper", "ab-table3", str(demo_run), "--intervals", "brackets",
                 "--formats", "csv", "--out", str(tmp_path)]) == 0
    row = next(r for r in _csv(tmp_path / "ab_table3.csv") if r["Model"] == "demo-model-b")
    assert row["Seal / NED ci_low"] == f"{100 * est['ci_low']:.2f}"
    assert row["Seal / NED ci_high"] == f"{100 * est['ci_high']:.2f}"
    assert row["group"] == "Models without a --type"
    assert main(["paper", "ab-table3", str(demo_run), "--type", "demo-model-a=llm",
                 "--out", str(tmp_path / "x")]) == 2
    assert "--type 'demo-model-a=llm'" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def _editops(gt: list[str], pred: list[str]) -> tuple[int, int, int]:
    ops = [op for op, _, _ in Levenshtein.editops(gt, pred)]
    return ops.count("insert"), ops.count("delete"), ops.count("replace")


def test_fig4_counts_equal_editops_of_official_tokens(demo_run: Path, expected: dict[str, Any],
                                                      tmp_path: Path) -> None:
    assert main(["paper", "ab-fig4", str(demo_run), "--medium", "calligraphys",
                 "--out", str(tmp_path)]) == 0
    rows = {r["Model"]: r for r in _csv(tmp_path / "ab_fig4.csv")}
    for model in MODELS:
        samples = [s for s in expected["samples"]
                   if s["model"] == model and s["category"] == "calligraphys"]
        ins = dels = subs = pred = 0
        for s in samples:
            i, d, r = _editops(s["gt_tokens"], s["pred_tokens"])
            ins, dels, subs, pred = ins + i, dels + d, subs + r, pred + len(s["pred_tokens"])
        assert rows[model]["Samples"] == str(len(samples)) == "12"
        assert (rows[model]["Insertions"], rows[model]["Deletions"],
                rows[model]["Substitutions"]) == (str(ins), str(dels), str(subs))
        assert rows[model]["Hallucination rate (%)"] == f"{100 * ins / pred:.2f}"
    assert rows["demo-model-b"]["Deletions"] != "0"  # model-b drops characters
    assert (tmp_path / "ab_fig4.png").stat().st_size > 10_000
    md = (tmp_path / "ab_fig4.md").read_text(encoding="utf-8")
    assert "Hallucination rate (our definition) = inserted tokens ÷ predicted tokens" in md


def _write_hand_run(root: Path) -> Path:
    """Two calligraphy samples of one model, ground truth and prediction by hand."""
    gt = root / "gt" / "calligraphys"
    gt.mkdir(parents=True)
    lines = [{"image": "a.png", "human_gt": "天地玄黃宇宙洪荒"},
             {"image": "b.png", "human_gt": "日月盈昃辰宿列張"}]
    (gt / "conv.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n"
                                           for x in lines), encoding="utf-8")
    res = root / "pred" / "hand" / "calligraphys" / "results"
    res.mkdir(parents=True)
    for stem, answer in (("a", "天地元黃宇宙洪荒荒"), ("b", "日月昃辰宿列")):
        (res / f"{stem}.json").write_text(json.dumps({"image": f"{stem}.png",
                                                      "answer": f"<res>{answer}</res>"},
                                                     ensure_ascii=False), encoding="utf-8")
    run = root / "run"
    assert main(["score", "ancient-bench", "--data", str(root / "gt"), "--predictions",
                 str(root / "pred"), "--out", str(run), "--missing", "skip"]) == 0
    return run


def test_fig4_two_hand_pairs(tmp_path: Path) -> None:
    run = _write_hand_run(tmp_path)
    assert main(["paper", "ab-fig4", str(run), "--out", str(tmp_path / "out")]) == 0
    # By hand: pair a substitutes 玄->元 and inserts one 荒; pair b deletes 盈 and 張.
    a = _editops(list("天地玄黃宇宙洪荒"), list("天地元黃宇宙洪荒荒"))
    b = _editops(list("日月盈昃辰宿列張"), list("日月昃辰宿列"))
    assert a == (1, 0, 1) and b == (0, 2, 0)
    row = _csv(tmp_path / "out" / "ab_fig4.csv")[0]
    assert (row["Model"], row["Samples"], row["GT tokens"], row["Predicted tokens"]) == \
        ("hand", "2", "16", "15")
    assert (row["Insertions"], row["Deletions"], row["Substitutions"]) == ("1", "2", "1")
    assert row["Hallucination rate (%)"] == f"{100 * 1 / 15:.2f}" == "6.67"


def test_fig4_unknown_medium(demo_run: Path, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["paper", "ab-fig4", str(demo_run), "--medium", "papyrus",
                 "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no record of medium 'papyrus'" in err and "Calligraphy" in err


def test_table3_types_yaml(demo_run: Path, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    types = tmp_path / "types.yaml"
    types.write_text("demo-model-a: ocr\ndemo-model-b: vlm\n", encoding="utf-8")
    assert main(["paper", "ab-table3", str(demo_run), "--types", str(types), "--formats",
                 "csv", "--out", str(tmp_path / "o")]) == 0
    rows = _csv(tmp_path / "o" / "ab_table3.csv")
    # VLM block first (the paper's order), so model-b leads
    assert [(r["group"], r["Model"]) for r in rows] == [
        ("General VLMs", "demo-model-b"), ("OCR Specialist Models", "demo-model-a")]
    types.write_text("demo-model-a: specialist\n", encoding="utf-8")
    assert main(["paper", "ab-table3", str(demo_run), "--types", str(types),
                 "--out", str(tmp_path / "p")]) == 2
    assert f"--types {types}: model 'demo-model-a' has type 'specialist'" in \
        capsys.readouterr().err


def test_table3_flags_overall_over_fewer_media(tmp_path: Path) -> None:
    run = _write_hand_run(tmp_path)  # calligraphy only: Overall covers 1 of 9 media
    assert main(["paper", "ab-table3", str(run), "--type", "hand=ocr", "--out",
                 str(tmp_path / "t")]) == 0
    row = _csv(tmp_path / "t" / "ab_table3.csv")[0]
    assert row["notes"] == "Overall / NED: †; Overall / F1: †"
    md = (tmp_path / "t" / "ab_table3.md").read_text(encoding="utf-8")
    assert ("† Overall over fewer than the paper's 9 media, so not comparable with the "
            "paper's Overall: hand (without Oracle, Bronze, Slip, Silk, Seal, Stele, Cliff, "
            "Edition).") in md
