"""Cases found by a break-it review after the hardening work (issue 10, same kinds):

- a count answer of 1,000,000,000 made ``baseline:random``'s option list a billion long
  and the run died of memory (kind: one bad question stops everything);
- a secret in ``--model-option extra_body={"auth_token": …}`` reached every file (kind:
  a secret the process knows, not redacted);
- a model answer echoing the key was stored raw in ``cache.sqlite`` (same kind);
- a deep ``@images/x/../../../..`` reference crashed the record builder (kind: a path
  outside the data root is a per-sample error, never a crash).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path

import pytest
from pydantic import ValidationError

from heritage_eval.benchmarks.muse.questions import MAX_COUNT, Question
from heritage_eval.benchmarks.muse.run import ChanceOptions
from heritage_eval.core import redact
from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.types import Response
from tests.hardening.test_muse_question_input import _count


def test_a_huge_count_is_rejected_and_never_enumerated() -> None:
    with pytest.raises(ValidationError, match="over 1000"):
        Question.model_validate(_count("huge", 1_000_000_000))
    # even a file written before the check cannot make a billion chance options
    q = Question.model_validate(_count("ok", 7))
    q.turns[0].answer = 10**9
    assert ChanceOptions.from_questions([q]).max_count == MAX_COUNT


def test_secret_in_a_model_option_is_redacted() -> None:
    opts = argparse.Namespace(model_option=[
        'extra_body={"auth_token": "MOPTsecret5551", "top_k": 20}',
        "extra_body.api_key=MOPTsecret7772", "reasoning_effort=high"])
    redact.register_options(opts)
    text = "sent MOPTsecret5551 and MOPTsecret7772 with top_k 20 and effort high"
    assert redact.redact(text) == "sent *** and *** with top_k 20 and effort high"


def test_cache_never_stores_a_known_secret(tmp_path: Path) -> None:
    redact.REDACTOR.add_secret("CACHEsecret99887")
    cache = ResponseCache(tmp_path / "cache.sqlite")
    cache.put("k", "m", Response(text="the key is CACHEsecret99887"))
    cache.close()
    raw = sqlite3.connect(tmp_path / "cache.sqlite").execute(
        "SELECT response FROM responses").fetchone()[0]
    assert "CACHEsecret99887" not in raw and json.loads(raw)["text"] == "the key is ***"


def test_deep_parent_reference_does_not_crash_the_record_root(tmp_path: Path) -> None:
    from heritage_eval.benchmarks.muse.records import _artwork_root
    from heritage_eval.benchmarks.muse.run import load_question_set
    from tests.hardening.test_muse_question_input import _file

    qs = load_question_set(_file(tmp_path))
    root = _artwork_root(qs, "@images/x/../../../../../../../../tmp/secret.jpg")
    assert isinstance(root, Path)  # a folder, not IndexError


@pytest.mark.parametrize("answer", ["~3", "约三个", "3人左右", "At least 3",
                                    "There are three or more figures", "about 4 people"])
def test_hedged_counts_are_unparsed(answer: str) -> None:
    # kind: an approximate answer scored as an exact count ("Nothing is guessed")
    from heritage_eval.core.parsing_values import parse_number

    assert parse_number(answer).value is None


@pytest.mark.parametrize(("answer", "value"), [
    ("Three.", 3), ("三个人", 3), ("3 people walk over the bridge", 3),
    ("[count] 3\nThere are about 3 people", 3)])  # the tagged answer decides
def test_exact_counts_still_parse(answer: str, value: int) -> None:
    from heritage_eval.core.parsing_values import parse_number

    assert parse_number(answer).value == value


@pytest.mark.parametrize(("answer", "label"), [("我认为是C", "C"), ("应该是B", "B"),
                                               ("我認為是 D", "D")])
def test_chinese_opinion_markers_name_the_answer(answer: str, label: str) -> None:
    from heritage_eval.core.parsing import parse_choice

    assert parse_choice(answer, list("ABCD")).value == label


def test_judge_reasoning_is_not_a_judgment() -> None:
    # kind: reasoning text parsed as the answer (a <think> draft made the reply ambiguous)
    from heritage_eval.metrics.judge import Rubric, parse_judgment

    rubric = Rubric("t", "s", "i", ("terminology", "richness"), low=1, high=5, integer=True)
    reply = '<think>maybe {"terminology":1,"richness":1}</think>{"terminology":5,"richness":4}'
    judged = parse_judgment(reply, rubric)
    assert judged.outcome.value == "scored"
    nested = parse_judgment('{"scores": {"terminology": 5, "richness": 4}}', rubric)
    assert nested.outcome.value == "unscored" and "top level" in (nested.reason or "")


def test_first_contact_hints_for_folders(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    # kind: a wrong folder given where the toolkit could say which one was meant
    from heritage_eval.cli.main import main

    demo = Path(__file__).resolve().parents[2] / "data" / "demo"
    assert main(["run", "ancient-bench", "--data", str(demo), "--out",
                 str(tmp_path / "a")]) == 2
    assert f"did you mean {demo / 'ancient_bench'}?" in capsys.readouterr().err
    qdir = tmp_path / "qdir"
    qdir.mkdir()
    (qdir / "questions.jsonl").write_text("")
    assert main(["run", "muse", "--questions", str(qdir), "--model", "baseline:random",
                 "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "is a folder" in err and "questions.jsonl" in err
    assert not (tmp_path / "a").exists() and not (tmp_path / "m").exists()


@pytest.mark.parametrize(("answer", "value"), [("廿一", 21), ("廿一个人", 21), ("他们俩", 2),
                                               ("卅", 30)])
def test_more_chinese_numerals(answer: str, value: int) -> None:
    # kind: a numeral not recognised and partly read (廿一 was read as 1: a wrong count)
    from heritage_eval.core.parsing_values import parse_number

    assert parse_number(answer).value == value
