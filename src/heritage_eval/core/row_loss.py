"""Which rows of a run folder's ``samples.jsonl`` a new run would lose.

A run folder never shrinks (:mod:`heritage_eval.core.rundir`): a run that plans fewer
samples than the folder holds rows for is refused unless ``--overwrite``. The rule is
:func:`rows_lost`; a :class:`RowLossMemo` answers a second question about the same
file within one opening of a folder without reading the file again.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection
from pathlib import Path

#: the start of a ``samples.jsonl`` line (``SampleRecord.to_json_line``): its id, read
#: without parsing the whole record
_ID_AT_START = re.compile(r'\{"schema":\s*"[^"]*",\s*"id":\s*("(?:[^"\\]|\\.)*")')
#: rows a run writes whatever samples it plans (MUSE: an unreadable question-file line)
_SAMPLE_FREE = '"unreadable_line": true'


def _row_id(line: str) -> str | None:
    """The record id of one ``samples.jsonl`` line, or ``None`` (no record, or a row
    written whatever the samples: :data:`_SAMPLE_FREE`)."""
    if _SAMPLE_FREE in line:
        return None
    m = _ID_AT_START.match(line)
    if m:
        value = json.loads(m.group(1))
        return value if isinstance(value, str) else None
    try:
        data = json.loads(line)
    except ValueError:
        return None
    ident = data.get("id") if isinstance(data, dict) else None
    return ident if isinstance(ident, str) else None


def rows_lost(root: Path, sample_ids: Collection[str], id_parts: bool = False,
              models: Collection[str] | None = None) -> tuple[int, int]:
    """``(lost, rows)``: of the ``rows`` records in ``root/samples.jsonl``, how many a run
    planning ``sample_ids`` would not write again. A record belongs to the sample named by
    its id, or — with ``id_parts``, for a benchmark whose records add ``#<part>`` to their
    sample's id (a MUSE turn ``<question>#<turn>``, an HCSU tagged record
    ``<target>#k=v``) — by the id's part before the first ``#``. Lines that are no
    record, rows written whatever the samples (an unreadable MUSE question line) and
    rows that hold no answer (an ``error`` row none of whose turns has a response: the
    input could not be read, or no request got through; fixing the data renames such a
    sample) count in neither number. ``models``: for a folder holding several models'
    rows (``score ancient-bench``), the models the run scores; a row of another model is
    not written again even when its sample is planned (``None``: any model, a ``run``
    folder holds one). ``(0, 0)`` when the file is absent or unreadable."""
    lost = rows = 0
    keep: Collection[str] | None = None  # the set is built only when there are rows
    try:
        with (root / "samples.jsonl").open("rb") as fh:
            for raw in fh:
                if keep is None:
                    keep = (sample_ids if isinstance(sample_ids, set | frozenset)
                            else set(sample_ids))
                line = raw.decode("utf-8", "replace")
                ident = _row_id(line)
                if ident is None:
                    continue
                planned = ident in keep or (id_parts and ident.split("#", 1)[0] in keep)
                if planned and (models is None or _row_model(line) in models):
                    rows += 1
                elif not _answer_free(line):  # parsed only for a row not planned again
                    rows += 1
                    lost += 1
    except OSError:
        return 0, 0
    return lost, rows


def _row_model(line: str) -> object:
    """The ``model`` of the ``samples.jsonl`` row ``line`` (``None`` when it has none or
    is no JSON object)."""
    try:
        data = json.loads(line)
    except ValueError:
        return None
    return data.get("model") if isinstance(data, dict) else None


def _answer_free(line: str) -> bool:
    """Whether the ``samples.jsonl`` row ``line`` is an ``error`` row none of whose turns
    has a response (nothing a model answered is in it)."""
    try:
        data = json.loads(line)
    except ValueError:
        return False
    if not isinstance(data, dict) or data.get("state") != "error":
        return False
    turns = data.get("turns")
    return isinstance(turns, list) and all(
        isinstance(t, dict) and t.get("response") is None for t in turns)


class RowLossMemo:
    """The answers of :func:`rows_lost` within one opening of a run folder:
    ``rundir.open_run`` checks the folder twice (before and after taking its lock) for
    the same planned ids, and a cached re-run of 10,000 samples spent ~0.08 s reading
    ``samples.jsonl`` the second time. A memo lives for one ``open_run`` call only:
    the planned ids are the same object throughout it, so only the file is compared."""

    __slots__ = ("_answers",)

    def __init__(self) -> None:
        self._answers: dict[tuple[object, ...], tuple[int, int]] = {}

    def rows_lost(self, root: Path, sample_ids: Collection[str], id_parts: bool,
                  models: Collection[str] | None = None) -> tuple[int, int]:
        """:func:`rows_lost`, answered again without reading when ``samples.jsonl`` has
        the same size, modification time, inode and device as when it was read."""
        try:
            st = os.stat(root / "samples.jsonl")
        except OSError:
            return rows_lost(root, sample_ids, id_parts, models)
        key = (os.fspath(root), st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev, id_parts,
               None if models is None else frozenset(models))
        if key not in self._answers:
            self._answers[key] = rows_lost(root, sample_ids, id_parts, models)
        return self._answers[key]
