"""One table model (models x categories, as the papers print them) and its renderers.

A :class:`Table` holds :class:`Column` descriptions and rows of :class:`Cell` values;
:func:`to_markdown`, :func:`to_csv` and :func:`to_latex` render it, :func:`write_table`
writes the renderings to disk atomically. Only the standard library is used.

Rules shared by every renderer:

* Numbers are printed as ``value * scale`` rounded to ``Column.decimals`` digits exactly as
  Python's format does (the binary value, exact ties to even: ``2.675`` prints ``2.67``,
  ``0.125`` prints ``0.12``), the rule of every other number the toolkit prints;
  ``-0.00`` prints ``0.00``. ``None`` and NaN are *missing*: "—" in Markdown, ``--`` in
  LaTeX, an empty field in CSV. An infinite value or bound raises ``ValueError``.
* Ranking (``Column.rank``) runs over the whole table (per row group instead when
  ``Table.rank_within_groups`` is set), among cells whose value is a number (missing,
  text and ``Cell.unranked`` cells take no part), and compares the *printed*
  values, so two values that print the same are tied. Every cell with the best printed
  value is bold, every cell with the next distinct value is underlined. A column with one
  numeric cell bolds it (it is the best reported); a column whose numeric cells all print
  the same bolds them all and underlines none; a column with no numeric cell marks nothing.
  A tie (two or more cells sharing the best, or the second, printed value of a ranked
  column) is said in a footnote after the table's own ones, naming the columns:
  ``Tie: equal printed values share the mark (bold best, underlined second) in A, B.``
  (Markdown and LaTeX; CSV carries no styling and no footnotes).
* Intervals (``Table.intervals``): ``"pm"`` prints the half-width ``(ci_high - ci_low) / 2``
  (scaled, same decimals) as ``45.20 ± 3.10``; ``"brackets"`` prints the bounds as
  ``45.20 [42.10, 48.30]``. Bold/underline cover the value only; a cell's mark goes last.
  Missing or text cells never show an interval.
* Header groups: consecutive columns with the same ``Column.group`` share one group header
  (LaTeX ``\\multicolumn`` + ``\\cmidrule``); GitHub Markdown has a single header line, so
  there (and in CSV) a grouped column's header reads ``"Group / Label"``.
"""

from __future__ import annotations

import math
import numbers
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Literal

__all__ = ["Cell", "Column", "Table", "to_csv", "to_latex", "to_markdown", "write_table"]

#: Printed for a missing value (``None`` or NaN) in Markdown.
MISSING = "—"
FORMATS = ("md", "csv", "tex")


@dataclass(frozen=True)
class Column:
    """One column. ``key`` indexes each row's cells; ``label`` is the header text.

    ``kind``: ``"text"`` is left-aligned, ``"number"`` right-aligned. ``decimals`` (>= 0)
    digits after the point; ``scale`` multiplies values (and interval bounds) before
    printing, e.g. 100 for fractions shown as percent. ``rank``: ``"higher"`` or ``"lower"``
    is better (best bold, second underlined), ``None`` highlights nothing. ``group``: header
    group label spanning consecutive columns with the same group.

    Raises ``ValueError`` for an unknown ``kind``/``rank``, negative ``decimals`` or a
    non-finite ``scale``.
    """

    key: str
    label: str
    kind: Literal["text", "number"] = "number"
    decimals: int = 2
    scale: float = 1.0
    rank: Literal["higher", "lower", None] = None
    group: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("text", "number"):
            raise ValueError(f"column {self.key!r}: kind must be 'text' or 'number', "
                             f"not {self.kind!r}")
        if self.rank not in ("higher", "lower", None):
            raise ValueError(f"column {self.key!r}: rank must be 'higher', 'lower' or None, "
                             f"not {self.rank!r}")
        if isinstance(self.decimals, bool) or not isinstance(self.decimals, int) \
                or self.decimals < 0:
            raise ValueError(f"column {self.key!r}: decimals must be an int >= 0, "
                             f"not {self.decimals!r}")
        if not math.isfinite(self.scale):
            raise ValueError(f"column {self.key!r}: scale must be finite, not {self.scale!r}")


