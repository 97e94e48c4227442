"""HCSU on the platform: self-contained sample records, the statistics envelope against the
legacy tables, secrets kept out of the run folder, light command declarations."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.benchmarks.hcsu.sample_records import description_state, zero_domains
from heritage_eval.benchmarks.hcsu.tables import pooled
from heritage_eval.cli.main import main
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.store import read_jsonl
from tests.hcsu.conftest import REAL


def _summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text("utf-8"))


def _records(out: Path) -> list[SampleRecord]:
    return [SampleRecord.model_validate(r) for r in read_jsonl(out / "samples.jsonl")]


@pytest.fixture(scope="module")
def disc_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("disc") / "run"
    assert main(["run", "hcsu-discrimination", "--data", str(REAL), "--model",
                 "baseline:image-similarity", "--k", "2", "--out", str(out)]) == 0
    return out


def test_discrimination_record_is_self_contained(disc_run: Path) -> None:
    lines = (disc_run / "samples.jsonl").read_text("utf-8").splitlines()
    rec = SampleRecord.model_validate_json(lines[0])
    assert rec.benchmark == "hcsu-discrimination" and rec.model == "baseline:image-similarity"
    assert set(rec.groups) >= {"domain", "class", "script"}
    assert rec.groups["class"].startswith(rec.groups["domain"] + "/")
    (turn,) = rec.turns
    cands = rec.details["candidates"]
    assert len(cands) == rec.details["k"] == 2
    # the full prompt: the instruction and every candidate's description, in label order
    assert "Reply with the letter of the matching candidate only" in turn.prompt
    assert turn.prompt.index(cands[0]["description"]) < turn.prompt.index(
        cands[1]["description"])
    assert [i.role for i in turn.images] == ["target", "candidate A", "candidate B"]
    root = Path(rec.image_root or "")
    for img in turn.images:
        assert not Path(img.path).is_absolute() and (root / img.path).is_file()
        assert img.width and img.height
    assert turn.images[0].path == rec.details["target_image"]
    assert [i.path for i in turn.images[1:]] == [c["image"] for c in cands]
    # reference = the label of the target's own class; the answer a label; a 0/1 score
    assert rec.reference == next(c["label"] for c in cands if c["class"] == rec.groups["class"])
    assert rec.answer in ("A", "B") and turn.response and turn.response.text == rec.answer
    assert rec.scores["accuracy"] == (1.0 if rec.answer == rec.reference else 0.0)
    assert rec.source.startswith("bei_annotations.json:") and rec.system


def test_discrimination_envelope_matches_table_2(disc_run: Path) -> None:
    s = _summary(disc_run)
    (res,) = s["results"]
    env = s["models"]["baseline:image-similarity"]
    for domain, legacy in res["per_domain"].items():
        est = env["groups"]["domain"][domain]["accuracy"]
        assert est["value"] == pytest.approx(legacy["accuracy"], abs=1e-12)
        assert est["n"] == legacy["n"] and est["n_clusters"] == 2  # two classes
        assert est["ci_low"] <= legacy["accuracy"] <= est["ci_high"]
    head = env["metrics"]["accuracy"]
    assert head["value"] == pytest.approx(res["avg_accuracy"], abs=1e-12)  # Avg. Acc
    assert head["ci_low"] <= res["avg_accuracy"] <= head["ci_high"]
    assert s["statistics"]["clusters"] == {"accuracy": "class"}
    assert s["partial"] is False and s["problems"] == []


def test_description_envelope_and_record(tmp_path: Path) -> None:
    out = tmp_path / "desc"
    assert main(["run", "hcsu-description", "--data", str(REAL), "--model",
                 "baseline:nearest-description", "--limit", "3", "--out", str(out)]) == 0
    s = _summary(out)
    (res,) = s["results"]
    env = s["models"]["baseline:nearest-description"]
    for domain, legacy in res["per_domain"].items():
        est = env["groups"]["domain"][domain]["bertscore_x10"]
        assert est["value"] == pytest.approx(legacy["bertscore_x10"], abs=1e-9)
        if est["ci_low"] is None:  # one sample, one class, or equal scores without a
            # declared range (BERTScore has none): no interval, and flagged
            assert {"n_1", "one_cluster", "constant_unbounded"} & set(est["flags"])
        else:
            assert est["ci_low"] <= legacy["bertscore_x10"] <= est["ci_high"]
        assert env["groups"]["domain"][domain]["terminology"]["value"] is None  # no judge
    pooled_bs = pooled(res["per_domain"], "bertscore_x10", "n_bertscore")
    assert env["metrics"]["bertscore_x10"]["value"] == pytest.approx(pooled_bs, abs=1e-9)
    assert s["partial"] is True and "PARTIAL" in (out / "summary.md").read_text("utf-8")
    recs = _records(out)
    rec = recs[0]
    (turn,) = rec.turns
    shots = rec.details["shots"]
    assert [i.role for i in turn.images] == ["shot 1", "shot 2", "target"]
    assert [i.path for i in turn.images[:2]] == [sh["image"] for sh in shots]
    assert all(sh["description"] in turn.prompt for sh in shots)
    assert "at most 50 words" in turn.prompt
    # the expert description is the reference; the baseline copies a shot's description
    assert rec.reference and rec.reference not in turn.prompt
    assert rec.answer in [sh["description"] for sh in shots]
    assert 0 < (rec.scores["bertscore_x10"] or 0) < 10 and rec.state.value == "scored"


def test_empty_description_scores_zero_only_beside_real_scores() -> None:
    rows = [{"domain": "Bei", "outcome": "scored", "bertscore_status": "scored",
             "judge_status": "unscored", "judge_reason": "judge down"},
            {"domain": "Bei", "outcome": "unparsed"},
            {"domain": "Tie", "outcome": "unparsed"}]
    zeros = zero_domains(rows)
    assert zeros == {"bertscore_x10": {"Bei"}, "terminology": set(), "richness": set()}
    # BERTScore scored the first answer: scored; with only the judge asked: unscored
    assert description_state(rows[0], bertscore=True, judged=True)[0].value == "scored"
    state, why = description_state(rows[0], bertscore=False, judged=True)
    assert state.value == "unscored" and why == "judge down"
    assert description_state(rows[0], bertscore=False, judged=False)[0].value == "scored"


def _zip_release(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(REAL / "tie", src / "tie")
    rel = tmp_path / "rel"
    rel.mkdir()
    subprocess.run(["zip", "-q", "-r", "-P", "s3cret", str(rel / "tie.zip"), "tie"], cwd=src,
                   check=True)
    shutil.copyfile(REAL / "tie_annotations.json", rel / "tie_annotations.json")
    return rel


@pytest.mark.skipif(shutil.which("zip") is None, reason="needs the 'zip' tool to encrypt")
def test_zip_password_never_reaches_the_run_folder(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    rel = _zip_release(tmp_path)
    out = tmp_path / "run"
    argv = ["run", "hcsu-discrimination", "--data", str(rel), "--zip-password", "s3cret",
            "--model", "baseline:random", "--k", "2", "--limit", "2", "--out", str(out)]
    monkeypatch.setattr(sys, "argv", ["heritage-eval", *argv])
    assert main(argv) == 0  # a new folder: the zip is extracted into OUT/extracted
    assert (out / "extracted" / "tie").is_dir()
    for name in ("run.json", "summary.json", "summary.md", "samples.jsonl"):
        assert "s3cret" not in (out / name).read_text("utf-8"), name
    prov = _summary(out)["provenance"]
    assert "--zip-password ***" in prov["command"]
    config = json.loads((out / "run.json").read_text("utf-8"))["config"]
    assert "zip_password" not in config and "zip_password_env" not in config
    assert main(argv) == 0  # the same command again resumes in the folder
    # the password from the environment: same run, same folder
    env_argv = [a for a in argv if a not in ("--zip-password", "s3cret")]
    monkeypatch.setenv("HCSU_ZIP_PASSWORD", "s3cret")
    assert main(env_argv) == 0


def test_study_writes_envelopes_and_refuses_another_config(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ks"
    args = ["hcsu", "k-sweep", "--data", str(REAL), "--model", "baseline:random",
            "--distractor-pool", "all", "--ks", "2-3", "--limit", "2", "--out", str(out)]
    assert main(args) == 0
    recs = _records(out)
    assert len(recs) == 2 * 4 and len({r.id for r in recs}) == len(recs)
    assert {r.groups["k"] for r in recs} == {"2", "3"}
    assert all(r.id.endswith(f"#k={r.groups['k']}") for r in recs)
    s = _summary(out)
    assert [r["k"] for r in s["results"]] == [2, 3] and s["partial"] is True
    for r in s["results"]:
        est = s["models"]["baseline:random"]["groups"]["k"][str(r["k"])]["accuracy"]
        assert est["value"] == pytest.approx(r["avg_accuracy"], abs=1e-12)
    capsys.readouterr()
    assert main([*args, "--seed", "5"]) == 2  # another configuration in the same --out
    err = capsys.readouterr().err
    assert "--resume" in err and "--overwrite" in err
    assert main([*args, "--seed", "5", "--overwrite"]) == 0


def test_commands_are_light_and_baselines_found() -> None:
    code = ("import sys\n"
            "from heritage_eval.cli.main import build_parser\n"
            "build_parser(['--help'])\n"
            "heavy = [m for m in sys.modules if m.split('.')[0] in "
            "('sklearn', 'skimage', 'cv2', 'torch', 'pandas', 'matplotlib')]\n"
            "assert not heavy, heavy\n"
            "assert 'heritage_eval.benchmarks.hcsu.baselines' not in sys.modules\n"
            "from heritage_eval.models.base import create_backend\n"
            "print(type(create_backend('baseline:image-similarity')).__name__,\n"
            "      type(create_backend('baseline:nearest-description')).__name__)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ImageSimilarityBaseline", "NearestDescriptionBaseline"]
