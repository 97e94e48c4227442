"""Core records, caching, running and the run folder, shared by every benchmark.

Light on purpose (start-up time): the record types are loaded on first use.
"""

from __future__ import annotations

from typing import Any

_TYPES = ("Conversation", "GenerationSettings", "ImagePart", "Message", "Outcome",
          "Response", "Sample", "TextPart", "stable_hash")
__all__ = list(_TYPES)


def __getattr__(name: str) -> Any:
    if name in _TYPES:
        from heritage_eval.core import types

        return getattr(types, name)
    raise AttributeError(f"module 'heritage_eval.core' has no attribute {name!r}")