@dataclass(frozen=True)
class Cell:
    """One value with an optional 95 % interval and a footnote mark.

    ``value``: a number, a text, or ``None``/NaN (missing). ``ci_low``/``ci_high``: interval
    bounds in the unit of ``value`` (before ``Column.scale``), both or neither.
    ``mark``: suffix such as ``"†"`` or ``"*"``. ``unranked``: the value is printed but
    takes no part in the column's ranking (not comparable with the other rows, e.g. a
    PARTIAL run; the caller marks it and footnotes why). Raises ``ValueError`` when only
    one bound is given or ``ci_low > ci_high``.
    """

    value: float | str | None
    ci_low: float | None = None
    ci_high: float | None = None
    mark: str = ""
    unranked: bool = False

    def __post_init__(self) -> None:
        if (self.ci_low is None) != (self.ci_high is None):
            raise ValueError(f"cell {self.value!r}: give both ci_low and ci_high or neither")
        if self.ci_low is not None and self.ci_high is not None and self.ci_low > self.ci_high:
            raise ValueError(f"cell {self.value!r}: ci_low {self.ci_low} > ci_high "
                             f"{self.ci_high}")


@dataclass
class Table:
    """Columns, rows and decorations of one table.

    ``rows``: one dict per row, column key -> :class:`Cell` or a plain number/text/``None``
    (wrapped as ``Cell``); a key missing from a row is a missing value, keys that name no
    column are ignored. ``row_groups``: ``(label, n_rows)`` blocks covering all rows in
    order (each ``n_rows >= 1``, sums to ``len(rows)``). ``intervals``: ``"none"``, ``"pm"``
    or ``"brackets"``. ``rank_within_groups``: best/second per row block instead of per
    whole column. Checked when rendered: no columns, duplicate column keys, bad
    ``row_groups`` or ``intervals`` raise ``ValueError``; a value that is neither number,
    text nor ``None`` raises ``TypeError``.
    """

    columns: list[Column]
    rows: list[dict[str, Cell | float | str | None]]
    title: str = ""
    footnotes: list[str] = field(default_factory=list)
    row_groups: list[tuple[str, int]] | None = None
    intervals: Literal["none", "pm", "brackets"] = "none"
    rank_within_groups: bool = False  # rank each row block on its own (HCSU Table 2)


@dataclass(frozen=True)
class _Out:
    """A cell ready to print: ``text`` is the number or text, ``None`` when missing."""

    text: str | None
    number: bool = False
    half: str | None = None  # "pm" half-width
    bounds: tuple[str, str] | None = None  # "brackets" / CSV bounds
    mark: str = ""
    highlight: int = 0  # 1 best (bold), 2 second (underline), 0 none


@dataclass(frozen=True)
class _Grid:
    """A validated table: ``cells[row][column]`` and the row block starts."""

    table: Table
    cells: list[list[_Out]]
    blocks: dict[int, str]  # first row index of a block -> its label
    headers: list[str]  # "Group / Label" or "Label"
    footnotes: list[str] = field(default_factory=list)  # the table's, then the tie note


#: The footnote that names the ranked columns with a tie (see the module docstring).
TIE_NOTE = "Tie: equal printed values share the mark (bold best, underlined second) in {}."


def _round(x: float, decimals: int) -> Decimal:
    """``x`` rounded to ``decimals`` digits exactly as Python's ``f"{x:.2f}"`` rounds
    (the binary value, ties to even) — the rule of every other number heritage-eval
    prints, so one value never prints two ways (never ``-0``)."""
    q = Decimal(f"{float(x):.{decimals}f}")
    return abs(q) if q == 0 else q


def _is_number(v: object) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _finite(x: float | None, what: str) -> float | None:
    """``None`` for ``None``/NaN, the float otherwise; ``ValueError`` for infinities."""
    if x is None or math.isnan(x):
        return None
    if math.isinf(x):
        raise ValueError(f"{what} is infinite")
    return float(x)


