"""The cheaper ways issue 23 builds a ``samples.jsonl`` line give the same text.

- ``record.json_text`` (one C encoder made once, no circular-reference bookkeeping)
  against ``json.dumps(value, ensure_ascii=False)``, the reference, on generated JSON
  values (every JSON type, non-ASCII and lone-surrogate strings, NaN and infinities,
  nesting) and on whole records;
- ``envelope.res_block_flags`` against ``parsing_base.block_flags(text, "res")`` on
  generated answers made of ``<res>`` / ``</res>`` tags and text;
- ``pipeline.conversation_for`` shares one ``TextPart`` per prompt and gives the same
  conversation as building it anew.
"""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.benchmarks.ancient_bench.envelope import res_block_flags
from heritage_eval.benchmarks.ancient_bench.pipeline import conversation_for
from heritage_eval.benchmarks.ancient_bench.prompts import PromptSet
from heritage_eval.core.parsing_base import block_flags
from heritage_eval.core.record import (
    ImageRef,
    ResponseRecord,
    SampleRecord,
    TurnRecord,
    json_text,
)
from heritage_eval.core.types import ImagePart, Message, Outcome, Sample, TextPart

texts = st.text(alphabet=st.sampled_from(
    ["a", "Z", " ", "\n", "\t", '"', "\\", "/", "\x00", "\x1f", "\x7f", "é", "天", "□",
     "\u2028", "\udcff", "\U0001f600"]), max_size=12)
scalars = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | texts)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(texts, inner, max_size=4), max_leaves=20)
#: what a record may hold (``model_dump`` itself refuses a lone surrogate)
record_texts = texts.filter(lambda t: "\udcff" not in t)
record_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | record_texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(record_texts, inner,
                                                               max_size=4), max_leaves=20)


@settings(max_examples=2000, deadline=None)
@given(values)
def test_json_text_is_json_dumps(value: object) -> None:
    assert json_text(value) == json.dumps(value, ensure_ascii=False)


def test_json_text_special_floats() -> None:
    # written as json.dumps writes them (allow_nan=True): values by hand
    assert json_text([math.nan, math.inf, -math.inf, 0.1, 1e16, -0.0]) == \
        "[NaN, Infinity, -Infinity, 0.1, 1e+16, -0.0]"
    assert json_text("天\n") == '"天\\n"'


@settings(max_examples=300, deadline=None)
@given(record_texts, record_texts, st.floats(0, 1) | st.none(),
       st.dictionaries(record_texts, record_values, max_size=3))
def test_record_line_is_json_dumps_of_its_dump(prompt: str, answer: str,
                                               score: float | None,
                                               details: dict[str, object]) -> None:
    rec = SampleRecord(
        id="a/1", benchmark="b", model="m", groups={"medium": "Seal"}, state=Outcome.SCORED,
        scores={"ned_score": score}, answer=answer, reference=answer, source="f:1",
        details=details, turns=[TurnRecord(
            prompt=prompt, images=[ImageRef(path="a.png", width=4, height=3)],
            response=ResponseRecord(text=answer, latency_s=0.25, cached=True))])
    assert rec.to_json_line() == json.dumps(rec.model_dump(mode="json", by_alias=True),
                                            ensure_ascii=False)


answers = st.lists(st.sampled_from(["<res>", "</res>", "<res", "res>", "</res", "x", "天",
                                    " ", "\n", "<RES>", "<re", "s>"]),
                   max_size=12).map("".join)


@settings(max_examples=3000, deadline=None)
@given(answers)
def test_res_block_flags_is_block_flags(text: str) -> None:
    assert res_block_flags(text) == block_flags(text, "res")


def test_res_block_flags_cases() -> None:
    # flags by hand from block_flags' docstring
    assert res_block_flags(None) == ()
    assert res_block_flags("<res>天</res>") == ()
    assert res_block_flags("<res></res>") == ()
    assert res_block_flags("<res>a</res><res>b</res>") == ("blocks_differ", "several_blocks")
    assert res_block_flags("<res>a</res><res>") == ("unclosed_block",)
    assert res_block_flags("</res><res>a") == ("unclosed_block",)


def test_conversation_shares_the_prompt_part() -> None:
    prompts = PromptSet()
    a = Sample(id="seals/1", category="seals", image="/r/seals/images/1.png")
    b = Sample(id="seals/2", category="seals", image="/r/seals/images/2.png")
    ca, cb = conversation_for(a, prompts), conversation_for(b, prompts)
    assert ca.turns[0].content[1] is cb.turns[0].content[1]
    # the same conversation as built with a new TextPart (the form before issue 23)
    text = prompts.prompt("seals")
    assert ca.turns[0] == Message.user(ImagePart(path="/r/seals/images/1.png"),
                                       TextPart(text=text))
    assert ca.payload == {"sample_id": "seals/1", "category": "seals"}
