"""Log records on the console read like the command line's other messages.

The rule (cli/log_format.py): WARNING and above from this package print as
``<level>: MESSAGE``; from another library as ``<level>: LOGGER: MESSAGE``; below WARNING
as ``LEVEL LOGGER: MESSAGE``. Before, an Ancient-Bench loader warning printed as
``WARNING heritage_eval.benchmarks.ancient_bench.loader: …`` beside ``warning: …`` lines.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from heritage_eval.cli.log_format import ConsoleLogFormatter
from tests.viewer.conftest import REPO, cli


def _line(name: str, level: int, message: str) -> str:
    record = logging.LogRecord(name, level, __file__, 1, message, None, None)
    return ConsoleLogFormatter().format(record)


@pytest.mark.parametrize(("name", "level", "expected"), [
    # expected lines written by hand from the rule in the module docstring
    ("heritage_eval.benchmarks.ancient_bench.loader", logging.WARNING, "warning: m 50%"),
    ("heritage_eval", logging.ERROR, "error: m 50%"),
    ("heritage_eval.core.cache_writer", logging.CRITICAL, "critical: m 50%"),
    ("heritage_evaluation", logging.WARNING, "warning: heritage_evaluation: m 50%"),
    ("ray", logging.WARNING, "warning: ray: m 50%"),
    ("", logging.WARNING, "warning: : m 50%"),
    ("heritage_eval.models", logging.INFO, "INFO heritage_eval.models: m 50%"),
    ("httpx", logging.DEBUG, "DEBUG httpx: m 50%"),
])
def test_each_level_and_source(name: str, level: int, expected: str) -> None:
    # guards against: a second message style on the console
    assert _line(name, level, "m 50%") == expected


def test_an_exception_follows_its_message() -> None:
    # guards against: a traceback lost from a logged exception
    try:
        raise ValueError("bad")
    except ValueError:
        import sys
        record = logging.LogRecord("heritage_eval.x", logging.ERROR, __file__, 1,
                                   "failed", None, sys.exc_info())
    text = ConsoleLogFormatter().format(record)
    assert text.startswith("error: failed\nTraceback") and text.endswith("ValueError: bad")


def test_a_loader_warning_on_the_console(tmp_path: Path) -> None:
    # guards against: the logging module's own format reaching a user (a real run)
    data = tmp_path / "ab"
    shutil.copytree(REPO / "data" / "demo" / "ancient_bench" / "seals", data / "seals")
    shutil.copytree(REPO / "data" / "demo" / "ancient_bench" / "seals", data / "odd_medium")
    proc = cli("run", "ancient-bench", "--data", data, "--model", "rapidocr", "--limit",
               "1", "--out", tmp_path / "run")
    lines = proc.stderr.splitlines()
    assert "warning: unknown category folder 'odd_medium' (not one of the paper's 9 " \
        "media): loaded, scored and included in Overall" in lines
    assert not any(line.startswith(("WARNING ", "INFO ")) for line in lines)
