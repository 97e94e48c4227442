"""The one sample record: a versioned, self-contained line of ``samples.jsonl``.

Every benchmark writes the same envelope (schema ``heritage-eval/sample/1``), so the
viewer, statistics, comparison and export need nothing but ``samples.jsonl`` and the
images. What only one benchmark knows (edit operations, options with their distractor
types, K-way candidates …) goes into ``details``.

The JSON Schema is generated from these pydantic models (:func:`sample_json_schema`)
and published as ``schemas/sample-1.json`` (docs/reference/run-folder.md).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from heritage_eval.core.types import Outcome, Response

SAMPLE_SCHEMA: Literal["heritage-eval/sample/1"] = "heritage-eval/sample/1"


class ImageRef(BaseModel):
    """An image shown to the model in one turn.

    ``path``: relative to the record's ``image_root`` when the image lies under it, else
    absolute. ``page``: 0-based page of a PDF (0 for raster images). ``width`` /
    ``height``: original size in pixels (``None`` when the file could not be read).
    ``sent_width`` / ``sent_height``: size actually sent after the size cap (``None``
    when unknown, e.g. a cached answer of an engine that does not report it). ``role``:
    what the image is in the question (``"target"``, ``"candidate A"``, ``"piece 3"`` …).
    """

    model_config = ConfigDict(extra="forbid")
    path: str
    page: int = 0
    width: int | None = None
    height: int | None = None
    sent_width: int | None = None
    sent_height: int | None = None
    role: str | None = None


class ResponseRecord(BaseModel):
    """The model's answer to one turn.

    ``text``: the final answer content (``None`` when the request failed).
    ``reasoning``: reasoning text kept apart from the answer (``reasoning_content`` or a
    ``<think>`` block), never parsed as the answer. ``finish_reason``: as reported
    (``"stop"``, ``"length"``, ``"content_filter"`` …). Token counts as reported by the
    backend. ``latency_s``: seconds of the successful attempt; ``attempts``: tries incl.
    retries; ``cached``: answered from the response cache; ``error``: why it failed;
    ``failure``: the kind of failure, when the backend names one (``"content_filter"``,
    ``"reasoning_only"``, ``"server_error"``, ``"input_too_large"``, ``"timeout"`` …).
    """

    model_config = ConfigDict(extra="forbid")
    text: str | None = None
    reasoning: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    attempts: int | None = None
    cached: bool | None = None
    error: str | None = None
    failure: str | None = None

    @classmethod
    def from_response(cls, resp: Response | None) -> ResponseRecord | None:
        """The record of a backend :class:`~heritage_eval.core.types.Response`."""
        if resp is None:
            return None
        return cls(text=resp.text, reasoning=resp.meta.get("reasoning"),
                   finish_reason=resp.meta.get("finish_reason"),
                   prompt_tokens=resp.usage.prompt_tokens,
                   completion_tokens=resp.usage.completion_tokens,
                   latency_s=resp.latency_s, attempts=resp.attempts, cached=resp.cached,
                   error=resp.error, failure=resp.meta.get("failure"))


class TurnRecord(BaseModel):
    """One turn of the conversation: the full prompt text, its images, the response.

    ``scored``: whether this turn is the one the record scores (a MUSE record scores one
    turn of a multi-turn dialogue; the earlier turns are kept as context).
    """

    model_config = ConfigDict(extra="forbid")
    prompt: str
    images: list[ImageRef] = Field(default_factory=list)
    response: ResponseRecord | None = None
    scored: bool = True


class SampleRecord(BaseModel):
    """One line of ``samples.jsonl``, the same envelope for every benchmark.

    - ``id``: unique within the run (a MUSE turn is ``<question id>#<turn>``).
    - ``benchmark``: registry name (``ancient-bench``, ``hcsu-discrimination``,
      ``hcsu-description``, ``muse`` …); ``model``: the model spec.
    - ``groups``: group keys the paper reports by, e.g. ``{"medium": "Seal"}``,
      ``{"domain": "bei", "class": "李斯-篆书"}``, ``{"task": …, "capability": …}``.
    - ``state``: ``scored`` / ``unparsed`` / ``error`` / ``unscored`` (docs/reference/run-folder.md,
      "Sample states").
    - ``scores``: metric name -> value (fractions in [0, 1] unless the metric says
      otherwise; ``None`` = not computed for this record).
    - ``system``: the system prompt, if any; ``turns``: every turn sent (prompt text,
      images, response).
    - ``image_root``: absolute folder the relative image paths start from.
    - ``answer``: the parsed answer (``None`` when unparsed or error); ``reference``: the
      ground truth / correct option / expert description.
    - ``error``: the reason for ``error`` / ``unscored``; ``source``: ``file:line`` the
      sample came from; ``details``: benchmark-specific fields.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    schema_: Literal["heritage-eval/sample/1"] = Field(
        SAMPLE_SCHEMA, alias="schema")
    id: str
    benchmark: str
    model: str
    groups: dict[str, str] = Field(default_factory=dict)
    state: Outcome
    scores: dict[str, float | None] = Field(default_factory=dict)
    system: str | None = None
    turns: list[TurnRecord] = Field(default_factory=list)
    image_root: str | None = None
    answer: Any = None
    reference: Any = None
    error: str | None = None
    source: str = ""
    details: dict[str, Any] = Field(default_factory=dict)

    def to_json_line(self) -> str:
        """The record as one JSON line (no ASCII escaping; key ``schema`` first): the
        text of ``json.dumps(self.model_dump(mode="json", by_alias=True),
        ensure_ascii=False)``."""
        return json_text(self.model_dump(mode="json", by_alias=True))

    def __repr__(self) -> str:
        """One line of at most 200 characters: id, benchmark, model, state, the first
        groups and scores (the whole record: :meth:`to_json_line`)."""
        items = [*list(self.groups.items())[:3], *list(self.scores.items())[:4]]
        parts = " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                         for k, v in items)
        text = " ".join(f"<SampleRecord {self.id!r} {self.benchmark} {self.model} "
                        f"{self.state.value} {parts}".split())
        return (text if len(text) < 199 else text[:198] + "…") + ">"

    def _repr_html_(self) -> str:
        """The record's main fields as a two-column table, each value HTML-escaped and
        cut to 300 characters (turns and details left out)."""
        import html

        fields = {"id": self.id, "benchmark": self.benchmark, "model": self.model,
                  "state": self.state.value, "groups": self.groups, "scores": self.scores,
                  "reference": self.reference, "answer": self.answer, "error": self.error,
                  "response": self.response_text, "source": self.source}
        rows = ""
        for key, value in fields.items():
            if value in (None, "", {}):
                continue
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                                   default=str)
            text = text if len(text) <= 300 else text[:299] + "…"
            rows += (f'<tr><th style="text-align:left">{key}</th>'
                     f'<td style="text-align:left">{html.escape(text)}</td></tr>')
        return f"<table>{rows}</table>"

    @property
    def scored_turn(self) -> TurnRecord | None:
        """The turn this record scores (the last one marked ``scored``)."""
        for turn in reversed(self.turns):  # (no list: read ~7 times a record)
            if turn.scored:
                return turn
        return None

    @property
    def response_text(self) -> str | None:
        """Text of the scored turn's response, if any."""
        turn = self.scored_turn
        return turn.response.text if turn and turn.response else None


