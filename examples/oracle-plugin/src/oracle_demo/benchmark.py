"""``oracle-recognition``: the benchmark class the engine drives.

One sample = one glyph image; one conversation of one user turn (the image, then the
prompt of :mod:`oracle_demo.answers`); one record per glyph, grouped by ``period``. The
score ``accuracy`` is 1 when the reference is among the first ``k`` candidates of the
answer, else 0; the platform turns those 0/1 values into Acc@k with Wilson intervals,
overall and per period.

What this class does *not* do, because the engine does it for every benchmark:
``--limit`` (it only says, in :meth:`limit_key`, that the first N glyphs *of each
period* are kept) and PARTIAL; the ``--model-failures`` rule (an empty answer reaches
:meth:`score` as ``""`` under ``wrong`` and as a failed turn under ``exclude``); the
flags and counts of model failures and truncation; the response cache, resuming and the
run folder; intervals; redaction of secrets.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from heritage_eval.plugin import (
    Benchmark,
    Conversation,
    ItemResult,
    LoadedData,
    Message,
    MetricSpec,
    Outcome,
    Response,
    ResponseRecord,
    RunConfig,
    RunContext,
    SampleRecord,
    TurnRecord,
)
from oracle_demo.answers import candidates, prompt
from oracle_demo.loader import Glyph, GlyphSet, image_path, load_glyphs
from oracle_demo.options import Options
from oracle_demo.report import period_body, render_markdown

NAME = "oracle-recognition"


class OracleRecognition(Benchmark):
    """See the module docstring. ``LoadedData.extra`` holds ``glyphs`` (the
    :class:`GlyphSet`) and ``labels`` (its distinct answers, offered to baselines)."""

    name: ClassVar[str] = NAME
    help: ClassVar[str] = "recognise single oracle-bone-style glyphs (Acc@k per period)"
    description: ClassVar[str] = (
        "Show a model one glyph image at a time and score whether it names the modern "
        "character (Acc@K: the reference among its first K candidates), per period, with "
        "95 % intervals. Writes samples.jsonl, summary.json and summary.md to --out.")
    group_keys: ClassVar[tuple[str, ...]] = ("period",)
    #: 0/1 scores (Wilson intervals), per period; the engine fills ``{k}`` from the
    #: run's options, so the column reads Acc@1, Acc@5 …
    metrics: ClassVar[tuple[MetricSpec, ...]] = (
        MetricSpec("accuracy", "Acc@{k}", by=("period",)),)
    Options: ClassVar[type[Options]] = Options
    default_max_tokens: ClassVar[int] = 256
    limit_help: ClassVar[str | None] = ("evaluate only the first N glyphs of each period (a "
                                        "quick try; the run is marked PARTIAL)")

    def limit_key(self, sample: Glyph) -> str:
        return sample.period

    def load(self, config: RunConfig) -> LoadedData:
        """The glyph set of ``--data``. Raises ``UsageError`` (nothing written) as
        :func:`~oracle_demo.loader.load_glyphs` does."""
        opts = config.options
        assert isinstance(opts, Options)
        glyphs = load_glyphs(opts.data)
        return LoadedData(samples=glyphs.glyphs, image_root=str(glyphs.root),
                          warnings=[g.load_error for g in glyphs.glyphs if g.load_error],
                          info={"data": str(glyphs.root), **glyphs.counts()},
                          extra={"glyphs": glyphs, "labels": glyphs.labels})

    def plan(self, sample: Glyph, ctx: RunContext, data: LoadedData) -> Conversation | None:
        if sample.load_error:
            return None  # score() makes its error record; nothing is sent
        opts = ctx.config.options
        assert isinstance(opts, Options)
        glyphs: GlyphSet = data.extra["glyphs"]
        message = Message.model_validate({"role": "user", "content": [
            {"type": "image", "path": image_path(glyphs, sample)},
            {"type": "text", "text": prompt(opts.k)}]})
        # payload: what offline baselines read (baseline:random picks among "options",
        # oracle-replay looks the answer up by "sample_id"); never the reference
        return Conversation(turns=(message,), payload={"sample_id": sample.id,
                                                       "options": data.extra["labels"]})

    def score(self, data: LoadedData, results: Mapping[str, ItemResult],
              ctx: RunContext) -> list[SampleRecord]:
        opts = ctx.config.options
        assert isinstance(opts, Options)
        out = []
        for glyph in data.samples:
            res = results.get(glyph.id)
            resp = res.responses[-1] if res is not None and res.responses else None
            out.append(self._record(glyph, resp, ctx, str(data.image_root), opts.k))
        return out

    def _record(self, glyph: Glyph, resp: Response | None, ctx: RunContext, root: str,
                k: int) -> SampleRecord:
        """One glyph's record: ``error`` (image unusable, request failed, or a model
        failure left out), ``unparsed`` (no character in the answer: 0) or ``scored``."""
        sent = (resp.meta.get("sent_image_sizes") or [None])[0] if resp else None
        turn = TurnRecord.model_validate({
            "prompt": prompt(k), "response": ResponseRecord.from_response(resp),
            "images": [{"path": glyph.image, "role": "glyph",
                        "sent_width": sent[0] if sent else None,
                        "sent_height": sent[1] if sent else None}]})
        record = SampleRecord(
            schema="heritage-eval/sample/1", id=glyph.id, benchmark=self.name,
            model=ctx.backend.spec, groups={"period": glyph.period}, state=Outcome.ERROR,
            scores={"accuracy": None}, turns=[turn], image_root=root,
            reference=glyph.answer, source=glyph.source, details={"k": k})
        if glyph.load_error or resp is None or resp.text is None:
            record.error = glyph.load_error or (resp.error if resp else "not sent")
            # data: never sent; model: the model's failure left out (--model-failures
            # exclude, applied by the engine before score); api: the request failed
            record.details["error_kind"] = ("data" if glyph.load_error else "model"
                                            if resp and resp.meta.get("failure") else "api")
            return record
        found = candidates(resp.text, k)
        record.details["candidates"] = found
        record.answer = " ".join(found) if found else None
        record.state = Outcome.SCORED if found else Outcome.UNPARSED
        record.scores["accuracy"] = 1.0 if glyph.answer in found else 0.0
        return record

    def aggregate(self, records: Sequence[SampleRecord], data: LoadedData,
                  ctx: RunContext) -> dict[str, Any]:
        opts = ctx.config.options
        assert isinstance(opts, Options)
        return period_body(records, ctx.backend.spec, opts.k)

    def render_markdown(self, summary: Mapping[str, Any]) -> str:
        return render_markdown(summary)

    def provenance(self, data: LoadedData, ctx: RunContext) -> dict[str, Any]:
        opts = ctx.config.options
        assert isinstance(opts, Options)
        text = prompt(opts.k)
        return {"k": opts.k, "prompt": text,
                "prompt_hash": hashlib.sha256(text.encode()).hexdigest()[:16]}
