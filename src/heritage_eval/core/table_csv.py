"""CSV renderer of :class:`heritage_eval.core.tables.Table`.

Call it as :func:`heritage_eval.core.tables.to_csv`, whose docstring gives the layout.
"""

from __future__ import annotations

import csv
import io

from heritage_eval.core.tables import Table, _Out, _prepare


def _is_text(c: _Out) -> bool:
    return c.text is not None and not c.number


def to_csv(table: Table) -> str:
    """The CSV rendering of ``table`` (see :func:`heritage_eval.core.tables.to_csv`)."""
    g = _prepare(table)
    cols = table.columns
    with_ci = [any(r[j].bounds is not None for r in g.cells) for j in range(len(cols))]
    with_notes = any(c.mark and not _is_text(c) for r in g.cells for c in r)
    header = ["group"] if g.blocks else []
    for h, ci in zip(g.headers, with_ci, strict=True):
        header += [h, f"{h} ci_low", f"{h} ci_high"] if ci else [h]
    if with_notes:
        header.append("notes")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    group = ""
    for i, row in enumerate(g.cells):
        group = g.blocks.get(i, group)
        fields = [group] if g.blocks else []
        notes = []
        for j, c in enumerate(row):
            if c.mark and not _is_text(c):
                notes.append(f"{g.headers[j]}: {c.mark}")
            text = c.text or ""
            fields.append(text + c.mark if _is_text(c) else text)
            if with_ci[j]:
                fields += list(c.bounds) if c.bounds else ["", ""]
        if with_notes:
            fields.append("; ".join(notes))
        w.writerow(fields)
    return buf.getvalue()
