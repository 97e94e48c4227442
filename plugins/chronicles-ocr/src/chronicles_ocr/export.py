"""Write a run's answers back in the official layout: ``OUT/<model_tag>/results.jsonl``
as the official ``infer.py`` writes it, so that the official ``judge.py`` and
``summarize.py`` (or ``heritage-eval score chronicles-ocr``) can score them.

One line per image and model: the release row (all its fields, when ``data`` is given;
else ``image_path`` and ``font_type``), then ``infer_results``: task key (``字体分类``,
``字符提取``, ``字符检测``, ``单字识别``, in the official order) -> ``{"thinking",
"answer", "extract"?}`` — ``extract`` only where an answer was read (a failed reading
has none, as in ``infer.py``); recognition adds ``gt_char``, ``target_bbox_xyxy``,
``target_index``, ``seed``; an image without a recognition target gets the official
skipped entry; a request that failed gets ``{"thinking": "", "answer": "", "error"}``.
Images that could not be used (data errors) are left out, as ``infer.py`` leaves out a
missing image, and so are those a scored model had no answer for.

``heritage-eval export chronicles-ocr RUN_DIR OUT_DIR [--data DATA] [--tag MODEL=TAG …]``
(also ``python -m chronicles_ocr.export …``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from chronicles_ocr.loader import image_key, locate
from chronicles_ocr.release_lines import physical_lines
from heritage_eval.plugin import SampleRecord, read_regular_text

BENCHMARK = "chronicles-ocr"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
#: characters a ``--tag`` folder name may not hold (a path, or a name no system takes)
_NOT_IN_TAG = re.compile(r"[/\\:\x00-\x1f]")


def default_tag(model: str) -> str:
    """A folder name for a model spec: the part after the first ``:`` (the model's own
    name), characters other than letters, digits, ``.``, ``_``, ``-`` replaced by ``_``."""
    name = model.split(":", 1)[1] if ":" in model else model
    return _UNSAFE.sub("_", name).strip("._") or "model"


def check_tag(tag: str) -> str:
    """``tag`` when it is a plain folder name (one path part, written under ``OUT``):
    not empty, no ``/``, ``\\``, ``:`` or control character, not ``.`` / ``..`` and not
    starting with ``.`` (the official ``judge.py`` and ``score`` skip such folders).
    Raises ``ValueError`` naming the tag otherwise."""
    if not tag or _NOT_IN_TAG.search(tag) or tag.startswith("."):
        raise ValueError(f"--tag: {tag!r} is not a plain folder name (no '/', '\\', ':', "
                         "'..', leading '.' or absolute path: the file is written as "
                         "OUT/<TAG>/results.jsonl)")
    return tag


def parse_tags(values: Sequence[str]) -> dict[str, str]:
    """``--tag MODEL=TAG`` values as model -> tag (split at the first ``=``). Raises
    ``ValueError`` for a value without ``=``, an empty model or a tag that
    :func:`check_tag` refuses."""
    out: dict[str, str] = {}
    for value in values:
        model, sep, tag = value.partition("=")
        if not sep or not model:
            raise ValueError(f"--tag {value!r}: expected MODEL=TAG (e.g. "
                             "openai:qwen2.5-vl=qwen)")
        out[model] = check_tag(tag)
    return out


def _one_line(exc: Exception) -> str:
    """One line saying why a line was skipped (a pydantic validation error, a JSON
    error, nesting too deep)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):  # pydantic's ValidationError (a ValueError)
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "record"
        return f"not a sample record ({where}: {first.get('msg', 'invalid')})"
    if isinstance(exc, RecursionError):
        return "not valid JSON (nested too deeply)"
    text = str(exc).splitlines()
    return f"not valid JSON ({text[0]})" if isinstance(exc, json.JSONDecodeError) else \
        (text[0] if text else type(exc).__name__)


def _warn(notes: list[str] | None, text: str) -> None:
    if notes is None:
        warnings.warn(text, UserWarning, stacklevel=3)
    else:
        notes.append(text)


