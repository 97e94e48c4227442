"""Model backends. Each module registers itself with :func:`register_backend` on import.

Benchmark-specific baselines (``baseline:image-similarity``, ``baseline:jigsaw-edges`` …)
live in their benchmark package and register when the benchmarks are loaded.
"""

from heritage_eval.models import baselines, openai_compat, rapidocr_backend
from heritage_eval.models.base import (
    BackendOptions,
    ModelBackend,
    create_backend,
    register_backend,
    registered_backends,
)

__all__ = [
    "BackendOptions",
    "ModelBackend",
    "baselines",
    "create_backend",
    "openai_compat",
    "rapidocr_backend",
    "register_backend",
    "registered_backends",
]
