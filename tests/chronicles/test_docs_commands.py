"""Every ``bash`` block of docs/chronicles-ocr.md and of the plug-in's README runs as
printed, from the root of a checkout.

The platform's README test (tests/hardening/test_readme_commands.py) runs documented
commands in a scratch folder holding only ``data/``; these blocks name paths of this
repository (the plug-in's demo set, ``tests/chronicles/fixtures/predictions``) and a
shell variable, so the page marks them ``docs-test: skip`` naming this file, and they
run here instead: each block, in page order, by ``bash -e`` in a scratch folder where
``plugins/`` and ``tests/`` are the repository's (so later blocks read the run folders
of earlier ones), with the virtual environment first on ``PATH``. Two substitutions
only: ``pip install -e plugins/chronicles-ocr`` is skipped (the plug-in is installed in
the environment running the tests), and the model server ``http://localhost:8000/v1``
is a local fake OpenAI-compatible server.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("chronicles_ocr")

from tests.docs.doc_sources import REPO, Block, blocks
from tests.fake_server import FakeServer, chat_reply, fake_openai_server

PAGES = [REPO / "docs" / "chronicles-ocr.md", REPO / "plugins" / "chronicles-ocr" / "README.md"]
SERVER = "http://localhost:8000/v1"
INSTALL = "pip install -e plugins/chronicles-ocr"
TRACEBACK = "Traceback (most recent call last)"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with fake_openai_server() as fake:
        fake.responder = lambda body: chat_reply("字体分类：甲骨文")
        yield fake


def _ours(block: Block) -> bool:
    """A block this file runs: not marked, or marked naming this file."""
    return block.skip is None or "tests/chronicles/test_docs_commands.py" in block.skip


def test_every_bash_block_is_run_here_or_says_why() -> None:
    for page in PAGES:
        found = blocks(page, "bash")
        assert found, page
        assert all(_ours(b) for b in found), [b.where for b in found if not _ours(b)]
    # the docs page's blocks are all marked for the platform's README test (their paths
    # exist only at the root of this repository)
    assert all(b.skip for b in blocks(PAGES[0], "bash"))


def _outputs(code: str) -> list[str]:
    """The folders the block's commands write (``--out X``, the export's OUT)."""
    outs = re.findall(r"--out\s+(\S+)", code)
    outs += re.findall(r"export chronicles-ocr\s+\S+\s+(\S+)", code)
    return outs


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_bash_blocks_run_as_printed(page: Path, tmp_path: Path, server: FakeServer) -> None:
    for name in ("plugins", "tests"):
        (tmp_path / name).symlink_to(REPO / name)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
           f"{os.environ.get('PATH', '')}"}
    ran = 0
    for block in blocks(page, "bash"):
        code = block.code.replace(INSTALL, ":").replace(SERVER, server.base_url)
        done = subprocess.run(["bash", "-e", "-c", code], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, f"{block.where}\n{done.stderr[-3000:]}"
        assert TRACEBACK not in done.stderr, block.where
        for out in _outputs(code):
            assert (tmp_path / out).is_dir(), f"{block.where}: {out} not written"
        ran += 1
    assert ran == len(blocks(page, "bash"))
    if page == PAGES[0]:
        assert server.requests  # the served-model example reached the (fake) server
