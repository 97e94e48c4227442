"""The typed configuration of one run: what the engine, the executors and the backends
receive, built by the command line from its options and by the Python API from keyword
arguments (both through :func:`build_run_config`, so they cannot disagree).

A :class:`RunConfig` holds the benchmark's own options (its ``Options`` model, a
:class:`BenchmarkOptions` subclass) and the platform's: :class:`ModelConfig` (model and
endpoint), :class:`GenerationConfig` (decoding), :class:`OutputConfig` (run folder,
cache, ``--limit``, denominators), :class:`ExecutorConfig` (local or Ray). Every field is
declared once with :func:`~heritage_eval.core.option_spec.opt`: its keyword, flag,
default, check and help. Keyword names are the options' names with ``_`` (``max_tokens``
for ``--max-tokens``); they are the keys of a suite file's options too.
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from heritage_eval.core import option_checks as checks
from heritage_eval.core.option_spec import OptionInfo, opt, option_info
from heritage_eval.core.run_folder_options import OVERWRITE_HELP, RESUME_HELP

if TYPE_CHECKING:  # imported where used: the parser of a run needs only the models
    from heritage_eval.core.sizecap import SizeCap
    from heritage_eval.core.types import GenerationSettings

_FROZEN = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)
FACTOR = checks.NumberRange(integer=False, low=1, high=1e6)
#: Default of ``--warn-downscale``: an image sent at less than 1/4 of its original
#: longest side counts as heavily downscaled (the count: :mod:`heritage_eval.core.run_limits`).
DEFAULT_WARN_DOWNSCALE = 4.0


def cache_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a response cache file, or ``None``: it is a folder, a part
    of its parent path is an existing non-folder (the cache is one SQLite file; a
    missing parent folder is made), it cannot be looked at (a symbolic-link loop), or it
    is no regular file (a FIFO: SQLite would block on it). Opens nothing. (An existing
    regular file is taken as the cache; one that is not an SQLite database is refused
    when opened: :func:`heritage_eval.core.run_parts.cache_from_config`.)"""
    if path.is_dir():
        return (f"{path} is a folder; give the cache file's path, e.g. "
                f"{path / 'cache.sqlite'}")
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            return f"{path}: {parent} is not a folder"
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None  # made on first use
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is not a regular file (a cache is one SQLite file)"
    return None


class OptionsError(ValueError):
    """Unknown, missing or invalid options; the message names the option (its flag on
    the command line, its keyword in Python)."""


class BenchmarkOptions(BaseModel):
    """Base class of a benchmark's own options (``Benchmark.Options``): a frozen pydantic
    model whose fields are declared with :func:`~heritage_eval.core.option_spec.opt`. A
    path option that is not UTF-8 text is refused (``option_checks.check_path_text``);
    files *inside* the data with such names are read as usual."""

    model_config = _FROZEN

    @model_validator(mode="after")
    def _paths_are_text(self) -> BenchmarkOptions:
        for name in type(self).model_fields:
            checks.check_path_text(name, getattr(self, name))
        return self


