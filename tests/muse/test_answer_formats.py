"""The paper's answer forms for tasks 7 and 8 (App. B.1: "A / B / C / D only"; B.2: "a
single uppercase letter") are the default; ``--set answer_style=tagged`` restores the
``[option] <letter>`` line; the parser reads both forms, and the run summary reports the
invalid rate per task either way.

Generated from the real sample; answers come from a real loopback HTTP server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.benchmarks.muse.prompts import answer_block, choice_format, letter_format
from heritage_eval.benchmarks.muse.questions import Question, read_questions
from heritage_eval.cli.main import main
from tests.conftest import realdata
from tests.fake_server import chat_reply, fake_openai_server

REAL = realdata("muse")
TASKS = ["cultural_identification", "jigsaw_puzzle"]


def test_answer_block_per_style() -> None:
    assert answer_block("jigsaw_puzzle", "paper", 4) == letter_format(4)
    assert "(A, B, C or D)" in letter_format(4)
    assert "(A or B)" in letter_format(2)
    assert answer_block("jigsaw_puzzle", "tagged", 4) == choice_format("option", 4)
    # tasks without a paper form keep the tagged line under either style
    assert answer_block("scene_classification", "paper", 4) == choice_format("option", 4)


def _generate(tmp_path: Path, *extra: str) -> tuple[Path, list[Question]]:
    qfile = tmp_path / "q.jsonl"
    assert main(["muse", "generate", "--annotations", str(REAL / "annotations.json"),
                 "--images", str(REAL / "images"), "--out", str(qfile), "--no-progress",
                 "--tasks", *TASKS, *extra]) == 0
    header, questions = read_questions(qfile)
    assert header.params["answer_style"] == ("tagged" if extra else "paper")
    return qfile, questions


def _run(qfile: Path, out: Path, reply: str) -> dict[str, Any]:
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply(reply)
        assert main(["run", "muse", "--questions", str(qfile), "--model", "openai:m",
                     "--base-url", srv.base_url, "--out", str(out), "--retries", "0"]) == 0
    per_task: dict[str, Any] = json.loads((out / "summary.json").read_text())[
        "results"][0]["per_task"]
    return per_task


@pytest.mark.slow
def test_paper_forms_default_and_both_forms_parse(tmp_path: Path) -> None:
    qfile, questions = _generate(tmp_path)
    for q in questions:
        n = len(q.turns[0].options)
        assert q.turns[0].prompt.endswith(letter_format(n))
        assert "[option]" not in q.turns[0].prompt
    # expected accuracy of always answering "A": share of questions keyed A (from the file)
    share_a = {t: [q.turns[0].answer == "A" for q in questions if q.turns[0].task == t]
               for t in TASKS}
    for reply in ("A", "[option] A"):
        pt = _run(qfile, tmp_path / f"run_{len(reply)}", reply)
        for t in TASKS:
            assert pt[t]["n"] == len(share_a[t]) and pt[t]["invalid_rate"] == 0.0
            assert pt[t]["score"] == pytest.approx(sum(share_a[t]) / len(share_a[t]))
    # a hedge is unparsed: 100 % invalid on both tasks, reported per task
    pt = _run(qfile, tmp_path / "run_hedge", "A or B")
    assert [pt[t]["invalid_rate"] for t in TASKS] == [1.0, 1.0]


@pytest.mark.slow
def test_tagged_style_restores_option_line(tmp_path: Path) -> None:
    _, questions = _generate(tmp_path, "--set", "answer_style=tagged")
    assert {q.turns[0].prompt.rsplit("\n", 1)[-1] for q in questions} == {
        "[option] <one letter from A to D>"}
