"""The ``--out`` folder of ``ingest iiif``: whether it may be written, what an earlier
run left there, and the side files written so that no user data is lost.

- :func:`check_out`: a folder that is missing or empty, or that holds an earlier ingest
  of the *same* manifest (its ``provenance.json`` says so: same manifest ``id``, or the
  same source when the manifest has no id) may be written; any other non-empty folder
  is refused unless ``overwrite``.
- :func:`load_previous`: the earlier ``manifest.jsonl`` lines, ``conv.jsonl`` lines
  (verbatim: a transcription filled into ``human_gt`` is the user's work) and
  ``labelstudio_tasks.json`` items; nothing with ``overwrite``.
- :func:`write_side_files`: ``provenance.json``, and ``conv.jsonl`` /
  ``labelstudio_tasks.json`` *merged*: every earlier line / task is kept as it was (by
  image name), a line / task is added only for an image not there yet.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heritage_eval.core.datapath import read_regular_text
from heritage_eval.core.store import atomic_write_lines, atomic_write_text
from heritage_eval.curate.iiif.manifest import Manifest

TOOL = "heritage-eval ingest iiif"
INGEST_FILES = ("manifest.jsonl", "provenance.json", "labelstudio_tasks.json", "conv.jsonl")


class OutError(ValueError):
    """An ``--out`` folder that must not be written (or whose earlier files cannot be
    read); the message names the folder or file and what to do."""


@dataclass
class Previous:
    """What an earlier run left in the folder: ``lines`` (``manifest.jsonl`` objects in
    file order), ``conv`` (``conv.jsonl`` lines verbatim, blank lines dropped) and
    ``tasks`` (the ``labelstudio_tasks.json`` list)."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    conv: list[str] = field(default_factory=list)
    tasks: list[Any] = field(default_factory=list)

    def ok(self) -> dict[tuple[str, str], dict[str, Any]]:
        """``ok`` lines by ``(canvas_id, region)`` (the last one wins)."""
        return {(str(x.get("canvas_id")), str(x.get("region"))): x for x in self.lines
                if x.get("status") == "ok"}


def _manifest_key(source: str, manifest_id: str) -> tuple[str, str]:
    return ("id", manifest_id) if manifest_id else ("source", source)


def check_out(out: Path, manifest: Manifest, source: str, overwrite: bool) -> None:
    """Raise :class:`OutError` unless ``out`` is missing, empty, ``overwrite`` is set, or
    its ``provenance.json`` records an ingest of this manifest (same ``id``; same
    ``source`` when the manifest has no id)."""
    if out.exists() and not out.is_dir():
        raise OutError(f"--out {out} exists and is not a folder")
    if overwrite or not out.exists() or not any(out.iterdir()):
        return
    prov = out / "provenance.json"
    hint = "choose a new or empty folder, or pass --overwrite to write the ingest files " \
           f"({', '.join(INGEST_FILES)}, images/…) over what is there"
    if not prov.is_file():
        raise OutError(f"--out {out} is not empty and is not an earlier `ingest iiif` "
                       f"folder (no provenance.json); {hint}")
    try:
        data = json.loads(prov.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OutError(f"{prov}: cannot be read ({exc}); {hint}") from exc
    earlier = data.get("manifest") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("tool") != TOOL or not isinstance(earlier, dict):
        raise OutError(f"--out {out} is not empty and its provenance.json was not written "
                       f"by `ingest iiif`; {hint}")
    then = _manifest_key(str(earlier.get("source", "")), str(earlier.get("id") or ""))
    now = _manifest_key(source, manifest.id)
    if then != now:
        raise OutError(f"--out {out} holds an ingest of another manifest ({then[0]} "
                       f"{then[1]!r}, not {now[1]!r}); {hint}")


def _read_text(path: Path) -> str | None:
    if not path.is_file():
        return None
    try:
        return read_regular_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise OutError(f"{path}: cannot be read ({exc}); fix or move it, or pass "
                       "--overwrite") from exc


def load_previous(out: Path, overwrite: bool) -> Previous:
    """The earlier outputs in ``out`` (empty with ``overwrite``). Unreadable lines of
    ``manifest.jsonl`` are skipped (those images are fetched again); raises
    :class:`OutError` when ``conv.jsonl`` or ``labelstudio_tasks.json`` cannot be read
    or the latter is not a JSON list (user data is never written over)."""
    prev = Previous()
    if overwrite:
        return prev
    for text in (_read_text(out / "manifest.jsonl") or "").splitlines():
        try:
            line = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(line, dict):
            prev.lines.append(line)
    prev.conv = [x for x in (_read_text(out / "conv.jsonl") or "").splitlines() if x.strip()]
    tasks_path = out / "labelstudio_tasks.json"
    tasks_text = _read_text(tasks_path)
    if tasks_text is not None:
        try:
            tasks = json.loads(tasks_text)
        except json.JSONDecodeError as exc:
            raise OutError(f"{tasks_path}:{exc.lineno}: not JSON ({exc.msg}); fix or move "
                           "it, or pass --overwrite") from exc
        if not isinstance(tasks, list):
            raise OutError(f"{tasks_path}: expected a JSON list of Label Studio tasks; fix "
                           "or move it, or pass --overwrite")
        prev.tasks = tasks
    return prev


def _conv_image(text: str) -> str | None:
    try:
        line = json.loads(text)
    except json.JSONDecodeError:
        return None
    return str(line.get("image")) if isinstance(line, dict) else None


def _task_image(task: Any) -> str | None:
    data = task.get("data") if isinstance(task, dict) else None
    return str(data.get("image")) if isinstance(data, dict) else None


def merged_conv(previous: list[str], ok: list[dict[str, Any]]) -> list[str]:
    """``previous`` ``conv.jsonl`` lines unchanged, then ``{"image": name, "human_gt":
    ""}`` for each ``ok`` line whose file name is in none of them."""
    have = {_conv_image(x) for x in previous}
    new = [Path(x["file"]).name for x in ok]
    return previous + [json.dumps({"image": name, "human_gt": ""}, ensure_ascii=False)
                       for name in dict.fromkeys(new) if name not in have]


def merged_tasks(previous: list[Any], ok: list[dict[str, Any]]) -> list[Any]:
    """``previous`` Label Studio tasks unchanged, then a task ``{"data": {"image",
    "canvas_id", "source_url"}}`` for each ``ok`` line whose file is in none of them."""
    have = {_task_image(t) for t in previous}
    added = []
    for x in ok:
        if x["file"] not in have:
            have.add(x["file"])
            added.append({"data": {"image": x["file"], "canvas_id": x["canvas_id"],
                                   "source_url": x["source_url"]}})
    return previous + added


def write_provenance(out: Path, provenance: dict[str, Any]) -> None:
    """``provenance.json`` (indented JSON), written atomically."""
    atomic_write_text(out / "provenance.json",
                      json.dumps(provenance, ensure_ascii=False, indent=2) + "\n")


def write_side_files(out: Path, ok: list[dict[str, Any]], previous: Previous,
                     provenance: dict[str, Any]) -> None:
    """``provenance.json`` as given, and ``labelstudio_tasks.json`` and ``conv.jsonl``
    merged from ``previous`` with the ``ok`` manifest lines (module docstring)."""
    write_provenance(out, provenance)
    atomic_write_text(out / "labelstudio_tasks.json", json.dumps(
        merged_tasks(previous.tasks, ok), ensure_ascii=False, indent=2) + "\n")
    atomic_write_lines(out / "conv.jsonl", merged_conv(previous.conv, ok))
