"""A path option that is not UTF-8 text (a byte such as 0x80 in a folder name, which
``os.fsdecode`` turns into a lone surrogate) is refused when the options are read, naming
the option and the byte — never a crash once the run folder is being written
(``core/config.BenchmarkOptions``)."""

from __future__ import annotations

import os

import pytest

from heritage_eval.api import run_config
from heritage_eval.cli.main import main
from heritage_eval.core.config import OptionsError

BAD = os.fsdecode(b"/tmp/not-utf8-\x80/x")
GOOD = "/tmp/utf8-\u7532\u9aa8/x"  # 甲骨: non-ASCII but UTF-8 text, accepted


@pytest.mark.parametrize(("bench", "key", "extra"), [
    ("ancient-bench", "data", {}), ("hcsu-discrimination", "data", {}),
    ("hcsu-description", "data", {}), ("muse", "questions", {}),
    ("chronicles-ocr", "data", {}), ("ancient-bench", "prompts", {"data": "."})])
def test_a_path_option_that_is_not_text_is_refused(bench: str, key: str,
                                                   extra: dict[str, str]) -> None:
    with pytest.raises(OptionsError, match=f"{key}: the path .* holds the byte 0x80"):
        run_config(bench, out="o", model="baseline:random", **{key: BAD, **extra})
    run_config(bench, out="o", model="baseline:random", **{key: GOOD, **extra})


def test_the_command_line_says_so_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "ancient-bench", "--data", BAD, "--model", "rapidocr",
                 "--out", "/tmp/never-written"]) == 2
    err = capsys.readouterr().err
    assert "holds the byte 0x80" in err and "\\x80" in err  # shown escaped, not mangled
    assert not os.path.exists("/tmp/never-written")
