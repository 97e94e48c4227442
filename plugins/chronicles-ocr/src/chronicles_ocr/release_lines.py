"""Reading ``Chronicles_OCR.jsonl`` line by line, and the small facts a load keeps.

:func:`count_newlines` bounds the size of a release before any line is parsed (it
decides between holding the samples and re-reading the file on each pass);
:func:`text_lines` gives the file's lines as :func:`physical_lines` of
``read_regular_text(path)`` does, one line at a time, feeding a SHA-256 with the same
bytes as ``text.encode("utf-8")`` of the whole decoded text. A JSON Lines file breaks
lines at line feeds only (after universal newlines: ``\r\n`` and ``\r`` too): U+0085,
U+2028 and U+2029 are valid inside a JSON string and do not end a row (``str.splitlines``
would cut the row there);
:class:`LoadFacts` folds the samples of each row into the counts of
:meth:`~chronicles_ocr.loader.Release.info`, the load-error warnings and (optionally)
the ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heritage_eval.plugin import CompactIds, open_regular, read_regular_text

if TYPE_CHECKING:
    from hashlib import _Hash

    from chronicles_ocr.loader import Sample

#: bytes read at a time by :func:`count_newlines`
CHUNK = 1 << 20


def count_newlines(path: Path, stop: int) -> int:
    """The number of ``b"\\n"`` bytes in the regular file ``path``, counting stopped once
    it reaches ``stop`` (``stop <= 0``: 0, the file only opened). Raises as
    :func:`~heritage_eval.plugin.open_regular` (``OSError``)."""
    count = 0
    with open_regular(path, "rb") as fh:
        while count < stop:
            chunk = fh.read(CHUNK)
            if not chunk:
                break
            count += chunk.count(b"\n")
    return count


def physical_lines(text: str) -> list[str]:
    """The lines of a JSON Lines ``text`` (already newline-translated): split at line
    feeds only, a final line feed ending the last line (no empty line after it)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def text_lines(path: Path, sha: _Hash | None = None) -> Iterator[str]:
    """The lines of ``path`` as ``physical_lines(read_regular_text(path))`` gives them,
    read one at a time; ``sha`` (when given) is updated with each physical
    line's UTF-8 bytes after newline translation (so, at the end, with
    ``read_regular_text(path).encode("utf-8")``). Raises as ``read_regular_text``:
    ``OSError``, and ``UnicodeDecodeError`` with the message a whole read gives (the
    file is read again whole to word it)."""
    try:
        with open_regular(path, "r", encoding="utf-8") as fh:
            for line in fh:
                if sha is not None:
                    sha.update(line.encode("utf-8"))
                yield line[:-1] if line.endswith("\n") else line
    except UnicodeDecodeError:
        read_regular_text(path)  # the same error, its position counted from the start
        raise


class LoadFacts:
    """What a load keeps of its samples: ``n`` (samples), ``warnings`` (their load
    errors, in order), ``ids`` (:class:`~heritage_eval.plugin.CompactIds` of their ids,
    or ``None`` when not kept) and the distinct images per script in first-seen order
    (:meth:`images_per_script`); ``no_group``: the script of a line error. Rows are
    added whole (:meth:`add_row`): the samples of
    one release row share one image path, and a row of one of the seven scripts is the
    only row of its image path that gives samples of that script (a repeated path is a
    ``(none)`` line error), so those are counted by row; ``(none)`` samples keep their
    paths in a set (error lines only)."""

    def __init__(self, keep_ids: bool, no_group: str) -> None:
        self.no_group = no_group
        self.n = 0
        self.warnings: list[str] = []
        self.ids: CompactIds | None = CompactIds() if keep_ids else None
        self._per_script: dict[str, int] = {}
        self._no_group: set[str] = set()

    def add_row(self, samples: Iterable[Sample]) -> None:
        """Fold the samples of one row (in order)."""
        counted: set[str] = set()
        for s in samples:
            self.n += 1
            if self.ids is not None:
                self.ids.append(s.id)
            if s.load_error:
                self.warnings.append(s.load_error)
            if s.script == self.no_group:
                self._per_script.setdefault(s.script, 0)
                self._no_group.add(s.image_path)
            elif s.script not in counted:
                counted.add(s.script)
                self._per_script[s.script] = self._per_script.get(s.script, 0) + 1

    def images_per_script(self) -> dict[str, Any]:
        """``{script id: distinct image paths}`` in the order scripts first appear."""
        return {k: len(self._no_group) if k == self.no_group else v
                for k, v in self._per_script.items()}
