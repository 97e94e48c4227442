"""A whole benchmark in well under 100 lines: the cost of a fourth benchmark.

"Capitals": a JSONL file of ``{"id", "country", "continent", "capital"}``; one text turn
per line; exact-match accuracy per continent. Used by ``test_toy_benchmark.py`` through
the CLI, the Python API, the statistics and the comparison.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any

from heritage_eval.core.benchmark import Benchmark, LoadedData, MetricSpec, RunContext, UsageError
from heritage_eval.core.config import BenchmarkOptions, RunConfig
from heritage_eval.core.option_spec import opt
from heritage_eval.core.record import ResponseRecord, SampleRecord, TurnRecord
from heritage_eval.core.runner import ItemResult
from heritage_eval.core.types import Conversation, Message, Outcome

PROMPT = "What is the capital of {country}? Answer with the city name only."


class CapitalsOptions(BenchmarkOptions):
    data: Annotated[Path, opt("JSONL file")]


class Capitals(Benchmark):
    name = "toy-capitals"
    help = "toy benchmark: capitals of countries (exact match)"
    group_keys = ("continent",)
    metrics = (MetricSpec("accuracy", "Acc", macro_over="continent", by=("continent",)),)

    Options = CapitalsOptions

    def load(self, config: RunConfig) -> LoadedData:
        data = config.options.data  # type: ignore[attr-defined]
        if not data.is_file():
            raise UsageError(f"--data {data}: no such file")
        rows = [json.loads(line) for line in data.read_text().splitlines() if line]
        samples = [SimpleNamespace(**r) for r in rows]  # --limit: applied by the engine
        return LoadedData(samples=samples, info={"n": len(samples)})

    def plan(self, sample: Any, ctx: RunContext, data: LoadedData) -> Conversation:
        return Conversation(turns=(Message.user(PROMPT.format(country=sample.country)),))

    def score(self, data: LoadedData, results: Mapping[str, ItemResult],
              ctx: RunContext) -> list[SampleRecord]:
        out = []
        for s in data.samples:
            res = results.get(s.id)
            resp = res.responses[-1] if res and res.responses else None
            text = (resp.text or "").strip().rstrip(".") if resp and resp.ok else None
            state = Outcome.ERROR if resp is None or not resp.ok else (
                Outcome.SCORED if text else Outcome.UNPARSED)
            correct = float(bool(text) and text.lower() == s.capital.lower())
            out.append(SampleRecord(
                id=s.id, benchmark=self.name, model=ctx.backend.spec, state=state,
                groups={"continent": s.continent},
                scores={} if state == Outcome.ERROR else {"accuracy": correct},
                turns=[TurnRecord(prompt=PROMPT.format(country=s.country),
                                  response=ResponseRecord.from_response(resp))],
                answer=text or None, reference=s.capital,
                error=resp.error if resp is not None else "not sent"))
        return out

    def aggregate(self, records: Sequence[SampleRecord], data: LoadedData,
                  ctx: RunContext) -> dict[str, Any]:
        answered = [r for r in records if r.state in (Outcome.SCORED, Outcome.UNPARSED)]
        acc = sum(r.scores["accuracy"] or 0 for r in answered) / max(1, len(answered))
        return {"results": [{"model": ctx.backend.spec, "pooled_accuracy": acc}]}

    def render_markdown(self, summary: Mapping[str, Any]) -> str:
        m = next(iter(summary["models"].values()))["metrics"]["accuracy"]
        return f"# Capitals\n\nAcc {100 * m['value']:.2f}\n"
