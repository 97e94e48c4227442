"""Core records, caching, running and the run folder, shared by every benchmark."""

from heritage_eval.core.types import (
    Conversation,
    GenerationSettings,
    ImagePart,
    Message,
    Outcome,
    Response,
    Sample,
    TextPart,
    stable_hash,
)

__all__ = [
    "Conversation",
    "GenerationSettings",
    "ImagePart",
    "Message",
    "Outcome",
    "Response",
    "Sample",
    "TextPart",
    "stable_hash",
]