def _prepare(table: Table) -> _Grid:
    """Validate ``table``, format and rank every cell."""
    cols = table.columns
    if not cols:
        raise ValueError("a table needs at least one column")
    keys = [c.key for c in cols]
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicate column keys: {sorted({k for k in keys if keys.count(k) > 1})}")
    if table.intervals not in ("none", "pm", "brackets"):
        raise ValueError(f"intervals must be 'none', 'pm' or 'brackets', not {table.intervals!r}")
    blocks: dict[int, str] = {}
    if table.row_groups is not None:
        start = 0
        for label, n in table.row_groups:
            if n < 1:
                raise ValueError(f"row group {label!r} has {n} rows; each needs >= 1")
            blocks[start] = label
            start += n
        if start != len(table.rows):
            raise ValueError(f"row_groups cover {start} rows, the table has {len(table.rows)}")
    cells: list[list[_Out]] = []
    ranks: list[list[Decimal | None]] = []
    for i, row in enumerate(table.rows):
        out_row: list[_Out] = []
        rank_row: list[Decimal | None] = []
        for col in cols:
            raw = row.get(col.key)
            cell = raw if isinstance(raw, Cell) else Cell(raw)
            out, num = _format(cell, col, table.intervals, f"row {i}, column {col.key!r}")
            out_row.append(out)
            rank_row.append(None if cell.unranked else num)
        cells.append(out_row)
        ranks.append(rank_row)
    starts = sorted(blocks) if table.rank_within_groups and blocks else [0]
    spans = list(zip(starts, [*starts[1:], len(ranks)], strict=True))
    headers = [f"{c.group} / {c.label}" if c.group else c.label for c in cols]
    tied: list[str] = []
    for j, col in enumerate(cols):
        if col.rank is None:
            continue
        for a, b in spans:
            distinct = sorted({v for r in ranks[a:b] if (v := r[j]) is not None},
                              reverse=col.rank == "higher")
            for i in range(a, b):
                if (v := ranks[i][j]) is not None and v in distinct[:2]:
                    cells[i][j] = replace(cells[i][j], highlight=distinct.index(v) + 1)
            shared = [r[j] for r in ranks[a:b] if r[j] is not None and r[j] in distinct[:2]]
            if len(shared) > len(set(shared)) and headers[j] not in tied:
                tied.append(headers[j])
    notes = [*table.footnotes, TIE_NOTE.format(", ".join(tied))] if tied else \
        list(table.footnotes)
    return _Grid(table, cells, blocks, headers, notes)


def _format(cell: Cell, col: Column, intervals: str, where: str) -> tuple[_Out, Decimal | None]:
    """The printable cell and its rounded value (``None`` unless numeric)."""
    v = cell.value
    if isinstance(v, str):
        return _Out(v, mark=cell.mark), None
    if v is not None and not _is_number(v):
        raise TypeError(f"{where}: value {v!r} is not a number, a text or None")
    value = _finite(v, f"{where}: value")
    if value is None:
        return _Out(None, mark=cell.mark), None
    num = _round(value * col.scale, col.decimals)
    half: str | None = None
    bounds: tuple[str, str] | None = None
    lo = _finite(cell.ci_low, f"{where}: ci_low")
    hi = _finite(cell.ci_high, f"{where}: ci_high")
    if lo is not None and hi is not None and intervals != "none":
        half = f"{_round((hi - lo) * col.scale / 2, col.decimals):f}"
        bounds = (f"{_round(lo * col.scale, col.decimals):f}",
                  f"{_round(hi * col.scale, col.decimals):f}")
    return _Out(f"{num:f}", True, half, bounds, cell.mark), num


# --- Markdown ---------------------------------------------------------------------------

def _md_escape(s: str) -> str:
    s = " ".join(s.splitlines())
    for ch in "\\|*`":
        s = s.replace(ch, "\\" + ch)
    return s


