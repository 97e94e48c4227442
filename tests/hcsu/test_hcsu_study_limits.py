"""The HCSU study commands print the end-of-run limit warnings as the run commands do
(``summary.json["run_limits"]`` → stderr), through a real k-sweep against a loopback
server speaking the OpenAI protocol whose every answer stops at the token limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.cli.main import main
from tests.fake_server import Scripted, chat_reply, fake_openai_server
from tests.hcsu.conftest import REAL


def test_k_sweep_warns_about_answers_cut_at_the_token_limit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def respond(body: dict[str, Any]) -> Scripted:
        return chat_reply("<answer>A</answer>", finish_reason="length")

    out = tmp_path / "ks"
    with fake_openai_server() as srv:
        srv.responder = respond
        assert main(["hcsu", "k-sweep", "--data", str(REAL), "--model", "openai:vlm",
                     "--base-url", srv.base_url, "--ks", "2", "--limit", "3",
                     "--out", str(out)]) == 0
    limits = json.loads((out / "summary.json").read_text(encoding="utf-8"))["run_limits"]
    n = limits["n_records"]
    # every answer ended with finish reason 'length': all of them are counted
    assert n > 0 and limits["truncated"] == n
    err = capsys.readouterr().err
    assert (f"warning: {n} of {n} answer(s) stopped at the token limit (finish reason "
            "'length')") in err
