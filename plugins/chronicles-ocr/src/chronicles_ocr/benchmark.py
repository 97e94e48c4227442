"""``chronicles-ocr``: the benchmark class the engine drives.

One sample = one image × task (:mod:`chronicles_ocr.loader`); one conversation of one
user turn: the image (for recognition, a copy with the red box, drawn into the run
folder's ``redbox/``), then the task's prompt (:mod:`chronicles_ocr.prompts`). The
record (:mod:`chronicles_ocr.records`) carries the task's score; the platform computes
each metric per script, per group (ancient / modern) and overall — with the metrics
macro-averaged over scripts, which is how the official summary averages: per-script
means first, then their mean over the scripts of a group (or of all seven). The
summary body (:mod:`chronicles_ocr.report`) adds the official workbook's two sheets.

The engine applies ``--limit`` (the first N images of each script and task), model
failures, the cache, intervals and the run folder. Runs stream: each record is built as
the engine asks for it (:meth:`ChroniclesOCR.iter_score`), written and folded into the
summary (:mod:`chronicles_ocr.summary_sink`), so memory stays flat in the records; a
large release is not held either (``LoadedData.samples`` re-reads it on each pass:
:data:`chronicles_ocr.loader.LAZY_FROM`).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from chronicles_ocr.loader import Release, Sample, load_release
from chronicles_ocr.names import SCRIPTS, TASK_BY_ID, TASKS
from chronicles_ocr.official_summary import SHEET_GROUPS
from chronicles_ocr.options import Options
from chronicles_ocr.prompts import PROMPTS, prompt_hashes
from chronicles_ocr.protocol import PROTOCOLS
from chronicles_ocr.records import build_record
from chronicles_ocr.redbox import draw
from chronicles_ocr.replay import RECORDED_SPEC
from chronicles_ocr.report import (
    aggregate_body,
    group_table,
    render_markdown,
    unscored_count,
)
from chronicles_ocr.summary_sink import SummarySink
from heritage_eval.plugin import (
    Benchmark,
    Conversation,
    ItemResult,
    LoadedData,
    Message,
    MetricSpec,
    ModelBackend,
    RunConfig,
    RunContext,
    SampleRecord,
    path_text,
)

NAME = "chronicles-ocr"
REDBOX_FOLDER = "redbox"
#: notes of the summary printed after the tables (the rest are counted)
NOTES_SHOWN = 10
#: the answers baseline:random chooses among for classification
CLASSIFY_OPTIONS = [f"字体分类：{s.zh}" for s in SCRIPTS]


def _metrics() -> tuple[MetricSpec, ...]:
    out = []
    for task in TASKS:
        out.append(MetricSpec(task.metric, task.metric_label, macro_over="script",
                              by=("script", "group"), decimals=1))
        if task.id == "spotting":
            out.append(MetricSpec("detection", "Detection F1", macro_over="script",
                                  by=("script", "group"), decimals=1))
    return tuple(out)


def options_of(config: RunConfig) -> Options:
    """The run's :class:`Options` (raises ``TypeError`` for another options type)."""
    opts = config.options
    if not isinstance(opts, Options):
        raise TypeError(f"expected chronicles-ocr options, got {type(opts).__name__}")
    return opts


