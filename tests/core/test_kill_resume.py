"""Kill a real ``heritage-eval run`` mid-way, then resume: nothing received is lost.

The model is a local OpenAI-compatible server (tests/fake_server.py) answering slowly;
the CLI runs in a subprocess that is SIGKILLed after a few answers arrived.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from PIL import Image

from tests.fake_server import Scripted, chat_reply, fake_openai_server

N_SAMPLES = 12


def _make_release(root: Path) -> None:
    cat = root / "inscription_rubbings"
    (cat / "images").mkdir(parents=True)
    lines = []
    for i in range(N_SAMPLES):
        Image.new("RGB", (40, 120), (i * 20, 0, 0)).save(cat / "images" / f"s{i:02d}.png")
        lines.append(json.dumps({"image": f"s{i:02d}.png", "human_gt": "君諱全"},
                                ensure_ascii=False))
    (cat / "conv.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _cmd(data: Path, out: Path, url: str) -> list[str]:
    return [sys.executable, "-m", "heritage_eval.cli.main", "run", "ancient-bench",
            "--data", str(data), "--model", "openai:fake-vlm", "--base-url", url,
            "--concurrency", "1", "--retries", "0", "--out", str(out)]


def _cached(out: Path) -> int:
    con = sqlite3.connect(out / "cache.sqlite")
    try:
        return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    finally:
        con.close()


def test_killed_run_resumes_sending_only_missing_requests(tmp_path: Path) -> None:
    data, out = tmp_path / "data", tmp_path / "run"
    _make_release(data)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with fake_openai_server() as srv:
        answer = chat_reply("<res>君諱全</res>").body
        srv.responder = lambda body: Scripted(delay_s=0.25, body=answer)
        proc = subprocess.Popen(_cmd(data, out, srv.base_url), env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while len(srv.requests) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # let the 5th answer arrive and be committed
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        sent_first = len(srv.requests)
        assert 5 <= sent_first < N_SAMPLES
        # Killed before the end: no summary was written, but the answers are journalled.
        assert not (out / "summary.json").exists()
        kept = _cached(out)
        assert kept >= sent_first - 1  # at most the one in flight is lost

        srv.responder = lambda body: chat_reply("<res>君諱全</res>")
        done = subprocess.run(_cmd(data, out, srv.base_url), env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        # The second run only asked for what the cache did not hold.
        assert len(srv.requests) - sent_first == N_SAMPLES - kept
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    row = summary["results"][0]
    assert row["per_category"]["inscription_rubbings"]["n"] == N_SAMPLES
    assert row["overall"]["ned_score"] == 1.0  # every answer equals the ground truth
    assert _cached(out) == N_SAMPLES
