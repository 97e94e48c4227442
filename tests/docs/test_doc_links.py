"""The README stays a short front page, and no relative link of the README or the docs
leads nowhere (on GitHub as on the site).

Rules checked: README.md has at most 200 lines and keeps the two quick-start commands
exactly (``make demo``, ``make test``, each with the sentence saying what it does, which
CI reads); every relative link or image in README.md and docs/**/*.md names a file that
exists (docs pages may also link to the pages docs/hooks/ generate at build time, which
have no file in the repository; the README may not, since GitHub shows it as is).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.doc_sources import DOCS, README, REPO, all_markdown, generated_pages, relative_links

#: the quick start as the README has always written it (CI checks these lines)
QUICK_START = (
    "make demo    # set up, then run Ancient-Bench on the bundled demo data with the "
    "bundled offline OCR",
    "make test    # set up, then run the whole test suite",
)


def test_readme_is_short() -> None:
    lines = README.read_text("utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines (at most 200)"


def test_readme_quick_start_commands_are_kept() -> None:
    text = README.read_text("utf-8")
    block = re.search(r"## Quick start\n.*?```bash\n(.*?)```", text, flags=re.S)
    assert block is not None, "README has no '## Quick start' section with a bash block"
    assert tuple(block.group(1).splitlines()) == QUICK_START
    makefile = (REPO / "Makefile").read_text("utf-8")
    for target in ("demo", "test"):  # the commands exist
        assert re.search(rf"^{target}:", makefile, flags=re.M), target


@pytest.mark.parametrize("page", all_markdown(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_point_to_files(page: Path) -> None:
    generated = generated_pages()
    missing = []
    for target in relative_links(page):
        path = (page.parent / target).resolve()
        if path.exists():
            continue
        in_docs = page != README and path.is_relative_to(DOCS.resolve())
        if in_docs and path.relative_to(DOCS.resolve()).as_posix() in generated:
            continue
        missing.append(target)
    assert not missing, f"{page.relative_to(REPO)}: links to missing files: {missing}"


def test_link_finder_sees_links() -> None:
    # kind: a link pattern that matched nothing would pass every page above; the README
    # links to the tutorial and the design page by hand (see its Documentation section)
    links = relative_links(README)
    assert "docs/tutorial.md" in links and "docs/design.md" in links
    assert "reference/cli.md" in relative_links(DOCS / "index.md")
