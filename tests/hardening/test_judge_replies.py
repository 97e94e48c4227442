"""Issue 10, item 11: judge replies on a 1–5 integer scale (exact inputs from the issue).

Kinds guarded against: a usable judgment wrapped in a fence or prose refused; an unusable
one (a string such as "4/5", a value outside the scale) scored, or cached as a success so
that a re-run can never ask again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.runner import RunItem, run_items
from heritage_eval.core.types import GenerationSettings, Outcome
from heritage_eval.metrics.judge import (
    Rubric,
    judge_conversation,
    mean_scores,
    parse_judgment,
    run_judge,
)
from heritage_eval.models.base import BackendOptions, ModelBackend, create_backend
from tests.fake_server import Scripted, chat_reply, fake_openai_server

LIKERT = Rubric(name="likert", system="You grade.", instructions="Facts: {context}\nText: {text}",
                dimensions=("terminology", "richness"), low=1, high=5, integer=True)
GOOD = '{"terminology": 5, "richness": 4}'
BAD = '{"terminology": "4/5", "richness": 7}'


@pytest.mark.parametrize("text", [
    # kind: a fenced ```json block (with prose around it) was refused
    f"```json\n{GOOD}\n```",
    f"My grades:\n```json\n{GOOD}\n```\nThanks.",
    # kind: prose before the object was refused as "not a JSON object"
    f"Here is my evaluation: {GOOD}",
])
def test_wrapped_judgments_are_parsed(text: str) -> None:
    j = parse_judgment(text, LIKERT)
    assert j.outcome is Outcome.SCORED and j.scores == {"terminology": 5.0, "richness": 4.0}


@pytest.mark.parametrize(("text", "reason"), [
    # kind: a fraction string is not an integer score
    (BAD, "'terminology' is not a number: '4/5'"),
    # kind: 7 on a 1–5 scale was accepted
    ('{"terminology": 4, "richness": 7}', "'richness'=7 outside [1, 5]"),
    # kind: a half point on an integer scale
    ('{"terminology": 4.5, "richness": 3}', "'terminology' is not an integer: 4.5"),
    # kind: two different judgments in one reply must not pick one
    ('{"terminology": 4, "richness": 3} or rather {"terminology": 5, "richness": 3}',
     "ambiguous: the judge answer holds 2 different JSON judgments"),
])
def test_unusable_judgments_are_unscored(text: str, reason: str) -> None:
    j = parse_judgment(text, LIKERT)
    assert (j.outcome, j.reason, j.scores) == (Outcome.UNSCORED, reason, {})


def _backend(url: str) -> ModelBackend:
    return create_backend("openai:judge", BackendOptions(base_url=url, max_retries=0))


def test_malformed_reply_reasked_then_failure_not_cached(tmp_path: Path) -> None:
    # kind: a malformed reply cached as a success (a re-run could never ask again)
    items = {"ok": ("good text", "seal"), "bad": ("odd text", "seal"),
             "late": ("late text", "seal")}
    replies = {"ok": [GOOD], "bad": [BAD, BAD, BAD], "late": [BAD, GOOD]}
    with fake_openai_server() as srv:
        def reply(body: dict[str, Any]) -> Scripted:
            key = next(k for k, (t, _) in items.items() if f"Text: {t}" in
                       body["messages"][-1]["content"])
            return chat_reply(replies[key].pop(0) if replies[key] else GOOD)
        srv.responder = reply
        with ResponseCache(tmp_path / "c.sqlite") as cache:
            out = run_judge(LIKERT, items, _backend(srv.base_url), cache, reask=2)
            cache.flush()
        assert len(srv.requests) == 1 + 3 + 2  # ok once; bad 1 + 2 re-asks; late 1 + 1
        assert out["ok"].scores == {"terminology": 5.0, "richness": 4.0}
        assert out["late"].scores == {"terminology": 5.0, "richness": 4.0}  # 2nd answer
        bad = out["bad"]
        assert bad.outcome is Outcome.UNSCORED and bad.raw == BAD
        assert bad.reason == ("judge request failed: judge reply unusable after 3 attempt(s):"
                              " 'terminology' is not a number: '4/5'")
        # excluded from the means (not a 0): mean of the two scored = (5 + 5) / 2
        assert mean_scores(list(out.values()), "terminology") == 5.0
        # re-run on the same cache: "ok" and "late" are cache hits, "bad" is asked again
        # (its replies are exhausted, so the server now answers GOOD)
        with ResponseCache(tmp_path / "c.sqlite") as cache:
            assert len(cache) == 2
            again = run_judge(LIKERT, items, _backend(srv.base_url), cache)
        assert len(srv.requests) == 6 + 1
        assert again["bad"].scores == {"terminology": 5.0, "richness": 4.0}


def test_stale_malformed_cache_entry_is_reasked(tmp_path: Path) -> None:
    # kind: a malformed reply cached by an older version (before this fix) stays unscored
    # forever; it is asked again under a separate key, and the good reply then hits
    settings = GenerationSettings(temperature=0.0, max_tokens=300)
    with fake_openai_server() as srv:
        srv.script = [chat_reply(BAD), chat_reply(GOOD)]
        with ResponseCache(tmp_path / "c.sqlite") as cache:
            # what the old run_judge did: the plain backend, so the BAD reply was cached
            run_items([RunItem(id="x", conversation=judge_conversation(LIKERT, "t", "c"))],
                      _backend(srv.base_url), settings, cache)
            cache.flush()
            out = run_judge(LIKERT, {"x": ("t", "c")}, _backend(srv.base_url), cache)
            cache.flush()
            assert out["x"].scores == {"terminology": 5.0, "richness": 4.0}
            assert len(srv.requests) == 2
            assert run_judge(LIKERT, {"x": ("t", "c")}, _backend(srv.base_url),
                             cache)["x"].scores == {"terminology": 5.0, "richness": 4.0}
            assert len(srv.requests) == 2  # both passes are cache hits now
