"""End-of-run warnings for answers cut at the token limit and heavily downscaled images:
``summary.json["run_limits"]`` and the stderr lines, through a real run of Ancient-Bench
against a real loopback server speaking the OpenAI protocol (the image is really capped
by the client and its sent size reported)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from heritage_eval.cli.main import main
from heritage_eval.core.record import ImageRef, SampleRecord, TurnRecord
from heritage_eval.core.run_limits import downscale_factor, run_limit_lines, run_limits
from heritage_eval.core.types import Outcome
from tests.fake_server import FakeServer, Scripted, chat_reply, fake_openai_server


@pytest.fixture
def stele_server() -> Iterator[FakeServer]:
    """Answers every request; the stele rubbing's answer stops at the token limit."""
    def respond(body: dict[str, Any]) -> Scripted:
        text = body["messages"][-1]["content"][-1]["text"]
        if "stele" in text:  # the inscription_rubbings addition of the prompt
            return chat_reply("<res>永和九年歲在", finish_reason="length")
        return chat_reply("<res>王印</res>")

    with fake_openai_server() as srv:
        srv.responder = respond
        yield srv


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """Two media: a 40 x 20 seal and an 800 x 400 stele rubbing page."""
    root = tmp_path / "release"
    for cat, size, gt in (("seals", (40, 20), "王印"),
                          ("inscription_rubbings", (800, 400), "永和九年歲在癸丑")):
        (root / cat / "images").mkdir(parents=True)
        Image.new("RGB", size, (200, 200, 200)).save(root / cat / "images" / "p.png")
        (root / cat / "conv.jsonl").write_text(
            json.dumps({"image": "p.png", "human_gt": gt}, ensure_ascii=False) + "\n",
            encoding="utf-8")
    return root


def _run(data: Path, out: Path, server: FakeServer, *extra: str) -> int:
    return main(["run", "ancient-bench", "--data", str(data), "--model", "openai:vlm",
                 "--base-url", server.base_url, "--max-side", "100", "--out", str(out),
                 *extra])


def test_counts_in_summary_and_warning_lines(data: Path, tmp_path: Path,
                                             stele_server: FakeServer,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert _run(data, out, stele_server) == 0
    limits = json.loads((out / "summary.json").read_text(encoding="utf-8"))["run_limits"]
    # By hand: the 800 px page is sent at 100 px (--max-side 100): factor 800/100 = 8 > 4;
    # the 40 px seal is sent unchanged (factor 1). One answer ended with 'length'.
    assert limits == {"truncated": 1, "truncated_no_answer": 0, "downscaled": 1,
                      "n_records": 2, "warn_downscale": 4.0, "max_downscale": 8.0}
    err = capsys.readouterr().err
    assert ("warning: 1 of 2 answer(s) stopped at the token limit (finish reason "
            "'length')") in err and "raise --max-tokens" in err
    assert ("warning: 1 of 2 sample(s) had an image sent more than 4x smaller than the "
            "original on its longest side (largest: 8x)") in err
    # --warn-downscale changes no result: the same folder resumes (no configuration
    # conflict, no new request) and only the count changes (8 is not > 8).
    sent = len(stele_server.requests)
    assert _run(data, out, stele_server, "--warn-downscale", "8") == 0
    assert len(stele_server.requests) == sent
    limits = json.loads((out / "summary.json").read_text(encoding="utf-8"))["run_limits"]
    assert (limits["downscaled"], limits["warn_downscale"]) == (0, 8.0)
    assert "smaller than the original" not in capsys.readouterr().err


def test_bad_warn_downscale_is_a_usage_error(data: Path, tmp_path: Path,
                                             stele_server: FakeServer) -> None:
    with pytest.raises(SystemExit) as exc:
        _run(data, tmp_path / "run", stele_server, "--warn-downscale", "0.5")
    assert exc.value.code == 2
    assert not (tmp_path / "run").exists()


def _record(images: list[ImageRef], finish: str | None) -> SampleRecord:
    from heritage_eval.core.record import ResponseRecord

    turn = TurnRecord(prompt="p", images=images,
                      response=ResponseRecord(text="t", finish_reason=finish))
    return SampleRecord.model_validate({"id": "x", "benchmark": "b", "model": "m",
                                        "state": Outcome.SCORED, "turns": [turn]})


def test_factor_is_the_worst_image_of_the_record() -> None:
    # Two images: 5,795 x 16,745 sent at 708 x 2,048 (16745 / 2048 = 8.1762…) and a seal
    # sent whole; the record's factor is the larger one. Without sent sizes: None.
    big = ImageRef(path="a", width=5795, height=16745, sent_width=708, sent_height=2048)
    small = ImageRef(path="b", width=40, height=20, sent_width=40, sent_height=20)
    assert downscale_factor(_record([small, big], "stop")) == pytest.approx(16745 / 2048)
    assert downscale_factor(_record([ImageRef(path="c", width=9, height=9)], "stop")) is None
    limits = run_limits([_record([big], "length"), _record([small], "stop"),
                         _record([], None)], warn_downscale=8.0)
    assert limits == {"truncated": 1, "truncated_no_answer": 0, "downscaled": 1,
                      "n_records": 3, "warn_downscale": 8.0, "max_downscale": 8.176}
    # a response cut before any answer is counted apart (a model failure), with its line
    empty = _record([], "length").model_copy(deep=True)
    assert empty.turns[0].response is not None
    empty.turns[0].response.text = " "
    cut = run_limits([empty])
    assert (cut["truncated"], cut["truncated_no_answer"]) == (0, 1)
    assert run_limit_lines(cut) == [
        "1 of 1 response(s) stopped at the token limit before any answer (model failure "
        "truncated_no_answer, see the model-failure count); raise --max-tokens"]
    assert run_limit_lines({"truncated": 0, "downscaled": 0, "n_records": 3}) == []


def test_hcsu_run_prints_the_warning_too(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    # The HCSU run commands have their own handler; it ends with the same warning lines.
    root = tmp_path / "hcsu"
    records = []
    for style in ("甲-楷书", "乙-行书"):
        (root / "tie" / style).mkdir(parents=True)
        for stem in ("永_1", "和_1"):
            Image.new("L", (32, 32), 255).save(root / "tie" / style / f"{stem}.png")
            who, script = style.split("-")
            records.append({"filename": f"{style}/{stem}.png", "char": stem[0],
                            "calligrapher": who, "script_type": script,
                            "quality": "clear", "description": f"style of {who}"})
    (root / "tie_annotations.json").write_text(json.dumps(records, ensure_ascii=False),
                                               encoding="utf-8")
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("Let me think about the", finish_reason="length")
        assert main(["run", "hcsu-discrimination", "--data", str(root), "--model",
                     "openai:vlm", "--base-url", srv.base_url, "--k", "2",
                     "--out", str(tmp_path / "run")]) == 0
    limits = json.loads((tmp_path / "run" / "summary.json").read_text("utf-8"))["run_limits"]
    assert (limits["truncated"], limits["n_records"]) == (4, 4)  # 2 classes x 2 targets
    assert "warning: 4 of 4 answer(s) stopped at the token limit" in capsys.readouterr().err