class ModelConfig(BaseModel):
    """The model and how to reach it (group "model")."""

    model_config = _FROZEN
    model: Annotated[str | None, opt(
        "model spec: 'openai:NAME' (any OpenAI-compatible chat endpoint), or a bundled "
        "offline model or baseline that suits this benchmark; 'heritage-eval list' shows "
        "them all", group="model")] = None
    base_url: Annotated[tuple[str, ...], opt(
        "OpenAI-compatible endpoint root, e.g. http://localhost:8000/v1; repeat it for "
        "replicas of one model (requests are balanced, a failing replica is taken out). "
        "Required for openai: models unless $OPENAI_BASE_URL is set: no default host is "
        "assumed", metavar="URL", repeat=True, group="model")] = ()
    base_urls_file: Annotated[Path | None, opt(
        "file of endpoint URLs, one per line ('#' comments), added to --base-url",
        metavar="FILE", group="model")] = None
    api_key_env: Annotated[str, opt(
        "environment variable holding the API key; the key is never written to disk or "
        "logs", metavar="VAR", group="model")] = "OPENAI_API_KEY"
    max_side: Annotated[int, opt("longest image side sent to the model, pixels",
                                 rule=checks.MAX_SIDE, metavar="PX", group="model")] = 2048
    max_pixels: Annotated[int, opt("most pixels (width x height) per image sent",
                                   rule=checks.MAX_PIXELS, metavar="N",
                                   group="model")] = 4_000_000
    timeout: Annotated[float, opt("per-request timeout in seconds", rule=checks.TIMEOUT_S,
                                  metavar="S", group="model")] = 120.0
    retries: Annotated[int, opt(
        "retries on timeouts, 429 and 5xx, with exponential backoff and jitter",
        rule=checks.RETRIES, metavar="N", group="model")] = 5
    concurrency: Annotated[int | None, opt(
        "conversations in flight at once (default: the backend's own: 8 for HTTP "
        "endpoints, 1 for in-process engines such as the bundled OCR, which use every "
        "core); with several "
        "endpoints, per endpoint, adapted down on 429s and rising latency",
        rule=checks.CONCURRENCY, metavar="N", group="model")] = None
    model_option: Annotated[tuple[str, ...], opt(
        "backend-specific option, repeatable; 'heritage-eval list' shows each backend's "
        "keys (e.g. rapidocr: det_limit_side_len=960; openai: reasoning_effort=low, "
        "enable_thinking=false)", metavar="KEY=VALUE", repeat=True, group="model")] = ()

    @field_validator("base_url", "model_option", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value

    @field_validator("base_url")
    @classmethod
    def _urls(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        from heritage_eval.core.endpoint_urls import endpoint_root

        for url in value:
            endpoint_root(url)  # EndpointError (a ValueError): named by the caller
        return value

    def options_dict(self) -> dict[str, str]:
        """``--model-option KEY=VALUE`` pairs as a dict. Raises
        :class:`~heritage_eval.core.backends.ModelSpecError` for an item without ``=``."""
        from heritage_eval.core.backends import ModelSpecError

        out: dict[str, str] = {}
        for item in self.model_option:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise ModelSpecError(f"--model-option expects KEY=VALUE, got {item!r}")
            out[key.strip()] = value.strip()
        return out

    @property
    def image_cap(self) -> SizeCap:
        """The size limit of images sent (``max_side``, ``max_pixels``)."""
        from heritage_eval.core.sizecap import SizeCap

        return SizeCap(max_side=self.max_side, max_pixels=self.max_pixels)


class GenerationConfig(BaseModel):
    """Decoding settings (group "model"); :meth:`settings` is what backends receive."""

    model_config = _FROZEN
    temperature: Annotated[float, opt("sampling temperature, 0-2", rule=checks.TEMPERATURE,
                                      metavar="T", group="model")] = 0.0
    max_tokens: Annotated[int, opt("maximum new tokens per answer", rule=checks.MAX_TOKENS,
                                   metavar="N", group="model")] = 1024
    seed_request: Annotated[int | None, opt(
        "'seed' field sent with each request, where the server honours it",
        rule=checks.SEED, metavar="N", group="model")] = None

    def settings(self) -> GenerationSettings:
        """The :class:`~heritage_eval.core.types.GenerationSettings` sent with requests."""
        from heritage_eval.core.types import GenerationSettings

        return GenerationSettings(temperature=self.temperature, max_tokens=self.max_tokens,
                                  seed=self.seed_request)


class OutputConfig(BaseModel):
    """The run folder, the cache, ``--limit`` and the scoring rules every benchmark
    shares (group "caching and output")."""

    model_config = _FROZEN
    out: Annotated[Path | None, opt(
        "run folder: samples.jsonl, summary.json, summary.md, cache.sqlite",
        group="caching and output")] = None
    cache: Annotated[Path | None, opt(
        "response cache (SQLite); default OUT/cache.sqlite. Re-running the same command "
        "only sends what is missing", metavar="FILE.sqlite", group="caching and output")
    ] = None
    no_cache: Annotated[bool, opt("do not read or write the response cache",
                                  group="caching and output")] = False
    limit: Annotated[int | None, opt(
        "evaluate only the first N samples of each group (a quick try; the run is marked "
        "PARTIAL)", rule=checks.COUNT, metavar="N", group="caching and output")] = None
    allow_outside_paths: Annotated[bool | None, opt(
        "read image references that resolve outside the data folder (../.., absolute "
        "paths, symlinks leading out); refused by default; recorded in provenance",
        group="caching and output")] = None
    model_failures: Annotated[Literal["wrong", "exclude"], opt(
        "how a turn the model itself failed is scored (refused, blocked by a content "
        "filter, reasoning only, cut at --max-tokens before any answer, empty answer): "
        "'wrong' scores it as a wrong (empty) answer that stays in the denominator, and "
        "reports the model-failure rate per model and group; 'exclude' leaves it out of "
        "the scores as an error, so the model is scored only on what it answered "
        "(compare then drops those samples for every model). Network, server and data "
        "errors are always left out and listed. --refusals is the old name of this "
        "option; its value 'error' means 'exclude'. See docs/denominators.md",
        aliases=("--refusals",), choices=("wrong", "exclude", "error"),
        metavar="{wrong,exclude}", group="scoring")] = "wrong"
    warn_downscale: Annotated[float, opt(
        "after the run, warn about samples whose image was sent more than F times smaller "
        "than the original on its longest side (by --max-side / --max-pixels); the count "
        "is summary.json's run_limits.downscaled, next to the answers cut at --max-tokens "
        "(run_limits.truncated). Does not change results", rule=FACTOR, metavar="F",
        group="caching and output")] = DEFAULT_WARN_DOWNSCALE
    resume: Annotated[bool, opt(RESUME_HELP, group="run folder")] = False
    overwrite: Annotated[bool, opt(OVERWRITE_HELP, group="run folder")] = False

    @field_validator("cache")
    @classmethod
    def _cache_file(cls, value: Path | None) -> Path | None:
        if value is not None and (problem := cache_problem(Path(value))):
            raise ValueError(problem)
        return value

    @field_validator("model_failures", mode="before")
    @classmethod
    def _old_spelling(cls, value: Any) -> Any:
        return "exclude" if value == "error" else value

    @model_validator(mode="after")
    def _one_mode(self) -> OutputConfig:
        if self.resume and self.overwrite:
            raise ValueError("--resume and --overwrite exclude each other")
        return self

    @property
    def mode(self) -> Literal["refuse", "resume", "overwrite"]:
        """What to do when ``out`` holds another run."""
        return "overwrite" if self.overwrite else "resume" if self.resume else "refuse"


class ExecutorConfig(BaseModel):
    """Where requests run (group "execution"); never part of the configuration
    fingerprint (a run resumes across executors)."""

    model_config = _FROZEN
    executor: Annotated[Literal["local", "ray"], opt(
        "where requests run: 'local' (this process, asyncio; default) or 'ray' (backend "
        "replicas on a Ray cluster; needs the [ray] extra). Only this process writes the "
        "cache, so a run resumes under either", choices=("local", "ray"),
        group="execution")] = "local"
    ray_address: Annotated[str | None, opt(
        "Ray cluster to join: HOST:6379 (the head's GCS address), 'auto' (the cluster "
        "`ray start` runs on this machine) or ray://HOST:10001 (Ray Client; needs "
        "ray[client]) (default: $RAY_ADDRESS when set, else a local cluster for this "
        "run)", metavar="ADDR",
        group="execution")] = None
    ray_workers: Annotated[int | None, opt(
        "backend replicas (Ray actors) (default: one per GPU for hf: models on a GPU "
        "cluster, else 2); --concurrency applies to each", rule=checks.RAY_WORKERS,
        metavar="N", group="execution")] = None


#: The platform's sections, in help order: attribute of RunConfig -> model class.
SECTIONS: dict[str, type[BaseModel]] = {
    "model": ModelConfig, "generation": GenerationConfig, "output": OutputConfig,
    "executor": ExecutorConfig}


class RunConfig(BaseModel):
    """Everything one run needs (see the module docstring). ``benchmark``: the registered
    name. ``options``: the benchmark's own options."""

    model_config = _FROZEN
    benchmark: str
    options: BenchmarkOptions
    model: ModelConfig = ModelConfig()
    generation: GenerationConfig = GenerationConfig()
    output: OutputConfig = OutputConfig()
    executor: ExecutorConfig = ExecutorConfig()

    def flat(self) -> dict[str, Any]:
        """Every option by its keyword (``max_tokens``, ``data`` …): the benchmark's and
        the platform's, as given or defaulted."""
        out: dict[str, Any] = dict(self.options)
        for section in SECTIONS:
            out.update(dict(getattr(self, section)))
        return out

    def out_dir(self) -> Path:
        """The run folder. Raises :class:`OptionsError` when none was given."""
        if self.output.out is None:
            raise OptionsError("missing required option 'out' (--out: the run folder)")
        return Path(self.output.out)


def fields_of(model: type[BaseModel]) -> dict[str, OptionInfo]:
    """Field name -> :class:`OptionInfo` of every option field of ``model``."""
    found = {}
    for name, f in model.model_fields.items():
        info = option_info(f.metadata)
        if info is not None:
            found[name] = info
    return found


def build_run_config(benchmark: str, options_type: type[BenchmarkOptions],
                     values: Mapping[str, Any], *, defaults: Mapping[str, Any] | None = None,
                     required: tuple[str, ...] = ("out",), cli: bool = False) -> RunConfig:
    """A :class:`RunConfig` from flat ``values`` (option keyword -> value; ``-`` or ``_``
    in keys), on top of the benchmark's ``defaults`` for platform options (its protocol's
    temperature, max tokens, default model …).

    ``required``: platform keywords that must be given (or defaulted). ``cli``: name
    options by their flags in messages. Raises :class:`OptionsError` for an unknown key
    (with the closest known one), a missing required option, or a value its rule refuses
    (the message names the option and says what is accepted)."""
    owners: dict[str, str] = {name: "options" for name in options_type.model_fields}
    for section, model in SECTIONS.items():
        for name in model.model_fields:
            owners.setdefault(name, section)
    aliases = _aliases(options_type)  # e.g. refusals -> model_failures, as on the CLI
    given: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in values.items():
        name = str(key).replace("-", "_")
        name = aliases.get(name, name) if name not in owners else name
        if name in given:
            raise OptionsError(f"option {name!r} given twice (as {spelled[name]!r} and "
                               f"{key!r})")
        given[name], spelled[name] = value, str(key)
    merged = {**(defaults or {}), **given}
    unknown = sorted(set(given) - set(owners))
    if unknown:
        raise OptionsError(_unknown_message(unknown, list(owners)))
    parts: dict[str, dict[str, Any]] = {"options": {}, **{s: {} for s in SECTIONS}}
    for key, value in merged.items():
        if key in owners:
            parts[owners[key]][key] = value
    missing = [k for k in required if parts[owners[k]].get(k) is None]
    if missing:
        raise OptionsError("missing required option(s) " + ", ".join(
            _named(k, owners, options_type, cli) for k in missing))
    built: dict[str, Any] = {"benchmark": benchmark}
    for section, model in (("options", options_type), *SECTIONS.items()):
        try:
            built[section] = model(**parts[section])
        except ValidationError as exc:
            raise OptionsError(_validation_message(exc, model, cli)) from None
        except ValueError as exc:  # a check outside pydantic (e.g. an endpoint URL)
            raise OptionsError(str(exc)) from None
    return RunConfig(**built)


def _aliases(options_type: type[BaseModel]) -> dict[str, str]:
    """Keyword spelling of every option alias (``--refusals`` -> ``refusals``) -> the
    field it sets."""
    out = {}
    for model in (options_type, *SECTIONS.values()):
        for name, info in fields_of(model).items():
            for alias in info.aliases:
                out[alias.lstrip("-").replace("-", "_")] = name
    return out


def _unknown_message(unknown: list[str], known: list[str]) -> str:
    parts = []
    for key in unknown:
        close = difflib.get_close_matches(key, known, n=1)
        parts.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return f"unknown option(s) {', '.join(parts)}"


def _named(key: str, owners: Mapping[str, str], options_type: type[BaseModel],
           cli: bool) -> str:
    model = options_type if owners[key] == "options" else SECTIONS[owners[key]]
    info = fields_of(model).get(key)
    return (info.flag_of(key) if info else "--" + key.replace("_", "-")) if cli else repr(key)


def _validation_message(exc: ValidationError, model: type[BaseModel], cli: bool) -> str:
    infos = fields_of(model)
    lines = []
    for err in exc.errors():
        message = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
        if not err.get("loc"):  # a rule between options
            lines.append(message)
            continue
        key = str(err["loc"][0])
        info = infos.get(key)
        name = (info.flag_of(key) if info else key) if cli else repr(key)
        message = message.removeprefix(f"{name}: ")
        if err.get("type") == "missing":
            message = "is required"
        lines.append(f"{'argument ' if cli else 'option '}{name}: {message}")
    return "; ".join(lines)
