"""MkDocs hook: Sphinx cross-reference roles in docstrings, shown as plain code.

The package's docstrings use Sphinx roles (``:class:`~heritage_eval.api.Run```). The
Python handler of mkdocstrings renders the backquoted part as code and leaves the role
name in front of it (``:class:<code>~heritage_eval.api.Run</code>``). This hook drops the
role name and, for a target written with ``~``, keeps only its last component, as Sphinx
would show it. It changes only the text of generated API pages.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const):"
                   r"<code>(~?)([^<]+)</code>")


def shorten(html: str) -> str:
    """``html`` with every rendered role replaced by its code element."""
    def one(match: re.Match[str]) -> str:
        target = match.group(2)
        if match.group(1):
            target = target.rsplit(".", 1)[-1]
        return f"<code>{target}</code>"
    return _ROLE.sub(one, html)


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Apply :func:`shorten` to every page's HTML."""
    return shorten(html)
