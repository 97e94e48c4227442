"""The ``--out`` folder of ``heritage-eval compare``: which folder may be written, and
the manifest that marks a folder as an earlier comparison.

Rule (docs/reference/conventions.md, "Files the commands write"): an output folder that
is not empty is refused unless the command resumes there or ``--overwrite`` is given.
For ``compare`` "resumes there" means the folder holds an earlier comparison: its
:data:`MANIFEST` (``compare.json``, written last by
:func:`~heritage_eval.report.compare_files.write_comparison`) lists every file that
comparison wrote with its SHA-256. A non-empty ``--out`` is accepted without
``--overwrite`` only when

* its ``compare.json`` is such a manifest,
* every file it lists that is still there has the content it recorded (a file the user
  edited since, or one left by an interrupted comparison, is not replaced silently), and
* no other file in the folder has a name that ``compare`` writes (``compare.md``,
  ``models.*``, ``groups_*``, ``paired.csv``, ``disagreements.jsonl``): a
  ``compare.md`` of the user's own is never overwritten.

Other files in the folder are kept. A path that exists and is not a folder is refused
naming ``--out``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["MANIFEST", "MANIFEST_SCHEMA", "OutFolderError", "check_out", "earlier_files",
           "manifest_text", "remove_stale", "written_by_compare"]

#: The manifest file of a comparison folder.
MANIFEST = "compare.json"
#: Its ``schema`` value.
MANIFEST_SCHEMA = "heritage-eval/compare-output/1"
#: Names ``compare`` writes (a user's file of such a name is never overwritten).
_OURS = re.compile(r"(compare\.md|paired\.csv|disagreements\.jsonl|compare\.json"
                   r"|models\.(md|csv|tex)|groups_.+\.(md|csv|tex))")
_HINT = ("nothing was written. Use another --out (a new or empty folder), or --overwrite "
         "to write into it anyway (compare's files are replaced, other files are kept)")


class OutFolderError(ValueError):
    """``--out`` cannot be written (the message names the option and the folder)."""


def written_by_compare(name: str) -> bool:
    """Whether a file name is one that ``compare`` writes (see the module docstring)."""
    return _OURS.fullmatch(name) is not None


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file's bytes (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def manifest_text(out: Path, paths: Iterable[Path]) -> str:
    """The ``compare.json`` of the files ``paths`` just written into ``out``: schema and
    ``files`` (name -> SHA-256), as indented JSON with a final newline."""
    files = {p.name: sha256_of(p) for p in paths if p.parent == out}
    return json.dumps({"schema": MANIFEST_SCHEMA, "files": files}, indent=2) + "\n"


def earlier_files(out: Path) -> dict[str, str] | None:
    """Name -> SHA-256 of the files an earlier comparison wrote into ``out``, from its
    manifest; ``None`` when ``out`` holds no readable manifest of this schema."""
    try:
        data: Any = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("schema") != MANIFEST_SCHEMA:
        return None
    files = data.get("files")
    if not isinstance(files, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        return None
    return files


def remove_stale(out: Path, earlier: dict[str, str] | None, written: Iterable[Path]) -> None:
    """Remove the files of the earlier comparison in ``out`` (``earlier``: its manifest)
    that this one did not write again (a ``groups_<key>`` table of a key the new runs
    lack) and that still hold what it wrote; never another file."""
    now = {p.name for p in written}
    for name, digest in (earlier or {}).items():
        path = out / name
        if (name not in now and name != MANIFEST and "/" not in name and "\\" not in name
                and written_by_compare(name) and path.is_file()
                and sha256_of(path) == digest):
            path.unlink()


def check_out(out: Path, overwrite: bool = False) -> None:
    """Raise :class:`OutFolderError` unless ``compare`` may write into ``out``: it does
    not exist, is an empty folder, ``overwrite`` is set (a path that is not a folder is
    refused even then), or it holds an earlier comparison whose files are as it wrote
    them (module docstring). The message names ``--out``, the folder and, where it is
    one file, that file."""
    if out.exists() and not out.is_dir():
        raise OutFolderError(f"--out {out} exists and is not a folder; give a folder for "
                             "the comparison's files")
    if overwrite or not out.exists():
        return
    names = sorted(p.name for p in out.iterdir())
    if not names:
        return
    earlier = earlier_files(out)
    if earlier is None:
        why = ("its compare.json is not a comparison manifest"
               if MANIFEST in names else "it holds no earlier comparison (no compare.json)")
        raise OutFolderError(f"--out {out} is not empty and {why}; {_HINT}")
    for name in names:
        path = out / name
        if name == MANIFEST or not path.is_file():
            continue
        if name in earlier:
            if sha256_of(path) != earlier[name]:
                raise OutFolderError(
                    f"--out {out}: {path} was changed after compare wrote it (edited, or "
                    f"an earlier compare was interrupted); {_HINT}")
        elif written_by_compare(name):
            raise OutFolderError(f"--out {out}: {path} was not written by compare and "
                                 f"would be replaced; {_HINT}")
