"""What the documentation is made of, for the tests that check it: the pages in site
order, their fenced code blocks and their relative links.

Conventions (the tests in this folder hold the documentation to them):

- The pages are ``README.md`` followed by the pages of ``mkdocs.yml``'s ``nav``, in nav
  order (pages generated at build time by ``docs/hooks/`` have no file and are left out).
- A fenced block tagged ``bash`` holds commands a reader types (run by
  tests/hardening/test_readme_commands.py); a block tagged ``python`` is an example that
  runs from the repository root against the bundled demo data
  (tests/docs/test_python_examples.py). A ``bash`` or ``python`` block right after a line
  ``<!-- docs-test: skip (REASON) -->`` is not run; the reason is required. A page
  holding the line ``<!-- docs-test: skip-page (REASON) -->`` runs none of its blocks
  (e.g. fragments of a worked example that is tested as a whole elsewhere).
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
README = REPO / "README.md"
MKDOCS = REPO / "mkdocs.yml"

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", flags=re.M | re.S)
SKIP_MARK = re.compile(r"<!--\s*docs-test:\s*skip\s+(.*?)\s*-->\s*$")
PAGE_SKIP_MARK = re.compile(r"^<!--\s*docs-test:\s*skip-page\s+(.*?)\s*-->\s*$", flags=re.M)


def mkdocs_config() -> dict[str, Any]:
    """``mkdocs.yml`` as plain data (it uses no custom YAML tags)."""
    data = yaml.safe_load(MKDOCS.read_text("utf-8"))
    assert isinstance(data, dict)
    return data


def _nav_paths(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [p for item in nav for p in _nav_paths(item)]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in _nav_paths(value)]
    return []


def nav_entries() -> list[str]:
    """Every page path named in ``nav`` (relative to ``docs/``), in nav order."""
    return _nav_paths(mkdocs_config().get("nav", []))


def nav_pages() -> list[Path]:
    """The nav's pages that exist as files, in nav order."""
    return [DOCS / p for p in nav_entries() if (DOCS / p).is_file()]


def doc_pages() -> list[Path]:
    """README, then the site's pages in nav order."""
    return [README, *nav_pages()]


def all_markdown() -> list[Path]:
    """README and every Markdown file under ``docs/``."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def hook(name: str) -> ModuleType:
    """The MkDocs hook module ``docs/hooks/<name>.py``."""
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}",
                                                  DOCS / "hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generated_pages() -> set[str]:
    """Site paths (relative to ``docs/``) of the pages the hooks generate."""
    schemas = hook("schema_reference")
    return {hook("cli_reference").PAGE, schemas.OVERVIEW,
            *(schemas.page_of(p) for p in schemas.schema_files())}


@dataclass(frozen=True)
class Block:
    """One fenced code block: its page, 1-based line of the opening fence, language
    tag, code, and the skip reason (``None``: not marked)."""

    page: Path
    line: int
    lang: str
    code: str
    skip: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path, lang: str | None = None) -> list[Block]:
    """The fenced blocks of ``page`` (only those tagged ``lang`` when given)."""
    text = page.read_text("utf-8")
    page_mark = PAGE_SKIP_MARK.search(text)
    out = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = SKIP_MARK.search(before) or page_mark
        if lang is None or m.group(1) == lang:
            out.append(Block(page, line, m.group(1), m.group(2),
                             mark.group(1) if mark else None))
    return out


_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def relative_links(page: Path) -> list[str]:
    """Link and image targets of ``page`` that are relative paths (no scheme, not a bare
    ``#anchor``), outside code blocks and code spans, with any ``#anchor`` dropped."""
    text = _FENCE.sub("", page.read_text("utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)
    out = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
            continue
        out.append(target.split("#", 1)[0])
    return out


def split_commands(code: str) -> list[str]:
    """The commands of one ``bash`` block's code: continuation lines (trailing ``\\``)
    joined, ``#`` comments and blank lines dropped, runs of spaces made one."""
    out: list[str] = []
    pending = ""
    for line in code.splitlines():
        line = pending + line.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        line = re.sub(r"\s+#.*$", "", line).strip() if not line.startswith("#") else ""
        if line:
            out.append(re.sub(r"\s+", " ", line))
    return out


def bash_commands(page: Path) -> list[str]:
    """The commands of ``page``'s ``bash`` blocks that are not marked to skip, in
    order."""
    return [c for b in blocks(page, "bash") if b.skip is None for c in split_commands(b.code)]


def make_demo_argv() -> list[str]:
    """The arguments after ``heritage-eval`` of the Makefile's ``demo`` recipe."""
    makefile = (REPO / "Makefile").read_text("utf-8")
    m = re.search(r"^demo:.*\n\t\S*heritage-eval (.+)$", makefile, flags=re.M)
    assert m is not None, "the Makefile's demo target does not run heritage-eval"
    return m.group(1).split()
