"""Broken images in real runs: each is that one sample's DATA error, the run goes on, and
a re-run after the image is repaired sends those samples again.

Through the real CLI: Ancient-Bench with the real ``rapidocr`` and with ``openai:``
against the fake server (:mod:`tests.fake_server`), MUSE and HCSU with ``openai:``. Every
kind of broken image of :mod:`tests.core.broken_images` is used (the rule:
:mod:`heritage_eval.core.data_errors`; the runner-level grid over every backend is
``tests/core/test_image_data_errors.py``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.cli.main import main
from tests.core.broken_images import KINDS, break_image
from tests.fake_server import FakeServer, chat_reply, fake_openai_server
from tests.muse.test_run import build_question_file

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo"
CATEGORIES = ("seals", "calligraphys", "bronze_rubbings")  # 3 images each in the demo


def _records(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "samples.jsonl").read_text("utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def _ab_release(root: Path) -> list[Path]:
    """The demo's categories :data:`CATEGORIES` copied under ``root`` (no manifest);
    returns their 9 images, sorted."""
    for cat in CATEGORIES:
        shutil.copytree(DEMO / "ancient_bench" / cat, root / cat)
    return sorted(root.glob("*/images/*.jpg"))


def _ab_run(data: Path, out: Path, model: str, srv: FakeServer | None) -> int:
    extra = ["--base-url", srv.base_url, "--retries", "0"] if srv is not None else []
    return main(["run", "ancient-bench", "--data", str(data), "--model", model, *extra,
                 "--out", str(out)])


@pytest.mark.parametrize("model", [pytest.param("rapidocr", marks=pytest.mark.slow),
                                   "openai:vlm"])
def test_ancient_bench_broken_images_are_data_errors_and_resent_after_repair(
        model: str, tmp_path: Path) -> None:
    # guards against: the reported bug — a truncated image or a text file in its place
    # filed as "api" (summary.md "error 3 (data 1, API 2 …)") with Pillow's file handle in
    # the message; and a repaired image never read again. Expected by hand: 6 of the 9
    # images broken, one per kind -> 6 data errors, 3 scored; after repair all 9 scored,
    # the 6 repaired sent again (cached false), the 3 others from the cache
    if model == "rapidocr":
        pytest.importorskip("rapidocr")
    data, out = tmp_path / "data", tmp_path / "run"
    images = _ab_release(data)
    broken = dict(zip(sorted(KINDS), images[:6], strict=True))
    for kind, path in broken.items():
        break_image(path, kind)
    srv_cm = fake_openai_server() if model.startswith("openai:") else None
    srv = srv_cm.__enter__() if srv_cm is not None else None
    try:
        if srv is not None:
            srv.responder = lambda body: chat_reply("<res>王</res>")
        assert _ab_run(data, out, model, srv) == 0
        if srv is not None:
            assert len(srv.requests) == 3  # only the good images were sent
        recs = _records(out)
        for kind, path in broken.items():
            rec = recs[f"{path.parent.parent.name}/{path.stem}"]
            assert rec["state"] == "error" and rec["details"]["error_kind"] == "data", rec
            assert str(path) in rec["error"] and KINDS[kind] in rec["error"], rec["error"]
            assert "<_io." not in rec["error"]
            resp = rec["turns"][0]["response"]
            # a missing image is found by the loader and never planned; the others fail
            # while the request is built
            assert resp is None if kind == "missing" else resp["failure"] == "image_unreadable"
        assert sum(r["state"] == "scored" for r in recs.values()) == 3
        summary = json.loads((out / "summary.json").read_text("utf-8"))
        assert summary["results"][0]["errors_by_kind"] == {"data": 6, "api": 0, "model": 0}
        md = (out / "summary.md").read_text("utf-8")
        assert "error 6 (data 6, API 0, model failures left out 0)" in md
        # repaired: the same command sends exactly the 6 repaired samples
        for path in broken.values():
            shutil.copyfile(DEMO / "ancient_bench" / path.relative_to(data), path)
        assert _ab_run(data, out, model, srv) == 0
        if srv is not None:
            assert len(srv.requests) == 3 + 6
    finally:
        if srv_cm is not None:
            srv_cm.__exit__(None, None, None)
    recs = _records(out)
    assert {r["state"] for r in recs.values()} == {"scored"}
    repaired = {f"{p.parent.parent.name}/{p.stem}" for p in broken.values()}
    assert {i for i, r in recs.items() if not r["turns"][0]["response"]["cached"]} == repaired


#: MUSE turns of build_question_file whose first image is art1.png, by question: each
#: dialogue turn after a failed one is "not sent" (its error names the first failure)
ART1_TURNS = 4 + 1 + 1 + 2  # dialogue, localization (art1 + art2), position, remote


@pytest.mark.parametrize("kind", sorted(k for k in KINDS if k != "missing"))
def test_muse_broken_image_is_a_data_error_and_resent_after_repair(kind: str,
                                                                   tmp_path: Path) -> None:
    # guards against: a MUSE turn whose image cannot be encoded filed as a transport
    # failure or scored as an empty answer. Expected: build_question_file sends 10 turns;
    # art1.png broken -> only the 2 turns without art1 (count, scene on art2) are sent;
    # the 8 art1 turns are data errors naming art1.png; after repair exactly those 8 are
    # sent. (A missing image is the loader's data error: tests/muse/test_run.py.)
    qfile = build_question_file(tmp_path)
    art1 = tmp_path / "art1.png"
    good = art1.read_bytes()
    break_image(art1, kind)
    out = tmp_path / "run"
    args = ["run", "muse", "--questions", str(qfile), "--model", "openai:vlm",
            "--retries", "0", "--out", str(out)]
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("[option] A")
        assert main([*args, "--base-url", srv.base_url]) == 0
        assert len(srv.requests) == 2
        failed = [r for r in _records(out).values()
                  if r["turns"] and r["turns"][0]["images"]
                  and r["turns"][0]["images"][0]["path"].endswith("art1.png")]
        assert len(failed) == ART1_TURNS
        for rec in failed:
            assert rec["state"] == "error" and rec["details"]["error_kind"] == "data", rec
            assert str(art1) in rec["error"] and KINDS[kind] in rec["error"], rec["error"]
            assert rec["turns"][0]["response"]["failure"] == "image_unreadable"
            assert "model_failure" not in rec["details"]
        art1.write_bytes(good)
        assert main([*args, "--base-url", srv.base_url]) == 0
        assert len(srv.requests) == 2 + ART1_TURNS


def test_hcsu_broken_images_are_found_by_the_loader_naming_the_file(tmp_path: Path) -> None:
    # guards against: an HCSU image that cannot be read sent (and filed as an API
    # failure) or named by Pillow's file handle. HCSU checks every image when it loads
    # (benchmarks/hcsu/loader.image_problem) and keeps it in its class for the seeded
    # draws (schema.StyleClass.images): each sample whose target or drawn reference is a
    # broken file is an error record naming it, never sent; the others are sent as on the
    # intact data. Expected set: the questions of a run on an intact copy that show one
    # of the broken files (target or candidate).
    intact, data = tmp_path / "intact", tmp_path / "data"
    shutil.copytree(DEMO / "hcsu", intact)
    shutil.copytree(DEMO / "hcsu", data)
    images = sorted((data / "tie").glob("*/*.png"))[:6]
    broken = dict(zip(sorted(KINDS), images, strict=True))
    for kind, path in broken.items():
        break_image(path, kind)
    argv = ["run", "hcsu-discrimination", "--k", "5", "--model", "openai:vlm",
            "--retries", "0"]
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("A")
        assert main([*argv, "--data", str(intact), "--base-url", srv.base_url,
                     "--out", str(tmp_path / "run-intact")]) == 0
    names = {str(p.relative_to(data)) for p in images}
    expected = {k for k, r in _records(tmp_path / "run-intact").items()
                if any(x.replace(f"{intact}/", "") in names for x in [
                    r["details"]["target_image"],
                    *(c["image"] for c in r["details"]["candidates"])])}
    assert len(expected) >= 6  # the six broken targets at least
    out = tmp_path / "run"
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("A")
        code = main([*argv, "--data", str(data), "--base-url", srv.base_url,
                     "--out", str(out)])
        assert code == 0 and len(srv.requests) == 140 - len(expected)  # demo: 140
    errors = {r["id"]: r for r in _records(out).values() if r["state"] == "error"}
    assert set(errors) == expected
    for path in broken.values():
        rec = next(r for r in errors.values() if str(path) in r["error"])
        assert "<_io." not in rec["error"]
    for rec in errors.values():
        assert any(str(p) in rec["error"] for p in images)  # names a broken file
        assert not any(t["response"] for t in rec["turns"])  # never sent
