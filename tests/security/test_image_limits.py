"""Issue 10, item 3 end to end: a decompression bomb in a release is one error sample.

The 441 Mpx PNG (21,000 x 21,000, a few dozen KB) is refused from its header, before
decoding, with the file and its size in the sample's error; the other samples run, and
nothing of the bomb is sent.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from PIL import Image

from heritage_eval.cli.main import main
from tests.core.test_images_store import write_zero_png
from tests.fake_server import chat_reply, fake_openai_server


def test_bomb_in_a_release_is_a_per_sample_error(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: one bomb decoding for a minute in 2.9 GB, or stopping the run
    folder = tmp_path / "release" / "stele"
    folder.mkdir(parents=True)
    Image.new("RGB", (32, 32), (255, 255, 255)).save(folder / "good.png")
    bomb = write_zero_png(folder / "bomb.png", 21_000, 21_000)
    (folder / "conv.jsonl").write_text(
        '{"image": "good.png", "human_gt": "天地"}\n{"image": "bomb.png", "human_gt": "玄黃"}\n',
        encoding="utf-8")
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("天地")
        start = time.perf_counter()
        rc = main(["run", "ancient-bench", "--data", str(tmp_path / "release"), "--model",
                   "openai:vlm", "--base-url", srv.base_url, "--retries", "0",
                   "--out", str(tmp_path / "run")])
        elapsed = time.perf_counter() - start
        assert len(srv.requests) == 1  # only good.png was sent
    assert rc == 0 and elapsed < 30
    good, bad = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").open()]
    assert good["state"] == "scored" and bad["state"] == "error"
    assert f"image {bomb} is 21,000 x 21,000 = 441,000,000 pixels, over the " \
           "400,000,000-pixel decode limit" in bad["error"]
