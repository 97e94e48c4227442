"""Typed records that flow through one evaluation.

The flow (docs/design.md)::

    release files --loader--> Sample --task--> Conversation
        --backend--> Response --parser--> answer or unparsed --scorer--> SampleResult

Every record is a pydantic model so it validates on construction and serialises to JSON
without hand-written code. Nothing here knows about a particular benchmark.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Outcome(enum.StrEnum):
    """Explicit end state of one sample (docs/reference/run-folder.md, "Sample states").

    - ``scored``: the model answered, the answer was parsed and scored.
    - ``unparsed``: the model answered but no valid answer could be extracted; counts as
      wrong *and* is counted in the invalid rate.
    - ``error``: transport / model / input failure; excluded from the score and reported.
    - ``unscored``: a judge or metric dependency failed; excluded from that metric.
    """

    SCORED = "scored"
    UNPARSED = "unparsed"
    ERROR = "error"
    UNSCORED = "unscored"


class TextPart(BaseModel):
    """A piece of text inside a chat message."""

    model_config = ConfigDict(frozen=True)
    type: Literal["text"] = "text"
    text: str


class ImagePart(BaseModel):
    """An image inside a chat message, referenced by file path (never inlined in records).

    ``path`` is an absolute or run-relative path to an image or a PDF file; ``page`` selects
    the PDF page (0-based) and is ignored for raster images.
    """

    model_config = ConfigDict(frozen=True)
    type: Literal["image"] = "image"
    path: str
    page: int = 0


ContentPart = TextPart | ImagePart


class Message(BaseModel):
    """One chat message: a role and an ordered list of text and image parts."""

    model_config = ConfigDict(frozen=True)
    role: Literal["system", "user", "assistant"]
    content: tuple[ContentPart, ...]

    @classmethod
    def user(cls, *parts: ContentPart | str) -> Message:
        """Build a user message; bare strings become :class:`TextPart`."""
        return cls(role="user", content=tuple(TextPart(text=p) if isinstance(p, str) else p
                                              for p in parts))

    @classmethod
    def system(cls, text: str) -> Message:
        return cls(role="system", content=(TextPart(text=text),))

    @classmethod
    def assistant(cls, text: str) -> Message:
        return cls(role="assistant", content=(TextPart(text=text),))

    def text(self) -> str:
        """All text parts joined by newlines (images omitted)."""
        return "\n".join(p.text for p in self.content if isinstance(p, TextPart))

    def images(self) -> list[ImagePart]:
        return [p for p in self.content if isinstance(p, ImagePart)]


class GenerationSettings(BaseModel):
    """Decoding settings sent to a backend; part of the cache key and of provenance."""

    model_config = ConfigDict(frozen=True)
    temperature: float = 0.0
    max_tokens: int = 1024
    top_p: float | None = None
    seed: int | None = None


class Conversation(BaseModel):
    """What is sent to a model for one sample.

    ``turns`` are user messages sent one after another; after each turn the model's answer
    is appended to the history as an assistant message before the next turn (MUSE's 4-turn
    dialogue). Single-turn tasks have one turn. ``system`` is an optional system prompt.

    ``payload`` carries the same inputs in structured form for offline baselines and
    specialists that cannot read a prompt (e.g. the OCR engine reads the first image; the
    HCSU image-similarity baseline reads the candidate reference images by label). It is
    part of the cache key only through the messages, never on its own.
    """

    model_config = ConfigDict(frozen=True)
    system: str | None = None
    turns: tuple[Message, ...]
    payload: dict[str, Any] = Field(default_factory=dict)
    #: Optional ``(turn index, message, answers to the earlier turns) -> message sent``:
    #: a turn whose text depends on the model's own earlier answers (MUSE turn 3 names the
    #: emotion chosen in turn 2). A picklable callable (Ray ships it); never serialised.
    fill_turn: Callable[[int, Message, Sequence[str]], Message] | None = Field(
        default=None, exclude=True, repr=False)

    def turn(self, index: int, answers: Sequence[str]) -> Message:
        """Turn ``index`` as sent, given the model's ``answers`` to turns ``0..index-1``
        (``turns[index]`` itself without :attr:`fill_turn`)."""
        msg = self.turns[index]
        return self.fill_turn(index, msg, answers) if self.fill_turn is not None else msg


class Usage(BaseModel):
    """Token usage reported by a backend (``None`` where unknown)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Response(BaseModel):
    """A backend's answer to one request (one turn).

    ``text`` is ``None`` exactly when ``error`` is set. ``latency_s`` is wall-clock seconds
    of the successful attempt; ``attempts`` counts tries including retries. ``meta`` holds
    backend details such as the image size actually sent (``sent_image_sizes``: list of
    ``[width, height]`` in pixels).
    """

    text: str | None
    error: str | None = None
    latency_s: float = 0.0
    attempts: int = 1
    usage: Usage = Field(default_factory=Usage)
    meta: dict[str, Any] = Field(default_factory=dict)
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and self.text is not None

    def details(self) -> dict[str, Any]:
        """What a ``samples.jsonl`` line records about this response besides its text:
        ``latency_s``, ``attempts``, ``cached``, ``sent_image_sizes`` (``[[w, h], …]``
        pixels), ``prompt_tokens``, ``completion_tokens``, ``finish_reason``."""
        return {"latency_s": self.latency_s, "attempts": self.attempts, "cached": self.cached,
                "sent_image_sizes": self.meta.get("sent_image_sizes"),
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
                "finish_reason": self.meta.get("finish_reason")}


class Sample(BaseModel):
    """One benchmark item as loaded from a release.

    ``id`` is unique inside a benchmark run; ``category`` is the grouping the paper reports
    (medium for Ancient-Bench, domain for HCSU, task for MUSE). ``source`` names the file
    and line it came from, for error messages. ``load_error`` is set when the item could be
    identified but not fully loaded (missing image, empty ground truth): such a sample
    becomes an ``error`` row instead of stopping the run.
    """

    id: str
    category: str
    image: str | None = None
    target: Any = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    source: str = ""
    load_error: str | None = None


def stable_hash(obj: Any, length: int = 16) -> str:
    """Hex SHA-256 prefix of the canonical JSON of ``obj`` (sorted keys, UTF-8).

    Used for prompt, task-spec and request fingerprints; ``length`` hex characters.
    """
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=_json_default)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:length]


def _json_default(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, enum.Enum):
        return obj.value
    raise TypeError(f"cannot hash object of type {type(obj).__name__}")
