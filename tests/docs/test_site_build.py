"""The documentation site builds in strict mode, and its generated pages are complete.

``mkdocs build --strict`` fails on any warning: a broken link or anchor, a page missing
from the nav, a docstring mkdocstrings cannot render. The command-line reference is
generated from the parsers (docs/hooks/cli_reference.py): it must hold every command
the CLI accepts, each with the very text ``heritage-eval WORDS --help`` prints. The
schema pages (docs/hooks/schema_reference.py) must cover every schema file shipped in
``heritage_eval/schemas/``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from heritage_eval.cli.main import build_parser, main
from tests.docs.doc_sources import REPO, hook


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                           "--config-file", str(REPO / "mkdocs.yml"), "--site-dir", str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-4000:]}"
    return out


@pytest.mark.slow
def test_strict_build_writes_every_part(site: Path) -> None:
    for page in ("index.html", "tutorial/index.html", "reference/cli/index.html",
                 "reference/api/index.html", "reference/stats/index.html",
                 "reference/schemas/index.html", "how-to/new-benchmark/index.html",
                 "reference/plugin/index.html", "intervals/index.html"):
        assert (site / page).is_file(), page
    api = (site / "reference/api/index.html").read_text("utf-8")
    # the API page is rendered from the docstrings, not left as a ':::' directive
    assert ":::" not in api and "heritage_eval.api.evaluate" in api
    stats = (site / "reference/stats/index.html").read_text("utf-8")
    assert "heritage_eval.stats.mean_estimate" in stats


@pytest.mark.slow
def test_schema_pages_cover_every_schema_file(site: Path) -> None:
    schemas = hook("schema_reference")
    files = schemas.schema_files()
    assert any(p.name == "sample-1.json" for p in files)
    for path in files:
        page = site / "reference" / "schemas" / path.stem / "index.html"
        assert page.is_file(), path.name
        assert (site / "reference" / "schemas" / path.name).is_file()  # the file itself


def _commands(parser: argparse.ArgumentParser) -> set[tuple[str, ...]]:
    return {words for words, _ in hook("cli_reference").walk(parser)}


def test_cli_reference_lists_every_command() -> None:
    # The lazy parser the CLI builds for '--version' lists every registered command
    # without importing them; the reference must hold each one (and nothing else).
    ref = hook("cli_reference")
    full = ref.full_parser()
    lazy = build_parser(["--version"])
    assert _commands(full) == _commands(lazy)
    page = ref.render(full)
    for words in _commands(lazy):
        assert f"`{' '.join(('heritage-eval', *words))}`" in page, words
    # by hand from the three papers: the benchmarks' run commands are all there
    for name in ("ancient-bench", "hcsu-discrimination", "hcsu-description", "muse"):
        assert ("run", name) in _commands(full)


def _section(page: str, words: tuple[str, ...]) -> str:
    anchor = "-".join(("heritage-eval", *words))
    m = re.search(r"\{#" + re.escape(anchor) + r"\}\n\n```text\n(.*?)\n```", page, flags=re.S)
    assert m is not None, anchor
    return m.group(1)


def test_cli_reference_is_the_help_text(monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    # Each section equals what the command line prints for WORDS --help at the same
    # width: the fully built parser and the CLI's lazily built one must agree.
    ref = hook("cli_reference")
    monkeypatch.setenv("COLUMNS", str(ref.WIDTH))
    page = ref.render(ref.full_parser())
    for words in sorted(_commands(build_parser(["--version"]))):
        with pytest.raises(SystemExit) as exc:
            main([*words, "--help"])
        assert exc.value.code == 0, words
        printed = capsys.readouterr().out
        assert _section(page, words) == printed.rstrip() + "\n", words
