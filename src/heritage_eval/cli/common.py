"""Command-line options shared by every ``run`` command: model, endpoint, decoding, cache."""

from __future__ import annotations

import argparse
from pathlib import Path

from heritage_eval.cli.option_types import (  # noqa: F401  (re-exported: commands use them)
    float_option,
    int_option,
    non_negative_int,
    number_type,
    positive_float,
    positive_int,
    temperature_value,
)
from heritage_eval.core import option_checks as checks
from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.images import SizeCap
from heritage_eval.core.store import RunFolder
from heritage_eval.core.types import GenerationSettings
from heritage_eval.models.base import ModelBackend, ModelSpecError, create_backend
from heritage_eval.models.endpoints import (
    EndpointError,
    EndpointOptions,
    endpoint_root,
    read_urls_file,
)


def add_model_args(p: argparse.ArgumentParser, *, temperature: float = 0.0,
                   max_tokens: int = 1024, default_model: str | None = None,
                   limit_help: str = "evaluate only the first N samples of each category "
                                     "(for a quick try)") -> None:
    """Add ``--model`` and the endpoint / decoding / caching options to ``p``.

    ``limit_help`` words ``--limit`` for the benchmark's unit (category, task, class).
    """
    g = p.add_argument_group("model")
    g.add_argument("--model", required=default_model is None, default=default_model,
                   help="model spec: 'openai:NAME' (any OpenAI-compatible chat endpoint), "
                        "or a bundled offline model or baseline that suits this benchmark; "
                        "'heritage-eval list' shows them all"
                        + (f" (default: {default_model})" if default_model else ""))
    g.add_argument("--base-url", default=None, action=AppendUrl, metavar="URL",
                   help="OpenAI-compatible endpoint root, e.g. http://localhost:8000/v1; "
                        "repeat it for replicas of one model (requests are balanced, a "
                        "failing replica is taken out). Required for openai: models unless "
                        "$OPENAI_BASE_URL is set: no default host is assumed")
    g.add_argument("--base-urls-file", type=Path, default=None, metavar="FILE",
                   help="file of endpoint URLs, one per line ('#' comments), added to "
                        "--base-url")
    g.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                   help="environment variable holding the API key; the key is never "
                        "written to disk or logs (default: OPENAI_API_KEY)")
    g.add_argument("--max-side", type=int_option(checks.MAX_SIDE, "max_side"),
                   default=2048, metavar="PX",
                   help="longest image side sent to the model, pixels (default: 2048)")
    g.add_argument("--max-pixels", type=int_option(checks.MAX_PIXELS, "max_pixels"),
                   default=4_000_000, metavar="N",
                   help="most pixels (width x height) per image sent (default: 4000000)")
    g.add_argument("--timeout", type=float_option(checks.TIMEOUT_S, "timeout"),
                   default=120.0, metavar="S",
                   help="per-request timeout in seconds (default: 120)")
    g.add_argument("--retries", type=int_option(checks.RETRIES, "retries"),
                   default=5, metavar="N",
                   help="retries on timeouts, 429 and 5xx, with exponential backoff and "
                        "jitter (default: 5)")
    g.add_argument("--concurrency", type=int_option(checks.CONCURRENCY, "concurrency"),
                   default=None, metavar="N",
                   help="conversations in flight at once (default: the backend's own: 8 for "
                        "HTTP endpoints, 1 for the local OCR engine, which uses every core); "
                        "with several endpoints, per endpoint, adapted down on 429s and "
                        "rising latency")
    g.add_argument("--temperature", type=temperature_value, default=temperature,
                   metavar="T",
                   help=f"sampling temperature, 0-2 (default: {temperature})")
    g.add_argument("--max-tokens", type=int_option(checks.MAX_TOKENS, "max_tokens"),
                   default=max_tokens, metavar="N",
                   help=f"maximum new tokens per answer (default: {max_tokens})")
    g.add_argument("--seed-request", type=int_option(checks.SEED, "seed"),
                   default=None, metavar="N",
                   help="'seed' field sent with each request, where the server honours it")
    g.add_argument("--model-option", action="append", default=[], metavar="KEY=VALUE",
                   help="backend-specific option, repeatable; 'heritage-eval list' shows each "
                        "backend's keys (e.g. rapidocr: det_limit_side_len=960; openai: "
                        "reasoning_effort=low, enable_thinking=false)")
    c = p.add_argument_group("caching and output")
    c.add_argument("--out", required=True, type=Path,
                   help="run folder: samples.jsonl, summary.json, summary.md, cache.sqlite")
    c.add_argument("--cache", type=cache_path, default=None, metavar="FILE.sqlite",
                   help="response cache (SQLite); default OUT/cache.sqlite. Re-running the "
                        "same command only sends what is missing")
    c.add_argument("--no-cache", action="store_true",
                   help="do not read or write the response cache")
    c.add_argument("--limit", type=int_option(checks.COUNT, "limit"), default=None,
                   metavar="N", help=limit_help)
    from heritage_eval.core.paths import add_allow_outside_option

    add_allow_outside_option(c)


