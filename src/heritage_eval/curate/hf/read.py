"""Read an ``export hf`` folder back: recognise it, materialise the release layout.

An export is a folder holding a dataset card ``README.md`` and parquet shards
(``data/<config>/*.parquet``, or ``*.parquet`` / ``data/*.parquet`` when re-arranged)
whose schema metadata names the benchmark (key ``heritage_eval``, written by
:mod:`.export`). The benchmarks' loaders call :func:`materialise_if_export` first: any
other path comes back unchanged, an export comes back as a folder in the release layout
(``<medium>/conv.jsonl`` …, ``bei/`` + ``bei_annotations.json`` …) or, for MUSE, as
the path of a ``questions.jsonl``, so everything after the loader's first lines runs
as on the original data.

Where: ``$HERITAGE_EVAL_HF_CACHE/<hash>``, else ``$XDG_CACHE_HOME/heritage-eval/hf/<hash>``,
else ``~/.cache/heritage-eval/hf/<hash>``; ``<hash>`` is the SHA-256 of the format
version and every shard's relative path and bytes. A shared cache rather than the run
folder because the loaders (``load_release``, ``load_hcsu``, the MUSE question reader)
do not know the run folder and ``score`` / ``stats`` call them too; keyed by content, a
re-run, a resumed run or another model's run of the same export finds the same image
paths (the same response-cache keys) without extracting again, and a changed export can
never be served stale. The folder appears by one rename once complete, so a killed
extraction leaves nothing half-written (its temporary folder ``.<hash>.tmp-<owner>-…``
is removed by a later read-back once its process is gone, :mod:`.tempdirs`); concurrent
runs each build and one rename wins. Before anything is built the export is checked
for completeness (:mod:`.complete`: shard series and the card's row counts). Rows are
read one record batch at a time, so memory holds one batch of images.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from heritage_eval.core.datapath import confined, open_regular, read_regular_text
from heritage_eval.core.paths import PathOutsideRoot
from heritage_eval.curate.hf.complete import check_complete
from heritage_eval.curate.hf.spec import FORMAT, HfReadError
from heritage_eval.curate.hf.tempdirs import make_temp_dir, remove_stale, temp_pattern

CACHE_ENV = "HERITAGE_EVAL_HF_CACHE"
CARD = "README.md"
#: Where shards may lie under an export folder.
SHARD_GLOBS = ("*.parquet", "data/*.parquet", "data/*/*.parquet")
#: Rows per record batch when reading shards back (page images can be tens of MB each).
BATCH_ROWS = 16
BENCHMARKS = ("ancient-bench", "hcsu", "muse")
#: (export, copy) pairs whose read-back note was printed in this process.
_NOTED: set[tuple[str, str]] = set()


def shard_files(path: Path) -> list[Path]:
    """The parquet shards of an export folder, sorted by relative path (may be empty)."""
    # a FIFO, socket or device named like a shard is kept so check_shards names it
    found = {p for pattern in SHARD_GLOBS for p in path.glob(pattern)
             if p.exists() and not p.is_dir()}
    return sorted(found, key=lambda p: p.relative_to(path).as_posix())


def check_shards(path: Path, files: list[Path]) -> None:
    """Refuse (:class:`HfReadError` naming it) a shard that is a symbolic link leading out
    of the export folder ``path`` (unless ``--allow-outside-paths``) or is not a regular
    file (``docs/paths.md``; nothing is opened)."""
    for f in files:
        try:
            confined(path, f)
        except (OSError, PathOutsideRoot) as exc:
            raise HfReadError(f"{f}: shard refused ({exc})") from exc


def is_export(path: str | Path) -> bool:
    """Whether ``path`` is a folder with a dataset card and at least one parquet shard
    (cheap: a few ``glob`` calls, no file is opened)."""
    p = Path(path)
    return p.is_dir() and (p / CARD).is_file() and bool(shard_files(p))


def cache_root() -> Path:
    """The folder holding materialised exports (see the module docstring)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "heritage-eval" / "hf"


def content_hash(root: Path, files: list[Path]) -> str:
    """SHA-256 (hex) of the format version and each shard's relative path and bytes."""
    h = hashlib.sha256(FORMAT.encode())
    for f in files:
        h.update(b"\0" + f.relative_to(root).as_posix().encode() + b"\0")
        with open_regular(f) as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def export_meta(files: list[Path]) -> dict[str, Any]:
    """The ``heritage_eval`` schema metadata shared by every shard; raises
    :class:`HfReadError` naming the shard that lacks it, is unreadable, has another
    format version or disagrees with the first shard."""
    import pyarrow.parquet as pq

    from heritage_eval.curate.hf.features import META_KEY

    first: dict[str, Any] | None = None
    for f in files:
        try:
            raw = (pq.read_schema(str(f)).metadata or {}).get(META_KEY.encode())
        except Exception as exc:  # pyarrow raises ArrowInvalid, OSError …
            raise HfReadError(f"{f}: not a readable parquet file ({exc})") from exc
        if raw is None:
            raise HfReadError(f"{f}: no '{META_KEY}' schema metadata: not written by "
                              "'heritage-eval export hf'")
        meta = json.loads(raw)
        if meta.get("format") != FORMAT:
            raise HfReadError(f"{f}: export format {meta.get('format')!r}, this version "
                              f"reads {FORMAT!r}")
        if first is None:
            first = meta
        elif meta != first:
            raise HfReadError(f"{f}: its metadata differs from {files[0]}'s (shards of "
                              "two exports mixed in one folder?)")
    if first is None:
        raise HfReadError("no parquet shard")
    return first


