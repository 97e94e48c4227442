"""Read the official ``summarize.py`` workbook back into JSON (run by make_reference.sh).

Output: ``{sheet name: [one dict per data row, in the sheet's order]}``. Each sheet has two
header rows (row 1: group names, merged across their columns; row 2: task names) and one
data row per model from row 3. A column's key is ``"<row 1>/<row 2>"`` with row 1 read
from the anchor cell of its merged range (``"平均分_古代/Spotting"``); the first column,
merged over both header rows, is keyed ``"模型名称"``. Values are what openpyxl reads
(numbers, or ``None`` for the empty cells ``summarize.py`` writes for a missing score).

Usage: ``python tests/chronicles/read_workbook.py WORKBOOK.xlsx`` (needs openpyxl);
prints the JSON.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def header_keys(ws: Any) -> list[str]:
    """The key of every column from the two header rows and their merged ranges."""
    top: dict[int, Any] = {c: ws.cell(row=1, column=c).value for c in range(1, ws.max_column + 1)}
    for rng in ws.merged_cells.ranges:
        if rng.min_row == 1:
            anchor = ws.cell(row=1, column=rng.min_col).value
            for c in range(rng.min_col, rng.max_col + 1):
                top[c] = anchor
    keys = []
    for c in range(1, ws.max_column + 1):
        bottom = ws.cell(row=2, column=c).value
        keys.append(str(top[c]) if bottom is None or bottom == top[c] else
                    f"{top[c]}/{bottom}")
    if len(set(keys)) != len(keys):
        raise ValueError(f"{ws.title}: duplicate column keys {keys}")
    return keys


def read(path: str) -> dict[str, list[dict[str, Any]]]:
    """Every sheet of the workbook as a list of row dicts."""
    from openpyxl import load_workbook

    wb = load_workbook(path)
    out: dict[str, list[dict[str, Any]]] = {}
    for ws in wb.worksheets:
        keys = header_keys(ws)
        out[ws.title] = [dict(zip(keys, values, strict=True))
                         for values in ws.iter_rows(min_row=3, max_col=len(keys),
                                                    values_only=True)]
    return out


if __name__ == "__main__":
    print(json.dumps(read(sys.argv[1]), ensure_ascii=False, indent=1))
