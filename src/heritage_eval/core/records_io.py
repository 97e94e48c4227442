"""Reading a run folder back: ``samples.jsonl`` as typed records, ``summary.json``.

Reading never crashes on one bad line: a truncated or malformed line (a killed writer of
another tool, an edited file) is skipped with a warning naming ``file:line``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from heritage_eval.core.record import SAMPLE_SCHEMA, SampleRecord
from heritage_eval.core.sizecap import LongLine, iter_lines

log = logging.getLogger(__name__)


class RunReadError(Exception):
    """A folder is not a readable run (no or malformed ``summary.json``)."""


def iter_records(path: str | Path, warnings: list[str] | None = None
                 ) -> Iterator[SampleRecord]:
    """Yield the records of a ``samples.jsonl`` one at a time (memory flat in size).

    A line that is not JSON, has another ``schema`` or does not validate is skipped; its
    ``file:line`` and reason go to ``warnings`` when given (the caller shows them: once,
    in its own words), else to the log. So is a line over the ``max_line_bytes`` cap
    (:func:`heritage_eval.core.sizecap.iter_lines`: never held whole;
    ``docs/limits.md``)."""
    p = Path(path)
    with p.open("rb") as fh:
        for lineno, line in iter_lines(fh, str(p)):
            if isinstance(line, LongLine):  # read past, never held (docs/limits.md)
                _note(line.error, warnings)
                continue
            parsed = parse_record_line(line, f"{p}:{lineno}")
            if isinstance(parsed, str):
                _note(parsed, warnings)
            elif parsed is not None:
                yield parsed


def _note(text: str, warnings: list[str] | None) -> None:
    """A skipped line's note: to ``warnings`` when the caller collects them, else the log."""
    if warnings is None:
        log.warning(text)
    else:
        warnings.append(text)


def parse_record_line(raw: bytes, where: str) -> SampleRecord | str | None:
    """One ``samples.jsonl`` line (bytes, undecodable bytes replaced): the record,
    ``None`` for a blank line, else the note ``"<where>: skipped: <reason>"``
    (``where``: ``file:line``) for a line that is not a sample record of
    :data:`SAMPLE_SCHEMA`."""
    text = raw.decode("utf-8", errors="replace")
    if not text.strip():
        return None
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        schema = data.get("schema")
        if schema != SAMPLE_SCHEMA:
            raise ValueError(f"schema {schema!r}, expected {SAMPLE_SCHEMA!r}")
        return SampleRecord.model_validate(data)
    except (ValueError, ValidationError) as exc:
        return f"{where}: skipped: {short_error(exc)}"


def short_error(exc: Exception) -> str:
    """One line saying why a ``samples.jsonl`` line was skipped."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ())) or "record"
        return f"not a sample record ({loc}: {first.get('msg', 'invalid')})"
    if isinstance(exc, json.JSONDecodeError):
        return f"malformed JSON ({exc.msg.removesuffix(' at')} at column {exc.colno})"
    return str(exc).splitlines()[0]


def read_records(path: str | Path, warnings: list[str] | None = None) -> list[SampleRecord]:
    """All records of a ``samples.jsonl`` (see :func:`iter_records`)."""
    return list(iter_records(path, warnings))


def read_summary(root: str | Path) -> dict[str, Any]:
    """``summary.json`` of run folder ``root`` as a dict. Raises :class:`RunReadError`
    naming the path when it is absent, malformed, or not a ``heritage-eval/summary/1``
    envelope (``models`` and ``statistics.metric_specs``)."""
    from heritage_eval.core.summary import SUMMARY_SCHEMA

    path = Path(root) / "summary.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunReadError(f"{root} is not a run folder: no summary.json") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RunReadError(f"{path}: cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise RunReadError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from None
    if not isinstance(data, dict) or data.get("schema") != SUMMARY_SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise RunReadError(f"{path}: not a {SUMMARY_SCHEMA} summary (schema: {found!r}); "
                           "it was written by an earlier heritage-eval version: re-run or "
                           "re-score it with this version")
    specs = data.get("statistics", {}).get("metric_specs", data.get("metric_specs"))
    if not isinstance(specs, list) or not isinstance(data.get("models"), dict):
        raise RunReadError(f"{path}: the summary has no 'metric_specs' / 'models'; re-run "
                           "or re-score it with this version")
    return data
