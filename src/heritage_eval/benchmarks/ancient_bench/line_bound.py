"""An upper bound on the number of samples a release yields, without parsing a line.

``run ancient-bench`` holds the samples of a small release as a list (one read of the
release) and re-reads a large one on every pass (memory flat in its size). Which of the
two is decided before any sample is parsed, from this bound, so that a large release is
never held, not even for a moment.

Rule: a category yields at most one sample per line of its ``conv.jsonl`` (blank lines
yield none; a line over the size cap yields one error sample), so the number of lines
— newline characters, plus one for a last line without one — bounds it; with a per
category ``limit``, at most ``limit``. A ``conv.jsonl`` that cannot be opened as a
regular file inside the release yields exactly one error sample
(:func:`~heritage_eval.benchmarks.ancient_bench.loader.unreadable_part`) and counts 1.
"""

from __future__ import annotations

from pathlib import Path

from heritage_eval.core.datapath import open_regular
from heritage_eval.core.paths import PathOutsideRoot, joined_inside

#: Bytes read at a time while counting line breaks.
CHUNK = 1 << 20


def file_lines(path: Path, root: Path, stop: int | None = None) -> int:
    """Lines of ``path`` (newline characters, plus one for a last line that has none);
    1 for a file that cannot be opened as a regular file inside ``root`` (the loader's
    one error sample). Counting stops once ``stop`` is reached (then ``stop`` is
    returned). Memory: one chunk of :data:`CHUNK` bytes."""
    try:
        joined_inside(root, path.name, base=path.parent)
        fh = open_regular(path)
    except (OSError, PathOutsideRoot):
        return 1
    n = 0
    last = b"\n"
    with fh:
        try:
            while chunk := fh.read(CHUNK):
                n += chunk.count(b"\n")
                last = chunk[-1:]
                if stop is not None and n >= stop:
                    return stop
        except OSError:  # the loader ends the category with one error sample
            return n + 1
    return n + (last != b"\n")


def samples_bound(root: Path, categories: list[str], conv_file: str,
                  limit: int | None, stop: int | None = None) -> int:
    """At most how many samples the ``categories`` of the release at ``root`` yield
    (see the module docstring), each category capped at ``limit``; counting stops once
    the total reaches ``stop`` (then at least ``stop`` is returned)."""
    total = 0
    for cat in categories:
        left = None if stop is None else stop - total
        cap = left if limit is None else (limit if left is None else min(limit, left))
        n = file_lines(root / cat / conv_file, root, cap)
        total += n if limit is None else min(n, limit)
        if stop is not None and total >= stop:
            break
    return total