def _width(s: str) -> int:
    """Display width: East Asian wide/full-width characters count 2."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def _md_cell(c: _Out, intervals: str) -> str:
    if c.text is None:
        return MISSING + _md_escape(c.mark)
    s = _md_escape(c.text)
    if c.highlight == 1:
        s = f"**{s}**"
    elif c.highlight == 2:
        s = f"<u>{s}</u>"
    if intervals == "pm" and c.half is not None:
        s += f" ± {c.half}"
    elif intervals == "brackets" and c.bounds is not None:
        s += f" [{c.bounds[0]}, {c.bounds[1]}]"
    return s + _md_escape(c.mark)


def to_markdown(table: Table) -> str:
    """GitHub-flavoured pipe table, cells padded so the raw text lines up too.

    Layout: ``**title**`` and a blank line (if a title is given); the header line (grouped
    columns read ``Group / Label``); the alignment line (``:---`` text, ``---:`` numbers);
    before each row block a row with its label in bold in the first cell; then one
    paragraph per footnote. Best ``**x**``, second ``<u>x</u>``; pipes, asterisks, backticks
    and backslashes in any text (title, labels, cells, marks, footnotes) are
    backslash-escaped and line breaks become spaces. Ends with a newline.
    Raises what :class:`Table` documents.
    """
    g = _prepare(table)
    cols = table.columns
    body: list[list[str]] = []
    for i, row in enumerate(g.cells):
        if i in g.blocks:
            body.append([f"**{_md_escape(g.blocks[i])}**"] + [""] * (len(cols) - 1))
        body.append([_md_cell(c, table.intervals) for c in row])
    head = [_md_escape(h) for h in g.headers]
    widths = [max([4, _width(head[j])] + [_width(r[j]) for r in body]) for j in range(len(cols))]

    def line(cells: list[str]) -> str:
        padded = []
        for j, s in enumerate(cells):
            pad = " " * (widths[j] - _width(s))
            padded.append(pad + s if cols[j].kind == "number" else s + pad)
        return "| " + " | ".join(padded) + " |"

    align = ["-" * (w - 1) + ":" if c.kind == "number" else ":" + "-" * (w - 1)
             for c, w in zip(cols, widths, strict=True)]
    lines = [f"**{_md_escape(table.title)}**", ""] if table.title else []
    lines += [line(head), "| " + " | ".join(align) + " |"] + [line(r) for r in body]
    for note in g.footnotes:
        lines += ["", _md_escape(note)]
    return "\n".join(lines) + "\n"


# --- CSV --------------------------------------------------------------------------------

def to_csv(table: Table) -> str:
    """Machine-readable CSV (``\\n`` line ends, quoted as :mod:`csv` needs), no styling.

    Header: a leading ``group`` column when ``row_groups`` is set (each row's block label),
    then one column per table column headed by its label (``Group / Label`` for grouped
    columns). When ``intervals`` is not ``"none"``, a column with any interval is followed
    by ``<header> ci_low`` and ``<header> ci_high``. Numbers are the scaled values with the
    column's decimals (e.g. ``45.20``), missing values and absent bounds are empty. Marks of
    numeric and missing cells go to a trailing ``notes`` column (``"<header>: <mark>"``,
    joined by ``"; "``), present only if some such cell has a mark; text cells keep their
    mark appended. Title and footnotes are not written. Raises what :class:`Table` documents.
    """
    from heritage_eval.core.table_csv import to_csv as render

    return render(table)


# --- LaTeX and files --------------------------------------------------------------------

def to_latex(table: Table) -> str:
    """Booktabs ``tabular`` only (for ``\\input``; the caller writes float and caption).

    ``\\begin{tabular}{l r ...}`` (``l`` text, ``r`` numbers), ``\\toprule``; a group header
    line of ``\\multicolumn{n}{c}{Group}`` with ``\\cmidrule(lr){a-b}`` under each group;
    the label line, ``\\midrule``, the rows, ``\\bottomrule``. Best ``\\textbf{x}``, second
    ``\\underline{x}``; missing ``--``; negative numbers ``$-$1.00``; "pm" intervals
    ``45.20{\\scriptsize$\\pm$3.10}``, "brackets" ``45.20{\\scriptsize\\,[42.10, 48.30]}``;
    marks as ``\\textsuperscript`` (``†`` -> ``\\dag``, ``‡`` -> ``\\ddag``). Row blocks:
    ``\\midrule`` (after the first) and a ``\\multicolumn{N}{l}{\\textit{label}}`` line. The
    title is a ``% `` comment line above, footnotes ``% `` comment lines below. ``& % $ # _
    { } ~ ^ \\`` in text are escaped; other characters (Chinese included) pass through.
    Ends with a newline. Raises what :class:`Table` documents.
    """
    from heritage_eval.core.latex import to_latex as render

    return render(table)


def write_table(table: Table, stem: Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Write ``stem.md`` / ``stem.csv`` / ``stem.tex`` (UTF-8) and return their paths.

    ``formats``: any of ``"md"``, ``"csv"``, ``"tex"`` (a single string is one format), in
    the order the paths are returned (repeats are written once). The suffix is appended to
    the full name (``out/table2.v1`` gives ``out/table2.v1.md``); missing parent folders are
    created. All renderings are made before any file is written; each file is replaced
    atomically (temporary file in the same folder + ``os.replace``), so readers never see a
    partial file and no temporary file is left behind. Raises ``ValueError`` for an unknown or
    empty ``formats`` (before writing anything) and what :class:`Table` documents.
    """
    from heritage_eval.core.store import atomic_write_text

    renderers = {"md": to_markdown, "csv": to_csv, "tex": to_latex}
    wanted = list(dict.fromkeys([formats] if isinstance(formats, str) else formats))
    unknown = [f for f in wanted if f not in renderers]
    if unknown or not wanted:
        raise ValueError(f"formats must be a non-empty selection of {FORMATS}, got "
                         f"{list(formats)!r}")
    stem = Path(stem)
    texts = {f: renderers[f](table) for f in wanted}
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for f in wanted:
        path = stem.with_name(f"{stem.name}.{f}")
        atomic_write_text(path, texts[f])  # secrets redacted, replaced atomically
        paths.append(path)
    return paths
