"""Result tables as the papers print them: one model, Markdown / CSV / LaTeX renderers.

Standard library only, so importing this package stays cheap (no pandas or matplotlib).
"""

from heritage_eval.core.tables import (
    Cell,
    Column,
    Table,
    to_csv,
    to_latex,
    to_markdown,
    write_table,
)

__all__ = ["Cell", "Column", "Table", "to_csv", "to_latex", "to_markdown", "write_table"]