def parse_kv(items: list[str]) -> dict[str, str]:
    """Parse ``KEY=VALUE`` strings; raises :class:`ModelSpecError` (a usage error: exit
    2) naming ``--model-option`` when one is not ``KEY=VALUE``."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ModelSpecError(f"--model-option expects KEY=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out


class AppendUrl(argparse.Action):
    """``--base-url`` action: every value is appended to ``base_urls``; ``base_url`` keeps
    the first one (what single-endpoint code reads)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        try:  # the URL rule (fragment, scheme, port) as a usage error naming --base-url
            endpoint_root(str(values))
        except EndpointError as exc:
            message = str(exc).removeprefix("--base-url").lstrip(": ")
            raise argparse.ArgumentError(self, message) from None
        urls = [*(getattr(namespace, "base_urls", None) or []), str(values)]
        namespace.base_urls = urls
        setattr(namespace, self.dest, urls[0])


def endpoint_urls(args: argparse.Namespace) -> list[str]:
    """Every endpoint URL of ``--base-url`` (in order) then ``--base-urls-file``;
    each as :func:`~heritage_eval.models.endpoints.endpoint_root` makes it; duplicates
    dropped. Raises :class:`ModelSpecError` for an unreadable or bad file or a URL the
    rule refuses."""
    urls = list(getattr(args, "base_urls", None) or [])
    given = getattr(args, "base_url", None)
    if not urls and given:  # the Python API / config files may give a list of URLs
        urls = [str(u) for u in given] if isinstance(given, list | tuple) else [str(given)]
    path = getattr(args, "base_urls_file", None)
    if path is not None:
        try:
            urls += read_urls_file(path)
        except (OSError, ValueError) as exc:
            raise ModelSpecError(f"--base-urls-file: {exc}") from exc
    return list(dict.fromkeys(endpoint_root(u) for u in urls))


def backend_from_args(args: argparse.Namespace) -> ModelBackend:
    """Create the backend named by ``--model`` with the shared options (every endpoint
    URL, the run's ``--concurrency``)."""
    urls = endpoint_urls(args)
    opts = EndpointOptions(
        base_url=urls[0] if urls else None, base_urls=tuple(urls),
        concurrency=getattr(args, "concurrency", None), api_key_env=args.api_key_env,
        image_cap=SizeCap(max_side=args.max_side, max_pixels=args.max_pixels),
        timeout_s=args.timeout, max_retries=args.retries, extra=parse_kv(args.model_option))
    return create_backend(args.model, opts)


def settings_from_args(args: argparse.Namespace) -> GenerationSettings:
    return GenerationSettings(temperature=args.temperature, max_tokens=args.max_tokens,
                              seed=args.seed_request)


def cache_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a response cache file, or ``None``: it is a folder, or a
    part of its parent path is an existing non-folder (the cache is one SQLite file; a
    missing parent folder is made)."""
    if path.is_dir():
        return (f"{path} is a folder; give the cache file's path, e.g. "
                f"{path / 'cache.sqlite'}")
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            return f"{path}: {parent} is not a folder"
    return None


def cache_path(text: str) -> Path:
    """argparse type of ``--cache``: the path, refused (usage error, exit 2) when
    :func:`cache_problem` names a problem."""
    path = Path(text)
    problem = cache_problem(path)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return path


def cache_from_args(args: argparse.Namespace, run: RunFolder) -> ResponseCache | None:
    """The response cache of a run (``None`` with ``--no-cache``): ``--cache`` or the run
    folder's. Raises :class:`~heritage_eval.core.benchmark.UsageError` when ``--cache``
    became unusable after the options were read (:func:`cache_problem`)."""
    if args.no_cache:
        return None
    if args.cache is not None and (problem := cache_problem(Path(args.cache))):
        from heritage_eval.core.benchmark import UsageError

        raise UsageError(f"--cache {problem}")
    return ResponseCache(args.cache or run.cache_path)


def model_provenance(args: argparse.Namespace, backend: ModelBackend,
                     settings: GenerationSettings) -> dict[str, object]:
    """The model-related provenance fields (never the API key)."""
    return {
        "model": backend.spec,
        "backend": backend.identity(),
        "generation_settings": settings.model_dump(mode="json"),
        "base_url": getattr(backend, "base_url", None),
        "base_urls": getattr(backend, "base_urls", None),
        "image_cap": {"max_side": args.max_side, "max_pixels": args.max_pixels},
    }
