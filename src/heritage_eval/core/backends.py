"""The one interface every model backend implements, and the backend registry.

A model is named on the command line by a *model spec*: ``PREFIX`` or ``PREFIX:NAME``,
e.g. ``openai:qwen2.5-vl-7b-instruct``, ``rapidocr``, ``baseline:random``. The prefix
selects a registered factory; the rest is passed to it. Adding a backend is adding a
module that calls :func:`register_backend` and declaring it in the entry-point group
``heritage_eval.backends`` (:mod:`heritage_eval.core.plugins`).
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from heritage_eval.core.sizecap import SizeCap

if TYPE_CHECKING:
    from heritage_eval.core.types import GenerationSettings, Message, Response

@dataclass(frozen=True)
class BackendOptions:
    """Options shared by backends; each backend reads the ones it understands.

    ``base_url``: OpenAI-compatible endpoint root (``.../v1``). ``api_key_env``: name of the
    environment variable holding the API key (the key itself is never stored).
    ``image_cap``: size limit for images sent. ``timeout_s``: per-request timeout in
    seconds. ``max_retries``: retries after the first attempt. ``extra``: backend-specific
    key/value options (``--model-option KEY=VALUE``).
    """

    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    image_cap: SizeCap = field(default_factory=lambda: SizeCap(max_side=2048,
                                                               max_pixels=4_000_000))
    timeout_s: float = 120.0
    max_retries: int = 5
    extra: dict[str, str] = field(default_factory=dict)


class ModelBackend(abc.ABC):
    """A model that answers chat conversations.

    Subclasses set ``backend`` (the registry prefix) and ``model_id`` and implement
    :meth:`generate`. ``payload`` is the conversation's structured form (see
    :class:`~heritage_eval.core.types.Conversation`); chat models ignore it.
    ``max_concurrency`` caps parallel requests for this backend (CPU-bound local engines
    use 1 or the core count). ``reads_prompt`` is False for engines that ignore text.
    """

    backend: str = ""
    model_id: str = ""
    max_concurrency: int = 8
    #: False for engines that ignore the prompt text (OCR): the cache key then omits it.
    reads_prompt: bool = True
    #: True for backends that answer from the structured payload (offline baselines):
    #: the cache key then includes it.
    reads_payload: bool = False

    @property
    def spec(self) -> str:
        """The model spec string that recreates this backend (used as the model name)."""
        return f"{self.backend}:{self.model_id}" if self.model_id else self.backend

    def identity(self) -> dict[str, Any]:
        """Everything about this backend that can change an answer: part of the cache key."""
        return {"backend": self.backend, "model": self.model_id}

    @abc.abstractmethod
    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        """Answer the last user message given the history ``messages``.

        Must not raise for model or transport failures: return a :class:`Response` with
        ``error`` set instead (after the backend's own retries). An image that cannot be
        read raises :class:`~heritage_eval.core.images.ImageLoadError`, left to propagate:
        the runner files it as that sample's data error, never an API error or a model
        failure (:mod:`heritage_eval.core.data_errors`).
        """

    async def aclose(self) -> None:
        """Release connections; called once when a run ends."""
        return None


BackendFactory = Callable[[str, BackendOptions], ModelBackend]


@dataclass(frozen=True)
class BackendEntry:
    """A registered backend: its factory, help line and ``--model-option`` keys."""

    factory: BackendFactory
    help: str
    option_keys: dict[str, str]


_REGISTRY: dict[str, BackendEntry] = {}


def register_backend(prefix: str, factory: BackendFactory, help_text: str,
                     option_keys: dict[str, str] | None = None) -> None:
    """Register ``factory`` for model specs starting with ``prefix``.

    ``help_text`` is shown by ``heritage-eval list``; ``option_keys`` maps each accepted
    ``--model-option`` key to its meaning (any other key is refused). Raises
    ``ValueError`` on a duplicate prefix.
    """
    if prefix in _REGISTRY:
        raise ValueError(f"backend prefix {prefix!r} registered twice")
    _REGISTRY[prefix] = BackendEntry(factory, help_text, dict(option_keys or {}))


def registered_backends() -> dict[str, BackendEntry]:
    """Prefix -> entry (help text, option keys) of every registered backend."""
    _load_builtin()
    return dict(sorted(_REGISTRY.items()))


class ModelSpecError(ValueError):
    """A ``--model`` spec or its ``--model-option`` values cannot make a backend."""


class UnknownModelError(ModelSpecError):
    """A model spec names no registered backend."""


def did_you_mean(spec: str) -> str:
    """``" (did you mean 'baseline:random'?)"`` for a mistyped spec: the registered specs
    closest to ``spec`` (``difflib``, cutoff 0.6), or the closest prefix with the rest
    kept (``opnai:gpt-4o`` -> ``openai:gpt-4o``); ``""`` when nothing is close."""
    import difflib

    names = sorted(_REGISTRY)
    close = difflib.get_close_matches(spec, names, n=1, cutoff=0.6)
    prefix, sep, rest = spec.partition(":")
    if not close and sep:
        close = [f"{p}:{rest}" for p in difflib.get_close_matches(prefix, names, n=1,
                                                                  cutoff=0.6)]
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"


def create_backend(spec: str, options: BackendOptions | None = None) -> ModelBackend:
    """Build the backend for a model spec such as ``openai:gpt-4o`` or ``baseline:random``.

    Lookup tries the full spec, then the part before the first ``:``. Raises
    :class:`UnknownModelError` listing the known prefixes, with the closest ones
    (:func:`did_you_mean`), and :class:`ModelSpecError`
    when the backend refuses the spec or an option (unknown key, bad value).
    """
    _load_builtin()
    options = options or BackendOptions()
    prefix, _, rest = spec.partition(":")
    if spec in _REGISTRY:
        entry, rest, prefix = _REGISTRY[spec], "", spec
    elif prefix in _REGISTRY:
        entry = _REGISTRY[prefix]
    else:
        known = ", ".join(sorted(_REGISTRY))
        raise UnknownModelError(f"unknown model {spec!r}{did_you_mean(spec)}; known "
                                f"backends: {known}")
    patterns = [k[: -len("<key>")] for k in entry.option_keys if k.endswith(".<key>")]
    unknown = sorted(k for k in options.extra if k not in entry.option_keys
                     and not any(k.startswith(p) and len(k) > len(p) for p in patterns))
    if unknown:
        accepted = ", ".join(sorted(entry.option_keys)) or "none"
        raise ModelSpecError(f"--model-option {', '.join(unknown)} not understood by "
                             f"{prefix!r} (accepted keys: {accepted})")
    try:
        return entry.factory(rest, options)
    except ValueError as exc:
        raise ModelSpecError(f"--model {spec!r}: {exc}") from exc


def _load_builtin() -> None:
    """Load every backend plug-in (entry-point group ``heritage_eval.backends``: the
    built-ins too) and every benchmark plug-in (they register their own baselines)."""
    from heritage_eval.core import plugins

    plugins.load_all()
