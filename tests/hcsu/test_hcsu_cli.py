"""The whole HCSU flow through the command line on the real sample, with both baselines."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest

from heritage_eval.benchmarks.hcsu.runio import redacted_command
from heritage_eval.cli.main import build_parser, main
from heritage_eval.core.store import read_jsonl
from tests.hcsu.conftest import REAL

DISC_FIELDS = {"n", "accuracy", "macro_precision", "macro_recall", "macro_f1", "invalid_rate"}
DESC_FIELDS = {"n", "bertscore_x10", "terminology", "richness", "terminology_delta",
               "richness_delta"}


def _summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text("utf-8"))


def test_discrimination_with_image_similarity_and_random(tmp_path: Path) -> None:
    out = tmp_path / "sim"
    assert main(["run", "hcsu-discrimination", "--data", str(REAL), "--model",
                 "baseline:image-similarity", "--k", "2", "--out", str(out)]) == 0
    s = _summary(out)
    assert s["benchmark"] == "hcsu-discrimination"
    (res,) = s["results"]
    assert res["model"] == "baseline:image-similarity"
    assert set(res["per_domain"]) == {"Bei", "Tie"}
    rows = read_jsonl(out / "samples.jsonl")
    assert len(rows) == 109 and all(r["state"] == "scored" for r in rows)
    for domain, d in res["per_domain"].items():
        assert set(d) >= DISC_FIELDS and all(0 <= d[k] <= 1 for k in DISC_FIELDS - {"n"})
        mine = [r for r in rows if r["groups"]["domain"] == domain]
        assert d["n"] == len(mine)
        assert d["accuracy"] == fmean(r["details"]["correct"] for r in mine)
        assert d["accuracy"] > 0.75  # the classic features separate the real hands well
    assert res["avg_accuracy"] == pytest.approx(fmean(d["accuracy"] for d in
                                                      res["per_domain"].values()))
    assert s["provenance"]["task"]["k"] == 2 and s["provenance"]["prompt_hash"]
    assert "| baseline:image-similarity |" in (out / "summary.md").read_text("utf-8")
    # re-running answers everything from the cache and gives the same summary
    assert main(["run", "hcsu-discrimination", "--data", str(REAL), "--model",
                 "baseline:image-similarity", "--k", "2", "--out", str(out)]) == 0
    assert _summary(out)["results"] == s["results"]
    assert all(r["turns"][0]["response"]["cached"] for r in read_jsonl(out / "samples.jsonl"))
    rnd = tmp_path / "rnd"
    assert main(["run", "hcsu-discrimination", "--data", str(REAL), "--model",
                 "baseline:random", "--k", "2", "--out", str(rnd)]) == 0
    table = tmp_path / "table2.md"
    assert main(["hcsu", "report", str(out), str(rnd), "--out", str(table)]) == 0
    text = table.read_text("utf-8")
    assert "baseline:image-similarity" in text and "baseline:random" in text


def test_k_too_large_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    assert main(["run", "hcsu-discrimination", "--data", str(REAL), "--model",
                 "baseline:random", "--out", str(tmp_path / "x")]) == 2
    assert "K=8 needs 7 distractor classes" in capsys.readouterr().err


@pytest.mark.slow
def test_description_robustness_and_sweeps(tmp_path: Path) -> None:
    out = tmp_path / "desc"
    assert main(["run", "hcsu-description", "--data", str(REAL), "--model",
                 "baseline:nearest-description", "--limit", "4", "--out", str(out)]) == 0
    (res,) = _summary(out)["results"]
    for d in res["per_domain"].values():
        assert set(d) >= DESC_FIELDS and d["n"] == 4
        assert 0 < d["bertscore_x10"] < 10 and d["terminology"] is None
    assert res["bertscore"]["model_id"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert res["bertscore"]["num_layers"] == 6
    assert round(res["expert_reference"]["bertscore_x10"], 2) == 10.00  # self-comparison

    rob = tmp_path / "rob"
    assert main(["hcsu", "robustness", "--data", str(REAL), "--model",
                 "baseline:image-similarity", "--description-model",
                 "baseline:nearest-description", "--k", "2", "--limit", "4",
                 "--out", str(rob)]) == 0
    rows = _summary(rob)["results"]
    assert [r["condition"] for r in rows] == ["Wild (Raw)", "Wild-Resize", "Origin"]
    assert all(r["discrimination"]["Bei"]["n"] == 4 and r["description"]["Tie"]["n"] == 4
               for r in rows)
    assert len(list((rob / "conditions" / "canonical" / "tie").rglob("*.png"))) == 54
    md = (rob / "summary.md").read_text("utf-8")
    assert "| Wild-Resize " in md and "BERTScore" in md

    ks = tmp_path / "ks"
    assert main(["hcsu", "k-sweep", "--data", str(REAL), "--model", "baseline:random",
                 "--distractor-pool", "all", "--ks", "2-5", "--limit", "4",
                 "--out", str(ks)]) == 0
    s = _summary(ks)
    assert [r["k"] for r in s["results"]] == [2, 3, 4]
    assert s["provenance"]["skipped"][0]["k"] == 5 and (ks / "k_sweep.png").is_file()


def test_description_ablation_with_generated_file(tmp_path: Path) -> None:
    gen = tmp_path / "gen.json"
    gen.write_text(json.dumps({"佚名-隶书": "flat clerical", "李斯-篆书": "tall seal",
                               "文徵明-楷书": "neat regular", "王羲之-行书": "flowing running"},
                              ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "abl"
    assert main(["hcsu", "ablation", "--data", str(REAL), "--model",
                 "baseline:image-similarity", "--k", "2", "--limit", "6",
                 "--generated-descriptions", str(gen), "--out", str(out)]) == 0
    res = _summary(out)["results"]
    assert [r["descriptions"] for r in res] == ["random", "generated", "expert"]
    # the image baseline never reads descriptions: same accuracy under every mode
    assert len({r["avg_accuracy"] for r in res}) == 1
    assert "| generated " in (out / "summary.md").read_text("utf-8")


def test_canonicalize_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src" / "bei" / "佚名-隶书"
    src.mkdir(parents=True)
    shutil.copyfile(REAL / "bei" / "佚名-隶书" / "不_1.png", src / "不_1.png")
    dst = tmp_path / "dst"
    assert main(["hcsu", "canonicalize", str(tmp_path / "src"), str(dst), "--workers",
                 "1"]) == 0
    assert "written 1, skipped 0" in capsys.readouterr().out
    assert main(["hcsu", "canonicalize", str(tmp_path / "src"), str(dst)]) == 0
    assert "written 0, skipped 1" in capsys.readouterr().out


def test_every_option_has_help_and_password_is_redacted() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    names = [("run", "hcsu-discrimination"), ("run", "hcsu-description")] + \
        [("hcsu", n) for n in ("canonicalize", "k-sweep", "shot-sweep", "ablation",
                               "robustness", "write-descriptions", "report")]
    for group, name in names:
        gp = sub.choices[group]
        inner = next(a for a in gp._actions if isinstance(a, argparse._SubParsersAction))
        cmd = inner.choices[name]
        for action in cmd._actions:
            assert action.help, f"{group} {name}: {action.dest} has no help"
    assert redacted_command(["he", "--zip-password", "s3", "--zip-password=s4", "--k", "2"]) \
        == "he --zip-password *** --zip-password=*** --k 2"


def test_per_class_zero_is_an_argparse_error(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "never"
    with pytest.raises(SystemExit) as exc:  # was a ValueError traceback from sampling
        main(["run", "hcsu-discrimination", "--data", str(REAL), "--model",
              "baseline:random", "--per-class", "0", "--out", str(out)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--per-class" in err and "must be an integer >= 1" in err
    assert not out.exists()


def test_failed_k_leaves_no_cache(tmp_path: Path) -> None:
    out = tmp_path / "x"
    assert main(["run", "hcsu-discrimination", "--data", str(REAL), "--model",
                 "baseline:random", "--out", str(out)]) == 2  # K=8 on 2 classes/domain
    assert not (out / "cache.sqlite").exists()


def test_k_sweep_skip_message_once_naming_ks(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hcsu", "k-sweep", "--data", str(REAL), "--model", "baseline:random",
                 "--ks", "2-5", "--limit", "2", "--out", str(tmp_path / "ks")]) == 0
    err = capsys.readouterr().err
    # the domain pool offers 1 distractor class: K = 3, 4, 5 skipped in one line
    assert err.count("skipped K=") == 1
    assert "skipped K=3, 4, 5:" in err and "lower --ks to at most 2" in err
    assert "--k " not in err.replace("--ks", "")
    # every K skipped: exit 2 before the cache is opened
    assert main(["hcsu", "k-sweep", "--data", str(REAL), "--model", "baseline:random",
                 "--ks", "5-6", "--out", str(tmp_path / "none")]) == 2
    assert not (tmp_path / "none" / "cache.sqlite").exists()


def _help(*path: str) -> str:
    parser = build_parser()
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser.format_help()


def test_help_texts_say_what_limit_and_stages_mean() -> None:
    text = " ".join(_help("run", "hcsu-discrimination").split())
    assert "at most N target images per domain (Bei, Tie)" in text
    assert "first N samples of each category" not in text  # the generic wording
    canon = " ".join(_help("hcsu", "canonicalize").split())
    assert "DST/_stages/<domain>/<class>/<stage>/" in canon


def test_report_keeps_distinguishing_settings(tmp_path: Path) -> None:
    from heritage_eval.benchmarks.hcsu.report import merged_table

    # two discrimination runs identical but for K: rows must not look alike
    per = {"Bei": {"n": 2, "accuracy": 0.5}, "Tie": {"n": 2, "accuracy": 0.5}}
    disc = [{"benchmark": "hcsu-discrimination",
             "results": [{"model": "m", "k": k, "distractor_pool": "all",
                          "per_domain": per, "avg_accuracy": 0.5}]} for k in (5, 8)]
    rows = [line for line in merged_table(disc).splitlines() if line.startswith("| m ")]
    assert len(rows) == 2 and rows[0] != rows[1]
    assert [r.split("|")[2].strip() for r in rows] == ["5", "8"]  # the K column
    # description runs with two judges: one expert-reference row per judge
    def desc(judge: str, expert: float) -> dict[str, Any]:
        d = {"n": 2, "terminology": 4.0, "terminology_delta": 4.0 - expert,
             "expert_terminology": expert, "expert_richness": expert}
        return {"benchmark": "hcsu-description",
                "results": [{"model": "m", "shots": 2, "judge": judge,
                             "per_domain": {"Bei": d, "Tie": d}}]}
    table = merged_table([desc("openai:a", 7.0), desc("openai:b", 9.0)])
    experts = [line for line in table.splitlines() if "Expert reference" in line]
    assert len(experts) == 2
    assert "openai:a" in experts[0] and "7.00" in experts[0]
    assert "openai:b" in experts[1] and "9.00" in experts[1]
    with pytest.raises(ValueError, match="one HCSU command"):
        merged_table([disc[0], desc("openai:a", 7.0)])


def test_pool_all_summary_explains_precision(tmp_path: Path) -> None:
    out = tmp_path / "all"
    assert main(["run", "hcsu-discrimination", "--data", str(REAL), "--model",
                 "baseline:image-similarity", "--k", "4", "--distractor-pool", "all",
                 "--limit", "6", "--out", str(out)]) == 0
    (res,) = _summary(out)["results"]
    rows = read_jsonl(out / "samples.jsonl")
    for domain, d in res["per_domain"].items():
        # recount from the samples: answers naming a class of the other domain
        cross = sum(1 for r in rows if r["groups"]["domain"] == domain
                    and r["details"].get("predicted_class")
                    and not r["details"]["predicted_class"].startswith(domain + "/"))
        assert d["n_cross_domain"] == cross
    md = (out / "summary.md").read_text("utf-8")
    assert "enters no class's precision" in md and "X-dom." in md


def test_write_descriptions_refuses_baselines(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hcsu", "write-descriptions", "--data", str(REAL), "--model",
                 "baseline:random", "--out", str(tmp_path / "w")]) == 2
    assert "does not support hcsu-write-descriptions" in capsys.readouterr().err
