"""Ancient-Bench on the platform: :class:`AncientBench`, what ``run ancient-bench`` runs.

One sample = one artifact image and its ground-truth transcription; one conversation of
one user turn (the image, then the base rules plus the medium's addition). Scoring and
the summary tables are the benchmark's own, unchanged (``records``, ``report``); the
records go into the platform envelope (``envelope``). Headline metrics: NED score and
character F1, Overall = unweighted mean of the media (the paper's definition), with
intervals combining the media's standard errors (docs/intervals.md). Samples are single
images, independent of one another: no clustering.

Errors are counted by kind (``results[0].errors_by_kind``: ``data`` — a bad line, a
missing image, a ground truth empty after normalisation, rejected at load and never sent;
``api`` — the request failed after its retries, never scored as an empty answer;
``model`` — a model failure under ``--model-failures exclude``). Truncated answers are flagged and
their rate per medium is in the body's ``truncation`` key; the refusal count in
``refusals`` (:mod:`heritage_eval.benchmarks.outcomes`).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from itertools import tee
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from heritage_eval.benchmarks.ancient_bench.line_bound import samples_bound
from heritage_eval.benchmarks.ancient_bench.normalize import (
    NormalizationFlags,
    normalize_text,
    tokenize,
)
from heritage_eval.benchmarks.ancient_bench.option_names import BENCHMARK
from heritage_eval.benchmarks.ancient_bench.options import RunOptions, flags_from_args
from heritage_eval.core.benchmark import (
    Benchmark,
    LoadedData,
    MetricSpec,
    RunContext,
    UsageError,
)
from heritage_eval.core.compact_ids import CompactIds
from heritage_eval.core.lazy_samples import ReiterableSamples, file_identities

# Loading this class is all that ``run ancient-bench --help`` needs (its options), so the
# loader, the scoring, the tables and the engine's parts are imported where a method
# uses them (issue 23: start-up within 0.3 s of ``python -c pass``).
if TYPE_CHECKING:
    from heritage_eval.benchmarks.ancient_bench.loader import Release
    from heritage_eval.benchmarks.ancient_bench.prompts import PromptSet
    from heritage_eval.benchmarks.ancient_bench.summary_sink import BodySink
    from heritage_eval.core.backends import ModelBackend
    from heritage_eval.core.config import RunConfig
    from heritage_eval.core.record import SampleRecord
    from heritage_eval.core.runner import ItemResult
    from heritage_eval.core.types import Conversation, Sample

#: Default ``--max-tokens``: room for the longest transcription. The paper's longest
#: ground truth has 1,666 characters (§3, long-text media). No tokenizer of the models
#: evaluated is installed offline (``tokenizers`` / ``transformers`` are, but with no
#: Chinese vocabulary), so the bound is UTF-8 bytes: a byte-level BPE tokenizer (Qwen,
#: GPT-4o, Llama 3) never makes more tokens than the text has bytes. Measured answers
#: (``<res>`` + ground truth + ``</res>``): bundled demo at most 232 bytes (77 characters),
#: the real sample 269 bytes (90), the official demo ground truth 2,241 bytes (780
#: characters, 26 line breaks; 2.87 bytes per character) — already over the old 1,024
#: for a tokenizer that spends more than one token on a rare character. 1,666 characters
#: at 4 bytes (every one a rare, astral character) + tags + a line break per 2 characters
#: is 7,508 bytes: 8,192 covers it. A model that stops early spends nothing extra.
DEFAULT_MAX_TOKENS = 8192
#: Default ``--max-side`` (one cap for all media, see ``--help``): the per-image pixel
#: budget ``--max-pixels`` (4,000,000) is what bounds the visual tokens; the side cap only
#: guards against extreme aspect ratios. At 2,048 px a 5,795 x 16,745 stele rubbing (the
#: paper's largest image) was sent at 708 x 2,048 (1.45 Mpx, 36 % of the budget); at
#: 4,096 it is sent at 1,176 x 3,399 (4.0 Mpx), 1.66 times the resolution per character.
#: Images are never upscaled, so seals, slips and oracle-bone photos below the caps are
#: sent unchanged whatever the cap.
DEFAULT_MAX_SIDE = 4096

#: The headline metrics: fractions in [0, 1], Overall = mean of the media.
METRICS = (MetricSpec("ned_score", "NED", macro_over="medium", by=("medium",)),
           MetricSpec("f1", "F1", macro_over="medium", by=("medium",)))


def refuse_model(spec: str) -> str | None:
    """Why ``spec`` cannot run Ancient-Bench, or ``None``. The ``baseline:*`` backends
    (``baseline:random`` and the HCSU / MUSE ones) pick among offered options; a
    transcription task offers none, so every answer would be empty and score 0."""
    if spec.startswith("baseline:"):
        return (f"--model {spec!r} is a multiple-choice baseline (it picks one of the "
                "offered options) and cannot transcribe; on Ancient-Bench every answer "
                "would be empty and score 0. Use 'rapidocr' (bundled offline OCR) or "
                "'openai:NAME' (a vision-language model endpoint)")
    return None


def reject_empty_reference(sample: Sample, flags: NormalizationFlags) -> str | None:
    """Mark ``sample`` as a load error naming its ``conv.jsonl:line`` when its ground
    truth normalises to nothing under ``flags`` (e.g. ``"。"`` with the official protocol,
    which drops punctuation); such a sample cannot be scored (the official evaluator
    asserts). Returns the error text set, or ``None`` (sample left as it was)."""
    if sample.load_error or not isinstance(sample.target, str):
        return None
    if tokenize(normalize_text(sample.target, flags)):
        return None
    sample.load_error = (f"{sample.source}: ground truth {sample.target!r} is empty after "
                         "normalisation (nothing to score against): sample not sent")
    return sample.load_error


def reject_empty_references(release: Release, flags: NormalizationFlags) -> list[str]:
    """:func:`reject_empty_reference` for every sample of a loaded (list) release, before
    any request is sent. Returns one warning per sample marked, in release order."""
    return [note for s in release.samples
            if (note := reject_empty_reference(s, flags)) is not None]


def checked_samples(release: Release, flags: NormalizationFlags) -> Iterator[Sample]:
    """The samples of a streamed release (:meth:`Release.iter_samples`, no note logged
    or collected: a repeat pass), each through :func:`reject_empty_reference`: what
    ``LoadedData.samples`` yields on every pass."""
    for s in release.iter_samples(notes=False):
        reject_empty_reference(s, flags)
        yield s


def counting_pass(release: Release, flags: NormalizationFlags,
                  keep: list[Sample] | None = None
                  ) -> tuple[dict[str, Any], list[str], CompactIds]:
    """One pass over a streamed release, holding no sample (unless ``keep`` is given:
    each sample, checked by :func:`reject_empty_reference`, is appended to it — the
    samples of :func:`checked_samples` in one read): :func:`data_counts`' dict
    (``samples``, ``load_errors`` — empty references included —, ``per_category`` in
    first-seen order), the empty-reference warnings in release order and the sample ids
    in order (so that the engine's id checks need no pass of their own). The per-file
    notes (duplicates, empty or unreadable files) are logged and added to
    ``release.warnings`` as :func:`load_release` does."""
    n = n_errors = 0
    per_category: Counter[str] = Counter()
    notes: list[str] = []
    ids = CompactIds()  # 100,000 ids: one buffer, not 100,000 strings
    for s in release.iter_samples(warnings=release.warnings):
        ids.append(str(s.id))
        if keep is not None:
            keep.append(s)
        if (note := reject_empty_reference(s, flags)) is not None:
            notes.append(note)
        n += 1
        n_errors += bool(s.load_error)
        per_category[s.category] += 1
    counts = {"samples": n, "load_errors": n_errors, "per_category": dict(per_category)}
    return counts, notes, ids


def prompt_provenance(prompts: PromptSet, backend: ModelBackend) -> dict[str, Any]:
    """``prompt_used``, ``prompt_templates_hash`` (whole template set; per-sample records
    carry ``details.prompt_hash`` of the full prompt sent) and ``prompt_source``; a
    backend that reads only the image (``reads_prompt`` False) gets ``prompt_used:
    false`` and null hashes."""
    if backend.reads_prompt:
        return {"prompt_used": True, "prompt_templates_hash": prompts.hash(),
                "prompt_source": prompts.source}
    return {"prompt_used": False, "prompt_templates_hash": None,
            "prompt_source": f"not used: {backend.spec} reads only the image"}


def data_counts(release: Release) -> dict[str, Any]:
    """``samples``, ``load_errors`` and ``per_category`` counts of a loaded release."""
    return {"samples": len(release.samples), "load_errors": release.n_load_errors,
            "per_category": dict(Counter(s.category for s in release.samples))}


#: Releases that may hold this many samples or more (bounded by their line count,
#: :mod:`.line_bound`, before any line is parsed) are not held in memory:
#: ``LoadedData.samples`` is a :class:`~heritage_eval.core.lazy_samples.ReiterableSamples`
#: that re-reads the release on each pass (three passes: count, plan, score). Smaller ones
#: are held as a list read in the counting pass, which keeps a cached re-run to one read.
#: A held sample costs about 1.7 KB, so the most a held release adds is ~20 MiB. (This
#: bound was 50,000: a held 30,000-sample release took 54 MiB and its run peaked at
#: 137 MiB, 1.9 times a 1,000-sample run, more than a re-read 100,000-sample run.)
LAZY_FROM = 12_000


class AncientBench(Benchmark):
    """``heritage-eval run ancient-bench``: see the module docstring.

    ``LoadedData.samples`` is a :class:`~heritage_eval.core.lazy_samples.ReiterableSamples`:
    no sample is held, each pass re-reads the release (:func:`checked_samples`).
    ``LoadedData.extra`` holds ``release`` (:class:`Release`, streamed: its ``samples``
    list is empty), ``prompts`` (:class:`PromptSet`), ``flags`` (the effective
    normalisation flags), ``protocol`` (the provenance block ``{"name", "flags"}``) and
    ``counts`` (:func:`counting_pass`'s counts).
    """

    name: ClassVar[str] = BENCHMARK
    help: ClassVar[str] = "transcribe ancient Chinese artifacts (9 media; NED, char F1)"
    description: ClassVar[str] = (
        "Run a model on Ancient-Bench (official release layout) and score it with the "
        "official evaluator's normalisation. Writes samples.jsonl, summary.json and "
        "summary.md to --out and prints the per-medium table (percent).")
    group_keys: ClassVar[tuple[str, ...]] = ("medium",)
    metrics: ClassVar[tuple[MetricSpec, ...]] = METRICS
    default_model: ClassVar[str | None] = "rapidocr"
    default_max_tokens: ClassVar[int] = DEFAULT_MAX_TOKENS
    #: the shared ``--max-side`` default of this benchmark
    default_max_side: ClassVar[int | None] = DEFAULT_MAX_SIDE
    Options: ClassVar[type[RunOptions]] = RunOptions
    #: ``load`` reads only the first N lines of each category (no full read for a try)
    applies_limit: ClassVar[bool] = True
    limit_help: ClassVar[str | None] = ("evaluate only the first N samples of each category (for "
                                 "a quick try; the run is marked PARTIAL)")

    def __init__(self) -> None:
        self._out: Path | None = None

    def limit_key(self, sample: Sample) -> str:
        return sample.category

    def load(self, config: RunConfig) -> LoadedData:
        """Load the release and the prompts. Raises :class:`UsageError` for a missing or
        misplaced ``--data`` folder, an unknown ``--categories`` name or a bad
        ``--prompts`` file. A ground truth empty after normalisation becomes that
        sample's load error (:func:`reject_empty_reference`: an ``error`` record of
        kind ``data``, never sent), with a warning. Reads the release once to count it
        (:func:`counting_pass`); the samples are read again on each pass."""
        from heritage_eval.benchmarks.ancient_bench.loader import CONV_FILE, load_release
        from heritage_eval.benchmarks.ancient_bench.prompts import load_prompts

        opts = config.options
        assert isinstance(opts, RunOptions)
        protocol, flags = flags_from_args(opts)
        try:
            release = load_release(opts.data, list(opts.categories) if opts.categories
                                   else None, config.output.limit, keep_samples=False)
            # small enough to hold (bounded before any line is parsed): one read
            held: list[Sample] | None = [] if samples_bound(
                release.root, release.categories, CONV_FILE, config.output.limit,
                stop=LAZY_FROM) < LAZY_FROM else None
            counts, notes, ids = counting_pass(release, flags, held)
            prompts = load_prompts(opts.prompts)
        except (FileNotFoundError, ValueError) as exc:
            raise UsageError(str(exc)) from exc
        self._out = config.output.out
        for note in notes:
            print(f"warning: {note}", file=sys.stderr)
            release.warnings.append(note)
        convs = [release.root / cat / CONV_FILE for cat in release.categories]
        samples: Sequence[Sample] = ReiterableSamples(
            lambda: checked_samples(release, flags), counts["samples"], ids,
            guard=lambda: file_identities(convs))  # a conv.jsonl replaced: stopped
        if held is not None:  # small enough to hold: one read, not three
            samples = held
        return LoadedData(samples=samples, image_root=str(release.root.resolve()),
                          warnings=list(release.warnings),
                          info={"data": str(release.root.resolve()), **counts},
                          extra={"release": release, "prompts": prompts, "flags": flags,
                                 "protocol": protocol, "counts": counts})

    def refuse_model(self, backend: ModelBackend, data: LoadedData,
                     config: RunConfig) -> str | None:
        return refuse_model(backend.spec)  # after the engine made it: the spec exists

    def prepare(self, ctx: RunContext, data: LoadedData) -> None:
        if getattr(ctx.config.options, "prompts", None) is not None and \
                not ctx.backend.reads_prompt:
            print(f"note: {ctx.backend.spec} reads only the image; --prompts is not used",
                  file=sys.stderr)

    def plan(self, sample: Sample, ctx: RunContext, data: LoadedData) -> Conversation | None:
        from heritage_eval.benchmarks.ancient_bench.pipeline import conversation_for

        if sample.load_error:
            return None
        return conversation_for(sample, data.extra["prompts"])

    def score(self, data: LoadedData, results: Mapping[str, ItemResult],
              ctx: RunContext) -> list[SampleRecord]:
        """One record per sample (:meth:`iter_score` as a list)."""
        return list(self.iter_score(data, results, ctx))

    def iter_score(self, data: LoadedData, results: Mapping[str, ItemResult],
                   ctx: RunContext) -> Iterator[SampleRecord]:
        """One record per sample, built as asked for; model failures follow
        ``--model-failures`` and truncated ones are flagged
        (:mod:`heritage_eval.benchmarks.outcomes`)."""
        from heritage_eval.benchmarks.ancient_bench.envelope import to_envelope
        from heritage_eval.benchmarks.ancient_bench.pipeline import iter_score_results
        from heritage_eval.benchmarks.outcomes import (
            apply_policy,
            mark_records,
            refusals_policy,
        )
        from heritage_eval.core.streamed_results import MappedResults

        prompts: PromptSet = data.extra["prompts"]
        release: Release = data.extra["release"]
        reads = ctx.backend.reads_prompt
        policy = refusals_policy(ctx.config)
        # the policy per result as it is read: a streamed (one-pass) mapping stays one;
        # one pass over ``data.samples`` (lazy: a re-read of the release) shared by both
        # sides, ``tee`` holding at most the one sample between them
        samples, paired = tee(data.samples)
        pairs = iter_score_results(samples, ctx.backend.spec, reads, prompts,
                                   data.extra["flags"], MappedResults(
                                       results, lambda r: apply_policy({r.id: r}, policy)[r.id]))
        for (row, resp), s in zip(pairs, paired, strict=True):
            record = to_envelope(row, s, prompt=prompts.prompt(s.category),
                                 prompt_used=reads, root=release.root, response=resp)
            mark_records([record], policy)
            if record.details.get("model_failure") and record.state.value == "error":
                record.details["error_kind"] = "model"
            yield record

    def record_sink(self, data: LoadedData, ctx: RunContext) -> BodySink:
        """Streams (memory flat in the number of samples): :class:`BodySink`."""
        from heritage_eval.benchmarks.ancient_bench.summary_sink import BodySink
        from heritage_eval.benchmarks.outcomes import refusals_policy

        release: Release = data.extra["release"]
        return BodySink([ctx.backend.spec], release.categories, data.extra["protocol"],
                        warnings=data.warnings, outcomes_policy=refusals_policy(ctx.config))

    def aggregate(self, records: Sequence[SampleRecord], data: LoadedData,
                  ctx: RunContext) -> dict[str, Any]:
        from heritage_eval.benchmarks.ancient_bench.envelope import to_row
        from heritage_eval.benchmarks.ancient_bench.report import build_summary
        from heritage_eval.benchmarks.outcomes import outcomes_body, refusals_policy

        release: Release = data.extra["release"]
        body = build_summary([to_row(r) for r in records], [ctx.backend.spec],
                             release.categories, data.extra["protocol"], {},
                             warnings=data.warnings)
        body.pop("provenance")  # the platform's provenance (self.provenance) replaces it
        return {**body, **outcomes_body(records, "medium", refusals_policy(ctx.config))}

    def render_markdown(self, summary: Mapping[str, Any]) -> str:
        from heritage_eval.benchmarks.ancient_bench.report import render_markdown
        from heritage_eval.benchmarks.outcomes import outcomes_markdown

        return render_markdown(dict(summary)) + outcomes_markdown(summary)

    def provenance(self, data: LoadedData, ctx: RunContext) -> dict[str, Any]:
        release: Release = data.extra["release"]
        return {**prompt_provenance(data.extra["prompts"], ctx.backend),
                "protocol": data.extra["protocol"], "data": str(release.root.resolve()),
                "data_counts": data.extra["counts"]}

    def print_result(self, summary: Mapping[str, Any]) -> None:
        from heritage_eval.benchmarks.ancient_bench.console import print_run_result

        print_run_result(summary, self._out)

    def nothing_answered_message(self, records: Sequence[SampleRecord]) -> str | None:
        return None  # print_run_result says it, in the release's words
