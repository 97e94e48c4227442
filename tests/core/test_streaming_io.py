"""Streamed writing (issue 11): request keys unchanged, chunked redaction equal to line by
line, the atomic line writer, and the envelope folded one record at a time."""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from heritage_eval.core import redact as redact_mod
from heritage_eval.core.benchmark import MetricSpec, RecordSink
from heritage_eval.core.cache import request_key
from heritage_eval.core.engine import stream_samples
from heritage_eval.core.images import file_digest
from heritage_eval.core.record import ResponseRecord, SampleRecord, TurnRecord
from heritage_eval.core.store import AtomicLineWriter
from heritage_eval.core.summary import EnvelopeAccumulator, envelope
from heritage_eval.core.types import GenerationSettings, ImagePart, Message, Outcome
from heritage_eval.stats import macro_mean_estimate, mean_estimate

SECRET = "s3cr3t-TOKEN-value-42"


@pytest.fixture
def secret() -> Iterator[str]:
    redact_mod.REDACTOR.add_secret(SECRET)
    yield SECRET
    redact_mod.REDACTOR.clear()


def old_request_key(identity: dict[str, Any], settings: GenerationSettings,
                    messages: list[Message], include_text: bool = True,
                    payload: dict[str, Any] | None = None) -> str:
    """The documented recipe of ``core/cache.py`` (the code before issue 11): one
    ``json.dumps(sort_keys=True, ensure_ascii=False)`` of the whole key object."""
    msgs = []
    for m in messages:
        parts: list[dict[str, Any]] = []
        for p in m.content:
            if isinstance(p, ImagePart):
                parts.append({"image_sha256": file_digest(p.path, p.page)})
            elif include_text:
                parts.append({"text": p.text})
        msgs.append({"role": m.role, "content": parts})
    key_obj: dict[str, Any] = {"model": identity, "settings": settings.model_dump(mode="json"),
                               "messages": msgs}
    if payload is not None:
        blob_p = json.dumps(payload, sort_keys=True, ensure_ascii=False)
        key_obj["payload_sha256"] = hashlib.sha256(blob_p.encode("utf-8")).hexdigest()
    blob = json.dumps(key_obj, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def test_request_key_unchanged(tmp_path: Path) -> None:
    img = tmp_path / "a.png"
    Image.new("L", (8, 8), 128).save(img)
    prompt = '释文:\n"引号" \\ 反斜杠 <res>…</res> \t 𠀀'  # quotes, escapes, astral char
    identity = {"backend": "openai", "model": "m", "base_url": "http://h/v1",
                "nested": {"z": 1, "a": [1.5, None, True]}}
    settings = GenerationSettings(temperature=0.0, max_tokens=64)
    cases = [
        ([Message.user(ImagePart(path=str(img)), prompt)], True, None),
        ([Message.user(ImagePart(path=str(img)), prompt)], False, None),
        ([Message.user(ImagePart(path=str(img)), prompt), Message.assistant("答"),
          Message.user("第二轮")], True, {"sample_id": "s/1", "k": ["甲", 2]}),
        ([Message.user(ImagePart(path=str(img)))], True, {}),
    ]
    for messages, include_text, payload in cases:
        expected = old_request_key(identity, settings, messages, include_text, payload)
        assert request_key(identity, settings, messages, include_text, payload) == expected
        # the remembered prompt encoding gives the same key on the next call
        assert request_key(identity, settings, messages, include_text, payload) == expected
    # a different prompt text gives a different key (the text is part of the key)
    other = [Message.user(ImagePart(path=str(img)), prompt + "!")]
    assert request_key(identity, settings, other) != request_key(
        identity, settings, [Message.user(ImagePart(path=str(img)), prompt)])


LINES = [
    '{"a": "plain 甲骨"}',
    f'{{"err": "Authorization: Bearer {SECRET}"}}',
    '{"u": "see https://user:pa55word@host/x?api_key=abcdef123&q=1"}',
    '{"h": "x-api-key: zzzzzzzz"}',
    "authorization:",  # a header name at the end of a line ...
    "tok123456789 next line",  # ... does not mask the start of the next line
    "Bearer",
    "abcdefghijk",
    '{"k": "sk-abcdefghijklmnop1234"}',
    "",
    f"{SECRET}{SECRET}",
]


def test_redact_lines_equals_line_by_line(secret: str) -> None:
    expected = "".join(redact_mod.redact(line) + "\n" for line in LINES)
    assert redact_mod.redact_lines(LINES) == expected
    assert secret not in expected and "pa55word" not in expected
    # per line, the name at a line's end leaves the next line alone (hand-checked)
    assert "tok123456789 next line\n" in expected and "\nabcdefghijk\n" in expected
    # a line holding a line break falls back to line by line
    odd = ["a\nAuthorization: Basic qwertyuiop", "b"]
    assert redact_mod.redact_lines(odd) == "".join(redact_mod.redact(x) + "\n" for x in odd)


def test_writer_masks_secrets_on_chunk_edges(tmp_path: Path, secret: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(AtomicLineWriter, "CHUNK_LINES", 3)
    lines = [f"line {i} {secret}" if i % 3 in (0, 2) else f"line {i}" for i in range(10)]
    out = tmp_path / "s.jsonl"
    with AtomicLineWriter(out) as w:
        for line in lines:
            w.write(line)
    text = out.read_text(encoding="utf-8")
    assert secret not in text
    assert text.splitlines() == [x.replace(secret, "***") for x in lines]
    assert w.n_lines == 10


def test_writer_crash_keeps_previous_file(tmp_path: Path) -> None:
    out = tmp_path / "samples.jsonl"
    out.write_text("old\n", encoding="utf-8")

    def lines() -> Iterator[str]:
        yield "new 1"
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError), AtomicLineWriter(out) as w:
        for line in lines():
            w.write(line)
    assert out.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["samples.jsonl"]  # no temp file left


METRICS = (MetricSpec("acc", "Acc", macro_over="g", by=("g",)),)


def rec(i: int, g: str, acc: float | None, state: Outcome = Outcome.SCORED,
        text: str = "", finish: str = "stop") -> SampleRecord:
    return SampleRecord(id=f"r{i}", benchmark="toy", model="m", groups={"g": g},
                        state=state, scores={"acc": acc},
                        turns=[TurnRecord(prompt=text, response=ResponseRecord(
                            text=text, finish_reason=finish, cached=i % 2 == 0))])


def test_accumulator_values() -> None:
    records = [rec(0, "a", 1.0), rec(1, "a", 0.0), rec(2, "a", 1.0),
               rec(3, "b", 0.0, finish="length"), rec(4, "b", 1.0),
               rec(5, "b", 0.0, Outcome.UNPARSED), rec(6, "b", None, Outcome.ERROR)]
    acc = EnvelopeAccumulator(METRICS, ("g",))
    for r in records:
        acc.add(r)
    env = acc.envelope("toy")
    block = env["models"]["m"]
    # hand: a = 2/3, b = (0 + 1 + 0)/3 = 1/3 (unparsed counts, error not); macro = 1/2
    assert block["metrics"]["acc"]["value"] == pytest.approx(0.5)
    assert block["groups"]["g"]["a"]["acc"]["value"] == pytest.approx(2 / 3)
    assert block["groups"]["g"]["b"]["acc"]["n"] == 3
    assert block["states"] == {"scored": 5, "unparsed": 1, "error": 1, "unscored": 0}
    assert block["response_outcomes"] == {"cached": 4, "finish:length": 1, "finish:stop": 6}
    # r3 stopped at the token limit with no text: cut before any answer, counted apart
    assert env["run_limits"]["truncated"] == 0 and env["run_limits"]["n_records"] == 7
    assert env["run_limits"]["truncated_no_answer"] == 1
    # the intervals are the stats package's own, on the values in record order
    ref = macro_mean_estimate([1.0, 0.0, 1.0, 0.0, 1.0, 0.0], list("aaabbb"), None,
                              seed=0, n_resamples=2000).to_dict()
    assert {k: block["metrics"]["acc"][k] for k in ref} == ref
    inv = mean_estimate([0.0] * 5 + [1.0], None, seed=0, n_resamples=2000).to_dict()
    assert {k: block["invalid_rate"][k] for k in inv} == inv
    assert envelope("toy", records, METRICS, ("g",)) == env  # the list path is the same


class _CountSink(RecordSink):
    def __init__(self) -> None:
        self.n = 0

    def add(self, record: SampleRecord) -> None:
        self.n += 1

    def body(self) -> dict[str, Any]:
        return {"n": self.n}


def test_stream_keeps_no_record(tmp_path: Path) -> None:
    """2,000 records of ~60 KB of text each are written; what stays in memory is a
    small tuple per record (<< 1 KB), not the text."""
    big = "甲" * 30_000

    def records() -> Iterator[SampleRecord]:
        for i in range(2000):
            yield rec(i, "ab"[i % 2], float(i % 2), text=big + str(i))

    acc, sink = EnvelopeAccumulator(METRICS, ("g",)), _CountSink()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    n = stream_samples(tmp_path / "samples.jsonl", records(), acc, sink)
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert n == 2000 and sink.n == 2000 and acc.n_records == 2000
    assert kept < 2000 * 1024, kept  # the texts alone are 2000 x 60 KB = 120 MB
    lines = (tmp_path / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2000 and json.loads(lines[7])["id"] == "r7"