def _line_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False)`` for a value without cycles (what
    ``model_dump`` returns), through one C encoder made once: ``json.dumps`` builds a
    ``JSONEncoder`` and a C encoder per call and tracks every container it enters
    (the circular-reference check), ~3 µs of a 3 KiB ``samples.jsonl`` line (issue 23).
    The arguments are those ``JSONEncoder.iterencode`` passes for these settings, so the
    text is the same; ``json.dumps`` itself where the C encoder is missing."""
    from json import encoder as json_encoder

    make = getattr(json_encoder, "c_make_encoder", None)
    escape = getattr(json_encoder, "c_encode_basestring", None)
    if make is None or escape is None:
        return functools.partial(json.dumps, ensure_ascii=False)
    default = json.JSONEncoder().default
    encode = make(None, default, escape, None, ": ", ", ", False, False, True)

    def dumps(value: Any) -> str:
        if isinstance(value, str):
            return str(escape(value))
        return "".join(encode(value, 0))

    return dumps


#: ``json.dumps(value, ensure_ascii=False)`` of a JSON value without cycles.
json_text: Callable[[Any], str] = _line_encoder()


def sample_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of :class:`SampleRecord`, as pydantic generates it."""
    schema = SampleRecord.model_json_schema(by_alias=True)
    schema["$id"] = "https://heritage-eval/schemas/sample-1.json"
    schema["title"] = "heritage-eval sample record (heritage-eval/sample/1)"
    return schema


def relative_image_path(path: str | Path, root: str | Path | None) -> str:
    """``path`` relative to ``root`` when it lies under it, else absolute (POSIX).

    Paths are made absolute without resolving symlinks (``os.path.abspath``): this is a
    display path; whether a reference may be read was decided when the data was loaded
    (``core/paths.py``)."""
    p = os.path.abspath(path)
    if root is not None:
        base = _abs_root(str(root))
        if p == base:
            return "."
        if p.startswith(base + os.sep):  # both normalised: the rest is the relative path
            rest = p[len(base) + 1:]
            return rest if os.sep == "/" else rest.replace(os.sep, "/")
    return Path(p).as_posix()


@functools.lru_cache(maxsize=64)
def _abs_root(root: str) -> str:
    return os.path.abspath(root)


def image_size(path: str | Path) -> tuple[int, int] | None:
    """``(width, height)`` in pixels read from the file header (no decode, no
    decompression-bomb warning), or ``None`` for a missing / unreadable file or a PDF."""
    fileinfo, images = _size_modules()
    size = fileinfo.remembered("size", path, 0, lambda: images.header_size(path),
                               _encode_size, _decode_size)
    return size


@functools.cache
def _size_modules() -> tuple[ModuleType, ModuleType]:
    """``core.fileinfo`` and ``core.images`` (PIL), imported on the first image size
    asked for rather than with this module, and not looked up again per record (~1 µs
    a record, issue 23); their functions are still read at each call."""
    from heritage_eval.core import fileinfo, images

    return fileinfo, images


def _encode_size(size: tuple[int, int] | None) -> str:
    return "" if size is None else f"{size[0]}x{size[1]}"


def _decode_size(text: str) -> tuple[int, int] | None:
    if not text:
        return None
    w, _, h = text.partition("x")
    return int(w), int(h)


def image_ref(path: str | Path, root: str | Path | None, *, role: str | None = None,
              page: int = 0, sent: list[int] | tuple[int, int] | None = None) -> ImageRef:
    """An :class:`ImageRef` for ``path``: relative to ``root`` where possible, original
    size from the header, ``sent`` = ``[width, height]`` actually sent (if known)."""
    size = image_size(path)
    return ImageRef(path=relative_image_path(path, root), page=page,
                    width=size[0] if size else None, height=size[1] if size else None,
                    sent_width=int(sent[0]) if sent else None,
                    sent_height=int(sent[1]) if sent else None, role=role)
