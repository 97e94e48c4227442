"""What a benchmark hands to the exporter (:class:`ExportSource`, :class:`Column`), the
errors of the export and read-back, and the file-name check of the read-back.

Light (no pyarrow): the loaders' read-back hook imports it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from heritage_eval.core.plugins import DataFormatError

#: Version of the export layout; the read-back refuses other versions.
FORMAT = "heritage-eval-hf/1"

Kind = Literal["string", "int64", "image", "images", "strings"]

#: (config name, row: column name -> value)
Row = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Column:
    """One column: ``name``, ``kind`` (``string``, ``int64``, ``image``, ``images`` = list
    of images, ``strings`` = list of strings) and a one-line ``doc`` for the card."""

    name: str
    kind: Kind
    doc: str


class HfExportError(ValueError):
    """The source cannot be exported (not found, not the benchmark's layout); the
    message names the path."""


class HfReadError(DataFormatError):
    """An exported folder cannot be read back (not an export, another benchmark's,
    another format version, an unsafe file name); the message names the file."""


@dataclass(frozen=True)
class StatTable:
    """One statistics table of the dataset card: ``title``, column ``header`` and
    ``rows`` (cells already formatted)."""

    title: str
    header: tuple[str, ...]
    rows: list[tuple[str, ...]]


@dataclass
class ExportSource:
    """One benchmark ready to export.

    ``benchmark``: the ``export hf`` name (``ancient-bench``, ``hcsu``, ``muse``);
    ``columns``: the parquet columns; ``total``: number of rows; ``rows``: a function
    yielding :data:`Row` in source order, reading each image only when its row is
    yielded; ``meta``: JSON-able data stored in every shard's schema metadata (the
    read-back needs it, e.g. the MUSE question-file header); ``provenance``: source,
    seed …, shown in the card; ``tables``: the card's statistics; ``config_docs``:
    config name -> one line; ``warnings``: notes on the source (unknown medium folder,
    empty file …) that do not change what is exported; ``problems``: samples not exported
    or exported without (some of) their images, each naming the file (and line) and why
    (``export hf`` then exits with status 1); ``inputs``: the files and folders the
    export reads (release root, question file and its image folders): ``--out`` may not
    be one of them, above one, or a non-empty folder inside one."""

    benchmark: str
    columns: list[Column]
    total: int
    rows: Callable[[], Iterator[Row]]
    meta: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    tables: list[StatTable] = field(default_factory=list)
    config_docs: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    inputs: list[Path] = field(default_factory=list)
    pretty_name: str = ""
    description: str = ""


def safe_relative(name: str, where: str) -> PurePosixPath:
    """``name`` as a relative POSIX path that stays inside its folder; raises
    :class:`HfReadError` (naming ``where``) for an absolute path, a drive, ``..`` or an
    empty name — an export is untrusted input when read back."""
    text = name.replace("\\", "/")
    rel = PurePosixPath(text)
    if not text or rel.is_absolute() or ":" in rel.parts[0] or any(
            part in ("..", "") for part in text.split("/")):
        raise HfReadError(f"{where}: unsafe file name {name!r} (absolute, '..' or empty): "
                          "refused")
    return rel