def iter_rows(files: list[Path]) -> Iterator[dict[str, Any]]:
    """Every row of ``files`` in order, one record batch in memory at a time. Raises
    :class:`HfReadError` naming the shard when its data cannot be decoded (a corrupted
    page: pyarrow's own message says only "Couldn't deserialize thrift" or the like)."""
    import pyarrow.parquet as pq

    for f in files:
        try:
            pf = pq.ParquetFile(str(f))
            batches = pf.iter_batches(batch_size=BATCH_ROWS)
            while True:
                try:
                    batch = next(batches)
                except StopIteration:
                    break
                yield from batch.to_pylist()
        except HfReadError:
            raise
        except Exception as exc:  # ArrowInvalid, OSError … from a damaged shard
            why = " ".join(str(exc).split())  # pyarrow's text spans lines
            raise HfReadError(f"{f}: corrupted parquet shard, cannot be read ({why})"
                              ) from exc


def read_card(root: Path) -> dict[str, Any] | None:
    """The YAML front matter of ``root/README.md``; ``None`` without a card. Raises
    :class:`HfReadError` naming the card when its front matter does not parse."""
    import yaml

    from heritage_eval.curate.hf.card import read_front_matter

    card = root / CARD
    if not card.is_file():
        return None
    try:
        confined(root, card)
        return read_front_matter(read_regular_text(card), str(card))
    except (ValueError, OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise HfReadError(f"{card}: unreadable dataset card ({exc})") from exc


def _build(benchmark: str, meta: dict[str, Any], files: list[Path], dest: Path) -> None:
    rows = iter_rows(files)
    if benchmark == "ancient-bench":
        from heritage_eval.curate.hf.ancient_bench import materialise as ab

        ab(rows, dest)
    elif benchmark == "hcsu":
        from heritage_eval.curate.hf.hcsu import materialise as hcsu

        hcsu(rows, dest)
    else:
        from heritage_eval.curate.hf.muse import materialise as muse

        header = meta.get("header")
        if not isinstance(header, dict):
            raise HfReadError(f"{files[0]}: no MUSE question-file header in the metadata")
        muse(rows, header, dest)


def materialise(path: str | Path, benchmark: str) -> Path:
    """The release-layout folder of the export at ``path`` (built on first use; for
    ``muse`` the ``questions.jsonl`` inside it). Raises :class:`HfReadError` (naming the
    export folder or shard) when ``path`` is not an export of ``benchmark``, shards or
    rows are missing against the names and the card, a shard is corrupted, or a row is
    unsafe / malformed."""
    if benchmark not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {benchmark!r} (known: {', '.join(BENCHMARKS)})")
    root = Path(path)
    files = shard_files(root)
    if not files:
        raise HfReadError(f"{root}: no parquet shard (looked for {', '.join(SHARD_GLOBS)})")
    from heritage_eval.core.extras import require_extra

    require_extra("curate", ("pyarrow",), f"reading the Hugging Face export {root}")
    check_shards(root, files)
    meta = export_meta(files)
    if meta.get("benchmark") != benchmark:
        raise HfReadError(f"{root} is an export of {meta.get('benchmark')!r}, not of "
                          f"{benchmark!r}")
    check_complete(root, files, read_card(root))
    dest = cache_root() / content_hash(root, files)
    if not dest.is_dir():
        dest.parent.mkdir(parents=True, exist_ok=True)
        remove_stale(dest.parent, temp_pattern("[0-9a-f]{64}", ("tmp",)))  # killed runs'
        tmp = make_temp_dir(dest.parent, dest.name)
        try:
            try:
                _build(benchmark, meta, files, tmp)
            except HfReadError as exc:
                if str(root) in str(exc):
                    raise
                raise HfReadError(f"export {root}: {exc}") from exc
            (tmp / "EXPORT_SOURCE.json").write_text(json.dumps(
                {"export": str(root.resolve()), "benchmark": benchmark,
                 "shards": [f.relative_to(root).as_posix() for f in files]},
                ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
            try:
                tmp.rename(dest)
            except OSError:  # another process finished first: use its copy
                if not dest.is_dir():
                    raise
                shutil.rmtree(tmp, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    if (str(root), str(dest)) not in _NOTED:  # once per process: names the export for
        _NOTED.add((str(root), str(dest)))   # errors that later name the copy's files
        print(f"note: {root} is a Hugging Face export; read back into {dest}",
              file=sys.stderr)
    return dest / "questions.jsonl" if benchmark == "muse" else dest


def materialise_if_export(path: str | Path, benchmark: str) -> Path:
    """``path`` itself unless it is an export (:func:`is_export`), else
    :func:`materialise` of it — the one call the benchmarks' loaders make."""
    return materialise(path, benchmark) if is_export(path) else Path(path)
