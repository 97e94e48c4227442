"""Issue 10, items 8, 9, 13, 16, 18 and 20 on HCSU: content-filter refusals, truncated
answers, blank crops in canonicalization, an unreadable annotation file or a truncated
release zip (only that domain is lost), ``--data`` pointed at ``bei/``, and the
robustness study's model message.

Runs use the bundled demo data (``data/demo/hcsu``: 2 classes x 35 images per domain)
and a local OpenAI-compatible server; values are worked out by hand in the comments.
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from heritage_eval.benchmarks.hcsu.canonical import STATUS_NO_GLYPH, canonicalize_array
from heritage_eval.benchmarks.hcsu.canonical_batch import canonicalize_tree
from heritage_eval.benchmarks.hcsu.loader import load_hcsu
from heritage_eval.cli.main import main
from tests.fake_server import Scripted, chat_reply, fake_openai_server

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "hcsu"
FILTERED = {"id": "x", "object": "chat.completion", "choices": [],
            "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {
                "hate": {"filtered": True, "severity": "high"}}}]}


def _text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else " ".join(
        p.get("text", "") for p in content if isinstance(p, dict))


def _bei_texts() -> list[str]:
    ds = load_hcsu(DEMO)
    return [c.description for c in ds.classes.values() if c.domain == "Bei" and c.description]


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "samples.jsonl").read_text("utf-8").splitlines()]


def _summary(out: Path) -> dict[str, Any]:
    return dict(json.loads((out / "summary.json").read_text("utf-8")))


def _serve_bei_filtered_tie_cut(srv: Any, tie: Scripted) -> None:
    bei = _bei_texts()

    def reply(body: dict[str, Any]) -> Scripted:
        if any(d in _text(body) for d in bei):
            return Scripted(body=FILTERED)  # every Bei question: refused
        return tie
    srv.responder = reply


@pytest.mark.parametrize("policy", ["error", "wrong"])
def test_discrimination_refusal_and_truncation(tmp_path: Path, policy: str) -> None:
    # kinds: a content filter hidden in a generic error (or scored); a multiple-choice
    # answer cut at max tokens before any letter not flagged as truncated
    with fake_openai_server() as srv:
        _serve_bei_filtered_tie_cut(srv, chat_reply("After comparing the candidates, the "
                                                    "answer is", finish_reason="length"))
        extra = ["--refusals", policy]  # "error" = the old name of --model-failures exclude
        rc = main(["run", "hcsu-discrimination", "--data", str(DEMO), "--model",
                   "openai:vlm", "--base-url", srv.base_url, "--k", "2", "--limit", "1",
                   "--retries", "0", "--out", str(tmp_path / "run"), *extra])
    recs = {r["groups"]["domain"]: r for r in _records(tmp_path / "run")}
    bei, tie = recs["Bei"], recs["Tie"]
    # Tie: cut before any letter -> unparsed (wrong, accuracy 0) and truncated
    assert (tie["state"], tie["scores"]["accuracy"]) == ("unparsed", 0.0)
    assert tie["details"]["truncated"] is True
    assert tie["turns"][0]["response"]["finish_reason"] == "length"
    assert bei["turns"][0]["response"]["failure"] == "content_filter"
    assert bei["details"]["refused"] is True
    summary = _summary(tmp_path / "run")
    entry = summary["results"][0]
    if policy == "error":
        assert rc == 0  # Tie was answered (unparsed is an answer)
        assert (bei["state"], bei["error"]) == ("error", "refused: content filter")
        assert entry["errors"]["reasons"] == [["refused: content filter", 1]]
        assert entry["per_domain"]["Bei"]["n"] == 0
    else:
        assert (bei["state"], bei["scores"]["accuracy"]) == ("unparsed", 0.0)
        assert entry["per_domain"]["Bei"]["n"] == 1
        assert entry["per_domain"]["Bei"]["accuracy"] == 0.0
    trunc = summary["truncation"]["openai:vlm"]
    # one response per domain reached the model's answer: Tie 1 of 1 truncated (100 %);
    # Bei: none with the error policy (refused, no text), 1 empty answer with 'wrong'
    assert trunc["groups"]["Tie"] == {"n_responses": 1, "n_truncated": 1, "rate": 1.0}
    assert summary["refusals"]["openai:vlm"]["n"] == 1
    md = (tmp_path / "run" / "summary.md").read_text("utf-8")
    assert "| Tie | 1 | 1 | 100.00 |" in md
    assert "Refused: 1 (content filter 1, model refusal 0)" in md


def test_description_refusal_counts_wrong_as_an_empty_description(tmp_path: Path) -> None:
    # kind: --refusals wrong must make a refused description an empty (unparsed) one
    with fake_openai_server() as srv:
        _serve_bei_filtered_tie_cut(srv, chat_reply("Square, bold strokes", finish_reason="length"))
        assert main(["run", "hcsu-description", "--data", str(DEMO), "--model", "openai:vlm",
                     "--base-url", srv.base_url, "--limit", "1", "--retries", "0",
                     "--no-bertscore", "--refusals", "wrong",
                     "--out", str(tmp_path / "run")]) == 0
    recs = {r["groups"]["domain"]: r for r in _records(tmp_path / "run")}
    assert recs["Bei"]["state"] == "unparsed" and recs["Bei"]["details"]["refused"] is True
    assert recs["Tie"]["details"]["truncated"] is True


@pytest.mark.parametrize(("pixels", "why"), [
    (np.full((64, 64), 200, np.uint8), "contrast range 0 grey level(s) (200–200)"),
    (np.zeros((64, 64), np.uint8), "contrast range 0 grey level(s) (0–0)"),
    (None, "contrast range 1 grey level(s) (200–201)"),
])
@pytest.mark.parametrize("is_bei", [False, True])
def test_blank_crop_is_no_glyph(pixels: Any, why: str, is_bei: bool) -> None:
    # kind: a blank crop turned into an all-white 256 x 256 "canonical" image
    if pixels is None:  # uniform 200 with one pixel at 201
        pixels = np.full((64, 64), 200, np.uint8)
        pixels[10, 10] = 201
    res = canonicalize_array(pixels, is_bei)
    assert (res.status, res.ok) == (STATUS_NO_GLYPH, False)
    assert res.reason == f"{why} below the minimum 24"


def test_no_ink_left_after_thresholding_is_no_glyph() -> None:
    # kind: contrast present but no glyph: 4 isolated dark pixels are 4 components of
    # 1 px, below the filter's ceil(0.0005 x 64 x 64) = 3 px, so none is kept and the
    # foreground fraction is 0
    pixels = np.full((64, 64), 220, np.uint8)
    pixels[30, 30] = pixels[5, 50] = pixels[50, 5] = pixels[60, 60] = 0
    res = canonicalize_array(pixels, False)
    assert res.status == STATUS_NO_GLYPH
    assert res.reason == "foreground fraction 0.0000 at or below 0.001 (no ink)"


def test_blank_crops_are_left_out_of_the_build(tmp_path: Path,
                                               caplog: pytest.LogCaptureFixture) -> None:
    # kind: blank crops written to the canonical tree and kept in its annotations
    src = tmp_path / "src"
    cls = src / "tie" / "a-楷书"
    cls.mkdir(parents=True)
    Image.new("RGB", (64, 64), (200, 200, 200)).save(cls / "blank.png")
    glyph = np.full((64, 64, 3), 230, np.uint8)
    glyph[16:48, 28:36] = 20  # a vertical stroke: 8 x 32 px = 6.25 % ink
    Image.fromarray(glyph).save(cls / "ok.png")
    records = [{"filename": f"a-楷书/{n}.png", "char": "一", "calligrapher": "a",
                "script_type": "楷书"} for n in ("blank", "ok")]
    (src / "tie_annotations.json").write_text(json.dumps(records, ensure_ascii=False),
                                              encoding="utf-8")
    report = canonicalize_tree(src, tmp_path / "dst", workers=1, progress=False)
    assert (report.written, report.errors) == (1, [])
    assert report.no_glyph == [f"{cls / 'blank.png'}: no glyph found: contrast range 0 "
                               "grey level(s) (200–200) below the minimum 24"]
    assert not (tmp_path / "dst" / "tie" / "a-楷书" / "blank.png").exists()
    assert (tmp_path / "dst" / "tie" / "a-楷书" / "ok.png").is_file()
    kept = json.loads((tmp_path / "dst" / "tie_annotations.json").read_text("utf-8"))
    assert [r["filename"] for r in kept] == ["a-楷书/ok.png"]
    manifest = json.loads((tmp_path / "dst" / "canonicalize.json").read_text("utf-8"))
    assert manifest["no_glyph"] == report.no_glyph
    assert "no glyph found" in caplog.text


def _copy_demo(root: Path) -> Path:
    shutil.copytree(DEMO, root)
    return root


@pytest.mark.parametrize(("content", "why"), [
    ("[{\"filename\": ", "cannot read annotation file"),
    ("{\"filename\": \"x.png\"}", "expected a JSON list of records, got dict"),
])
def test_bad_annotation_file_costs_only_its_domain(tmp_path: Path, content: str, why: str,
                                                   capsys: pytest.CaptureFixture[str]
                                                   ) -> None:
    # kind: one malformed (or non-list) annotation file stopped the whole run
    data = _copy_demo(tmp_path / "data")
    ann = data / "tie_annotations.json"
    ann.write_text(content, encoding="utf-8")
    assert main(["run", "hcsu-discrimination", "--data", str(data), "--model",
                 "baseline:image-similarity", "--k", "2", "--limit", "2",
                 "--out", str(tmp_path / "run")]) == 0
    domains = {r["groups"]["domain"] for r in _records(tmp_path / "run")}
    assert domains == {"Bei"}  # the other domain ran
    problems = _summary(tmp_path / "run")["problems"]
    assert any(str(ann) in p and why in p and p.endswith("domain Tie not loaded")
               for p in problems)
    assert "domain Tie not loaded" in (tmp_path / "run" / "summary.md").read_text("utf-8")
    assert "domain Tie not loaded" in capsys.readouterr().err


def test_truncated_zip_costs_only_its_domain(tmp_path: Path) -> None:
    # kind: a truncated release zip stopped the whole run
    data = _copy_demo(tmp_path / "data")
    archive = data / "tie.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted((data / "tie").rglob("*.png")):
            zf.write(path, f"tie/{path.relative_to(data / 'tie').as_posix()}")
    shutil.rmtree(data / "tie")
    blob = archive.read_bytes()
    archive.write_bytes(blob[: len(blob) // 2])  # cut in the middle: no central directory
    assert main(["run", "hcsu-discrimination", "--data", str(data), "--model",
                 "baseline:image-similarity", "--k", "2", "--limit", "2",
                 "--out", str(tmp_path / "run")]) == 0
    assert {r["groups"]["domain"] for r in _records(tmp_path / "run")} == {"Bei"}
    problems = _summary(tmp_path / "run")["problems"]
    assert any(p.startswith(f"cannot read archive {archive}") and
               p.endswith("domain Tie not loaded") for p in problems)


def test_only_part_unreadable_still_fails_with_its_reason(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    # kind: when nothing at all can load, the reason (not a generic "no data") is shown
    data = tmp_path / "data"
    shutil.copytree(DEMO / "tie", data / "tie")
    (data / "tie_annotations.json").write_text("{", encoding="utf-8")
    assert main(["run", "hcsu-discrimination", "--data", str(data), "--model",
                 "baseline:image-similarity", "--out", str(tmp_path / "run")]) == 2
    assert f"cannot read annotation file {data / 'tie_annotations.json'}" in \
        capsys.readouterr().err


def test_data_pointed_at_a_domain_folder_gets_a_parent_hint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # kind: --data .../bei (one level too deep) said only "no HCSU data"
    assert main(["run", "hcsu-discrimination", "--data", str(DEMO / "bei"), "--model",
                 "baseline:image-similarity", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert f"looks like one domain folder: pass its parent {DEMO.resolve()}" in err


def test_robustness_names_description_model_and_tasks(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    # kind: the README command exits 2 with a message that does not say how to fix it
    assert main(["hcsu", "robustness", "--data", str(DEMO), "--model",
                 "baseline:image-similarity", "--k", "5",
                 "--out", str(tmp_path / "rob")]) == 2
    err = capsys.readouterr().err
    assert "--description-model" in err and "--tasks discrimination" in err
    assert not (tmp_path / "rob").exists()


@pytest.mark.slow
def test_no_hugging_face_progress_bars_in_the_output(tmp_path: Path) -> None:
    # kind: transformers' "Loading weights" bars leaking into the output when BERTScore
    # loads its model (a fresh process, so nothing earlier silenced them)
    import subprocess
    import sys

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("TRANSFORMERS_VERBOSITY", None)
    env.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
    proc = subprocess.run(
        [sys.executable, "-m", "heritage_eval.cli.main", "run", "hcsu-description",
         "--data", str(DEMO), "--model", "baseline:nearest-description", "--limit", "1",
         "--out", str(tmp_path / "run")], capture_output=True, text=True, env=env,
        timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Loading weights" not in proc.stderr + proc.stdout
    summary = json.loads((tmp_path / "run" / "summary.json").read_text("utf-8"))
    assert summary["provenance"]["bertscore"] is not None  # BERTScore did load
