"""LaTeX (booktabs) renderer of :class:`heritage_eval.core.tables.Table`.

Call it as :func:`heritage_eval.core.tables.to_latex`, whose docstring gives the layout.
"""

from __future__ import annotations

from heritage_eval.core.tables import Table, _Out, _prepare

_SPECIALS = {
    "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
    "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
}
_MARKS = {"†": r"\dag", "‡": r"\ddag", "§": r"\S", "¶": r"\P"}


def escape(text: str) -> str:
    """``text`` with LaTeX specials (``& % $ # _ { } ~ ^ \\``) escaped and line breaks turned
    into spaces; every other character (Chinese included) passes through unchanged."""
    return "".join(_SPECIALS.get(ch, ch) for ch in " ".join(text.splitlines()))


def _mark(mark: str) -> str:
    if not mark:
        return ""
    return r"\textsuperscript{" + "".join(_MARKS.get(ch) or escape(ch) for ch in mark) + "}"


def _num(text: str) -> str:
    return "$-$" + text[1:] if text.startswith("-") else text


def _cell(c: _Out, intervals: str) -> str:
    if c.text is None:
        return "--" + _mark(c.mark)
    s = _num(c.text) if c.number else escape(c.text)
    if c.highlight == 1:
        s = r"\textbf{" + s + "}"
    elif c.highlight == 2:
        s = r"\underline{" + s + "}"
    if intervals == "pm" and c.half is not None:
        s += r"{\scriptsize$\pm$" + _num(c.half) + "}"
    elif intervals == "brackets" and c.bounds is not None:
        s += r"{\scriptsize\,[" + f"{_num(c.bounds[0])}, {_num(c.bounds[1])}]" + "}"
    return s + _mark(c.mark)


def _comment(text: str) -> list[str]:
    return [f"% {line}".rstrip() for line in text.splitlines() or [""]]


def to_latex(table: Table) -> str:
    """See :func:`heritage_eval.core.tables.to_latex`."""
    g = _prepare(table)
    cols = table.columns
    n = len(cols)
    lines = _comment(table.title) if table.title else []
    lines += [r"\begin{tabular}{" + " ".join("r" if c.kind == "number" else "l" for c in cols)
              + "}", r"\toprule"]
    if any(c.group for c in cols):
        spans: list[tuple[str | None, int, int]] = []  # (group, first, last), 1-based
        for j, c in enumerate(cols, start=1):
            if spans and c.group and spans[-1][0] == c.group:
                spans[-1] = (c.group, spans[-1][1], j)
            else:
                spans.append((c.group, j, j))
        heads = [r"\multicolumn{" + f"{b - a + 1}" + "}{c}{" + escape(grp) + "}" if grp else ""
                 for grp, a, b in spans]
        lines.append(" & ".join(heads) + r" \\")
        lines.append(" ".join(r"\cmidrule(lr){" + f"{a}-{b}" + "}"
                              for grp, a, b in spans if grp))
    lines += [" & ".join(escape(c.label) for c in cols) + r" \\", r"\midrule"]
    for i, row in enumerate(g.cells):
        if i in g.blocks:
            if i > 0:
                lines.append(r"\midrule")
            lines.append(r"\multicolumn{" + f"{n}" + "}{l}{\\textit{" + escape(g.blocks[i])
                         + r"}} \\")
        lines.append(" & ".join(_cell(c, table.intervals) for c in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    for note in g.footnotes:  # the tie note too
        lines += _comment(note)
    return "\n".join(lines) + "\n"
