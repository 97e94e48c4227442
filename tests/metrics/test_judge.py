"""Rubric judge: strict JSON parsing and judging over a real local HTTP server."""

from __future__ import annotations

import pytest

from heritage_eval.core.types import Outcome
from heritage_eval.metrics.judge import (
    Judgment,
    Rubric,
    mean_scores,
    parse_judgment,
    run_judge,
)
from heritage_eval.models.base import BackendOptions, create_backend
from tests.fake_server import Scripted, chat_reply, fake_openai_server

RUBRIC = Rubric(name="t", system="You grade.", instructions="Facts: {context}\nText: {text}",
                dimensions=("terminology", "richness"))


@pytest.mark.parametrize("text, scores", [
    ('{"terminology": 7, "richness": 5.5}', {"terminology": 7.0, "richness": 5.5}),
    ('```json\n{"terminology": 0, "richness": 10, "why": "x"}\n```',
     {"terminology": 0.0, "richness": 10.0}),
])
def test_valid_judgments(text: str, scores: dict[str, float]) -> None:
    j = parse_judgment(text, RUBRIC)
    assert j.outcome is Outcome.SCORED and j.scores == scores


@pytest.mark.parametrize("text, reason", [
    (None, "empty"),
    ("", "empty"),
    # issue 10 item 11 changed this case: prose before the object is now parsed (scored
    # 7 / 5, in tests/hardening/test_judge_replies.py); prose without one is still refused
    ("Sure! I would give it a 7.", "not a JSON object"),
    ('[7, 5]', "not an object"),
    ('{"terminology": 7}', "lacks 'richness'"),
    ('{"terminology": "7", "richness": 5}', "not a number"),
    ('{"terminology": true, "richness": 5}', "not a number"),
    ('{"terminology": 11, "richness": 5}', "outside [0, 10]"),
    ('{"terminology": -1, "richness": 5}', "outside"),
])
def test_strict_parsing_gives_unscored_never_zero(text: str | None, reason: str) -> None:
    j = parse_judgment(text, RUBRIC)
    assert j.outcome is Outcome.UNSCORED and reason in (j.reason or "")
    assert j.score("terminology") is None


def test_mean_ignores_unscored() -> None:
    js = [Judgment(Outcome.SCORED, {"terminology": 6.0}), Judgment(Outcome.UNSCORED),
          Judgment(Outcome.SCORED, {"terminology": 9.0})]
    assert mean_scores(js, "terminology") == pytest.approx(7.5)  # (6 + 9) / 2
    assert mean_scores([Judgment(Outcome.UNSCORED)], "terminology") is None


def test_run_judge_over_http() -> None:
    with fake_openai_server() as srv:
        def reply(body: dict) -> Scripted:  # type: ignore[type-arg]
            text = body["messages"][-1]["content"]
            if "Text: good" in text:
                return chat_reply('{"terminology": 8, "richness": 6}')
            if "Text: chatty" in text:
                return chat_reply("I would give it an 8.")
            return Scripted(status=400, body={"error": "bad request"})
        srv.responder = reply
        backend = create_backend("openai:judge", BackendOptions(base_url=srv.base_url,
                                                                max_retries=0))
        out = run_judge(RUBRIC, {"a": ("good", "seal script"), "b": ("chatty", "x"),
                                 "c": ("broken", "x")}, backend, None)
    assert out["a"].scores == {"terminology": 8.0, "richness": 6.0}
    assert out["b"].outcome is Outcome.UNSCORED and "not a JSON object" in (out["b"].reason or "")
    assert out["c"].outcome is Outcome.UNSCORED and "HTTP 400" in (out["c"].reason or "")
    sent = {m["messages"][-1]["content"] for m in srv.requests}
    assert "Facts: seal script\nText: good" in sent
    assert all(m["temperature"] == 0.0 and m["messages"][0]["content"] == "You grade."
               for m in srv.requests)