def read_records(run_dir: Path, notes: list[str] | None = None) -> list[SampleRecord]:
    """The records of ``run_dir/samples.jsonl``; a line that is not a sample record is
    skipped with a note ``FILE:LINE: skipped: why`` (appended to ``notes``, else a
    ``UserWarning``), as ``heritage-eval view`` skips it. Raises ``OSError`` /
    ``UnicodeDecodeError`` when the file cannot be read."""
    path = Path(run_dir) / "samples.jsonl"
    out = []
    for number, line in enumerate(physical_lines(read_regular_text(path)), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            out.append(SampleRecord.model_validate(data))
        except (ValueError, RecursionError) as exc:
            _warn(notes, f"{path}:{number}: skipped: {_one_line(exc)}")
    return out


def check_benchmark(records: Sequence[SampleRecord], run_dir: Path) -> None:
    """Raise ``ValueError`` unless ``records`` are a chronicles-ocr run's (naming the
    benchmark found) and there is at least one."""
    others = sorted({r.benchmark for r in records} - {BENCHMARK})
    if others:
        raise ValueError(f"{run_dir} is a run of {', '.join(others)}, not {BENCHMARK}: "
                         f"'export {BENCHMARK}' writes only {BENCHMARK} answers")
    if not records:
        raise ValueError(f"{Path(run_dir) / 'samples.jsonl'} holds no record to export")


def release_rows(data: Path, notes: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Image path -> release row of ``data`` (folder or JSONL file; the first row of an
    image wins, as the loader keeps it). A line that is not a JSON object is skipped with
    a note ``FILE:LINE`` (``notes``, else a ``UserWarning``): its image is then written
    with ``image_path`` and ``font_type`` only. Raises ``OSError`` /
    ``UnicodeDecodeError`` when the file cannot be read."""
    _, path = locate(data)
    rows: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(physical_lines(read_regular_text(path)), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError) as exc:
            _warn(notes, f"{path}:{number}: skipped: {_one_line(exc)}")
            continue
        if isinstance(row, dict) and image_key(row):
            rows.setdefault(image_key(row), row)
        else:
            _warn(notes, f"{path}:{number}: skipped: not a JSON object with an image_path")
    return rows


def task_entry(record: SampleRecord) -> dict[str, Any] | None:
    """The ``infer_results`` entry of one record, or ``None`` for a data error."""
    d = record.details
    if (d.get("error_kind") == "data" and not d.get("no_target")) or \
            d.get("official_absent"):
        return None
    if d.get("no_target"):
        return {"thinking": "", "answer": "", "error": "no_referring_target",
                "skipped": True}
    turn = record.scored_turn
    resp = turn.response if turn is not None else None
    if resp is None or resp.text is None:
        entry: dict[str, Any] = {"thinking": "", "answer": "",
                                 "error": record.error or "no answer"}
    else:
        entry = {"thinking": resp.reasoning or "", "answer": resp.text}
        if d.get("extract") is not None:
            entry["extract"] = d["extract"]
    target = d.get("target")
    if record.groups.get("task") == "recognition" and isinstance(target, dict):
        entry.update(gt_char=target.get("char"), target_bbox_xyxy=target.get("bbox_xyxy"),
                     target_index=target.get("index"), seed=target.get("seed"))
    return entry


def results_lines(records: Iterable[SampleRecord],
                  rows: Mapping[str, dict[str, Any]] | None = None
                  ) -> dict[str, list[dict[str, Any]]]:
    """Model -> its ``results.jsonl`` objects, images in order of first record."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for record in records:
        image = record.details.get("image_path")
        task = record.details.get("task_zh")
        entry = task_entry(record)
        lines = out.setdefault(record.model, {})  # a model without a line: an empty file
        if not image or not task or entry is None:
            continue
        if image not in lines:
            base = dict((rows or {}).get(image) or {
                "image_path": image, "font_type": record.details.get("script_zh", "")})
            lines[image] = {**base, "infer_results": {}, "image_path": image}
        lines[image]["infer_results"][task] = entry
    return {model: list(lines.values()) for model, lines in out.items()}


def export_results(run_dir: Path, out_dir: Path, *, data: Path | None = None,
                   tags: Mapping[str, str] | None = None,
                   notes: list[str] | None = None) -> dict[str, Path]:
    """Write ``out_dir/<tag>/results.jsonl`` for every model of the chronicles-ocr run in
    ``run_dir`` (module docstring); ``tags``: model spec -> folder name (default
    :func:`default_tag`; each checked by :func:`check_tag`). Lines skipped while
    reading go to ``notes`` (else ``UserWarning``). Returns tag -> file written.
    Raises ``OSError`` / ``UnicodeDecodeError`` for an unreadable run or release, and
    ``ValueError`` — before anything is written — for a run of another benchmark or
    without records, a tag that is not a plain folder name or names a model the run
    does not hold, and two models that would share a folder."""
    records = read_records(run_dir, notes)
    check_benchmark(records, run_dir)
    lines = results_lines(records, release_rows(data, notes) if data else None)
    chosen = {m: check_tag(t) for m, t in (tags or {}).items()}
    unknown = sorted(set(chosen) - set(lines))
    if unknown:
        raise ValueError(f"--tag: no model {', '.join(map(repr, unknown))} in {run_dir} "
                         f"(its models: {', '.join(lines)})")
    names = {m: chosen.get(m) or default_tag(m) for m in lines}
    if len(set(names.values())) != len(names):
        raise ValueError(f"two models would share a folder: {names}; give --tag")
    written = {}
    for model, objects in lines.items():
        path = Path(out_dir) / names[model] / "results.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objects),
                        encoding="utf-8")
        written[names[model]] = path
    return written


def add_args(p: argparse.ArgumentParser) -> None:
    """The options of ``heritage-eval export chronicles-ocr`` (and of ``python -m
    chronicles_ocr.export``)."""
    p.add_argument("run", type=Path, help="run folder of chronicles-ocr (run or score)")
    p.add_argument("out", type=Path, help="folder to write <model_tag>/results.jsonl in")
    p.add_argument("--data", type=Path, help="the release, to copy its rows' fields")
    p.add_argument("--tag", action="append", default=[], metavar="MODEL=TAG",
                   help="folder name of a model (default: its name, made safe); TAG must "
                        "be a plain folder name")


def handle(args: argparse.Namespace) -> int:
    """Export as the parsed ``args`` say: notes on stderr as ``warning:`` lines, each
    file written on stdout; exit status 0, or 2 (one ``error:`` line, nothing
    written) on an error."""
    notes: list[str] = []
    try:
        tags = parse_tags(args.tag)
        written = export_results(args.run, args.out, data=args.data, tags=tags,
                                 notes=notes)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        for note in notes:
            print(f"warning: {note}", file=sys.stderr)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    for tag, path in written.items():
        print(f"{tag}: {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The command line of the module docstring; exit status 0, or 2 on an error."""
    p = argparse.ArgumentParser(prog="python -m chronicles_ocr.export",
                                description=__doc__.split("\n\n")[0])
    add_args(p)
    return handle(p.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