class ChroniclesOCR(Benchmark):
    """See the module docstring. ``LoadedData.extra``: ``release`` (the
    :class:`~chronicles_ocr.loader.Release`), ``redbox`` (sample id -> the drawn image,
    relative to the run folder) and ``redbox_errors`` (sample id -> why none was
    drawn)."""

    name: ClassVar[str] = NAME
    help: ClassVar[str] = ("Chinese historical-script OCR over seven scripts: spotting, "
                           "recognition, parsing, classification (Chronicles-OCR)")
    description: ClassVar[str] = (
        "Show a model images of seven Chinese scripts (oracle bone to cursive) and score "
        "four rule-based tasks as the official Chronicles-OCR code does: spotting (F1 at "
        "IoU 0.75 with the character), recognition (the character in a red box), "
        "parsing (1 - NED) and script classification, per script and per group "
        "(ancient / modern), with 95 % intervals. Writes samples.jsonl, summary.json "
        "(with the official workbook's two sheets) and summary.md to --out.")
    group_keys: ClassVar[tuple[str, ...]] = ("script", "task", "group")
    metrics: ClassVar[tuple[MetricSpec, ...]] = _metrics()
    Options: ClassVar[type[Options]] = Options
    default_temperature: ClassVar[float] = 0.0
    default_max_tokens: ClassVar[int] = 4096
    limit_help: ClassVar[str | None] = (
        "evaluate only the first N images of each script and task (a quick try; the run "
        "is marked PARTIAL)")

    def limit_key(self, sample: Sample) -> str:
        return f"{sample.script}/{sample.task}"

    def load(self, config: RunConfig) -> LoadedData:
        """The release of ``--data`` and, for ``score``, the recorded answers (raises
        ``UsageError`` as :func:`~chronicles_ocr.loader.load_release` and
        :func:`~chronicles_ocr.scoring.load_recorded` do)."""
        from chronicles_ocr.scoring import ScoreOptions, load_recorded, recorded_info

        opts = options_of(config)
        release = load_release(opts.data, seed=opts.seed, tasks=opts.task_ids(),
                               scripts=opts.script_ids())
        info = release.info()
        extra: dict[str, Any] = {"release": release, "redbox": {}, "redbox_errors": {},
                                 "notes": []}
        if isinstance(opts, ScoreOptions):
            images = {s.image_path for s in release.samples}  # a pass of a large file
            extra["recorded"], extra["notes"] = load_recorded(opts, images)
            info["predictions"] = recorded_info(extra["recorded"])
        return LoadedData(samples=release.samples, image_root=str(release.root),
                          warnings=list(release.warnings), info=info, extra=extra)

    def refuse_model(self, backend: ModelBackend, data: LoadedData,
                     config: RunConfig) -> str | None:
        """``chronicles-recorded`` only serves ``score chronicles-ocr``."""
        if backend.backend == RECORDED_SPEC and "recorded" not in data.extra:
            return (f"{RECORDED_SPEC} answers nothing: it is the model of 'heritage-eval "
                    "score chronicles-ocr --predictions DIR' (to replay one model's "
                    "answers in a run: --model chronicles-replay:TAG --model-option "
                    "results=FILE)")
        return None

    def prepare(self, ctx: RunContext, data: LoadedData) -> None:
        """The notes of a ``chronicles-replay`` model (lines of its results file skipped
        or repeated) join the summary's notes, as ``score`` gives them."""
        from chronicles_ocr.replay import ReplayBackend

        if isinstance(ctx.backend, ReplayBackend):
            data.extra["notes"] += [f"{ctx.backend.spec}: {n}" for n in ctx.backend.notes]

    def _redbox(self, sample: Sample, ctx: RunContext, data: LoadedData) -> str | None:
        """Draw the red box of ``sample`` into the run folder; its path, or ``None`` (the
        reason kept in ``redbox_errors``)."""
        release: Release = data.extra["release"]
        assert sample.target is not None
        folder = ctx.config.out_dir() / REDBOX_FOLDER
        try:
            path = draw(release.root / sample.image_path, sample.target.box, folder)
        except (OSError, ValueError) as exc:
            data.extra["redbox_errors"][sample.id] = f"cannot draw the red box: {exc}"
            return None
        data.extra["redbox"][sample.id] = path.relative_to(ctx.config.out_dir()).as_posix()
        return str(path)

    def plan(self, sample: Sample, ctx: RunContext, data: LoadedData
             ) -> Conversation | None:
        if sample.load_error or sample.task not in TASK_BY_ID or "recorded" in data.extra:
            return None
        release: Release = data.extra["release"]
        image = path_text(str(release.root), sample.image_path)
        if sample.task == "recognition":
            if sample.target is None:
                return None
            drawn = self._redbox(sample, ctx, data)
            if drawn is None:
                return None
            image = drawn
        message = Message.model_validate({"role": "user", "content": [
            {"type": "image", "path": image},
            {"type": "text", "text": PROMPTS[sample.task]}]})
        payload: dict[str, Any] = {"sample_id": sample.id, "image_path": sample.image_path,
                                   "task": TASK_BY_ID[sample.task].zh}
        if sample.task == "classification":
            payload["options"] = CLASSIFY_OPTIONS
        return Conversation(turns=(message,), payload=payload)

    def score(self, data: LoadedData, results: Mapping[str, ItemResult],
              ctx: RunContext) -> list[SampleRecord]:
        """:meth:`iter_score` as a list."""
        return list(self.iter_score(data, results, ctx))

    def iter_score(self, data: LoadedData, results: Mapping[str, ItemResult],
                   ctx: RunContext) -> Iterator[SampleRecord]:
        """One record per sample, in sample order, built as asked for (``score``: one per
        model tag × sample, :func:`~chronicles_ocr.scoring.recorded_records`); each
        sample's result is looked up once, in sample order, and its red-box entry is
        dropped once used (a streamed run keeps nothing per sample)."""
        if "recorded" in data.extra:
            from chronicles_ocr.scoring import recorded_records

            yield from recorded_records(data, ctx)
            return
        opts = options_of(ctx.config)
        protocol = PROTOCOLS[opts.protocol]
        out_dir = str(Path(ctx.config.out_dir()).absolute())
        for sample in data.samples:
            res = results.get(sample.id)  # plans the sample (and draws its red box)
            resp = res.responses[-1] if res is not None and res.responses else None
            drawn = data.extra["redbox"].pop(sample.id, None)
            yield build_record(
                sample, resp, model=ctx.backend.spec, bench=self.name,
                root=str(data.image_root), protocol=protocol, seed=opts.seed,
                redbox=(out_dir, f"{out_dir}/{drawn}") if drawn else None,
                problem=data.extra["redbox_errors"].pop(sample.id, None))

    def record_sink(self, data: LoadedData, ctx: RunContext) -> SummarySink:
        """Streams (memory flat in the number of records but for a few numbers each):
        :class:`~chronicles_ocr.summary_sink.SummarySink`."""
        opts = options_of(ctx.config)
        return SummarySink(PROTOCOLS[opts.protocol], data.extra["notes"])

    def aggregate(self, records: Sequence[SampleRecord], data: LoadedData,
                  ctx: RunContext) -> dict[str, Any]:
        opts = options_of(ctx.config)
        return aggregate_body(records, PROTOCOLS[opts.protocol], data.extra["notes"])

    def render_markdown(self, summary: Mapping[str, Any]) -> str:
        return render_markdown(summary)

    def print_result(self, summary: Mapping[str, Any]) -> None:
        """The per-group table of the official summary, on stdout."""
        official = summary.get("official_summary") or {}
        print("\n".join(group_table({m: s.get(SHEET_GROUPS, [])
                                     for m, s in official.items()})))

    def print_diagnostics(self, summary: Mapping[str, Any],
                          records: Sequence[SampleRecord] | None) -> None:
        """How many spotting answers the official rule left out, and the summary's notes
        (folders and rows of ``--predictions`` passed over; at most
        :data:`NOTES_SHOWN`, the rest counted), on stderr. Both are read from the
        summary (``results[].counts``, ``notes``): a streamed run gives no
        ``records``."""
        left_out = unscored_count(summary)
        if left_out:
            print(f"note: {left_out} spotting answer(s) had no readable box list and are "
                  "left out of Spotting / Detection, as the official summary does "
                  "(--protocol corrected scores them 0)", file=sys.stderr)
        notes = [str(n) for n in summary.get("notes") or []]
        for note in notes[:NOTES_SHOWN]:
            print(f"note: {note}", file=sys.stderr)
        if len(notes) > NOTES_SHOWN:
            print(f"note: {len(notes) - NOTES_SHOWN} more note(s) in summary.md",
                  file=sys.stderr)

    def provenance(self, data: LoadedData, ctx: RunContext) -> dict[str, Any]:
        opts = options_of(ctx.config)
        joined = "\n".join(PROMPTS[t.id] for t in TASKS)
        return {"protocol": PROTOCOLS[opts.protocol].as_dict(), "seed": opts.seed,
                "prompt_hashes": prompt_hashes(),
                "prompt_hash": hashlib.sha256(joined.encode()).hexdigest()[:16]}
