"""File references made absolute before a conversation leaves the driver for a Ray node.

A Ray worker runs in the working folder of the ``ray start`` that started its node, not
in the driver's: a relative image path (``--data data/demo/...`` makes them) names
another file there, or none ("image file not found" for every sample). So the driver
sends each conversation with its file references joined to its own working folder:

- every image part of every turn (:class:`~heritage_eval.core.types.ImagePart`);
- every string of the structured ``payload`` (at any depth, in dicts, lists and tuples)
  that is a relative path with a file suffix (``.png``, ``.pdf``...) naming an existing
  regular file on the driver (baselines read images by path from it; a label such as
  ``A`` has no suffix and is never taken for a file);
- the messages a ``fill_turn`` callable builds (wrapped: :class:`AbsoluteTurns`).

Paths are joined, not resolved (``os.path.join(os.getcwd(), path)``): the same rule as
the driver's own open of the file, symlinks included. The driver keeps the original
items: cache keys and records never see the rewritten paths (image keys hash file
bytes, not names). The files must still exist at those absolute paths on every node (a
shared file system).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from heritage_eval.core.runner import RunItem
from heritage_eval.core.types import ImagePart, Message

#: payload strings longer than this are text, never a path (no file-system look-up)
_MAX_PATH_CHARS = 4096
#: the suffix a payload string needs to be taken for a file name (``.png``, ``.jpeg``)
_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,8}")


def _joined(path: str, cwd: str) -> str:
    return path if os.path.isabs(path) else os.path.join(cwd, path)


def absolute_message(msg: Message, cwd: str) -> Message:
    """``msg`` with every relative :class:`ImagePart` path joined to ``cwd`` (the same
    object when it has none)."""
    if not any(isinstance(p, ImagePart) and not os.path.isabs(p.path) for p in msg.content):
        return msg
    parts = tuple(p.model_copy(update={"path": _joined(p.path, cwd)})
                  if isinstance(p, ImagePart) else p for p in msg.content)
    return msg.model_copy(update={"content": parts})


def absolute_payload(value: Any, cwd: str) -> Any:
    """``value`` with every string that is a relative path with a suffix (``x.png``; at
    most :data:`_MAX_PATH_CHARS` characters, one line) naming an existing regular file
    relative to ``cwd`` joined to ``cwd``; dicts, lists and tuples walked at any depth,
    other values unchanged."""
    if isinstance(value, str):
        if (value and not os.path.isabs(value) and len(value) <= _MAX_PATH_CHARS
                and "\n" not in value and "\0" not in value
                and _SUFFIX.fullmatch(os.path.splitext(value)[1])
                and os.path.isfile(os.path.join(cwd, value))):
            return os.path.join(cwd, value)
        return value
    if isinstance(value, dict):
        return {k: absolute_payload(v, cwd) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(absolute_payload(v, cwd) for v in value)
    return value


@dataclass(frozen=True)
class AbsoluteTurns:
    """A ``fill_turn`` whose messages get absolute image paths (picklable when ``fill``
    is: Ray ships it)."""

    fill: Callable[[int, Message, Sequence[str]], Message]
    cwd: str

    def __call__(self, index: int, msg: Message, answers: Sequence[str]) -> Message:
        return absolute_message(self.fill(index, msg, answers), self.cwd)


def portable_item(item: RunItem, cwd: str | None = None) -> RunItem:
    """``item`` as sent to a Ray node: every file reference absolute (module docstring),
    joined to ``cwd`` (default: this process's working folder)."""
    cwd = cwd or os.getcwd()
    conv = item.conversation
    fill = conv.fill_turn
    update: dict[str, Any] = {
        "turns": tuple(absolute_message(m, cwd) for m in conv.turns),
        "payload": absolute_payload(conv.payload, cwd),
        "fill_turn": AbsoluteTurns(fill, cwd) if fill is not None else None}
    return RunItem(item.id, conv.model_copy(update=update))
