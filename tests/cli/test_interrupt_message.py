"""The line printed when a command is interrupted says what was kept: with the response
cache, the answers so far (re-run to resume); with ``--no-cache``, nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from heritage_eval.cli.main import main
from heritage_eval.core import engine
from tests.packaging.test_light_install import DEMO


@pytest.mark.parametrize(("extra", "said"), [
    ([], "interrupted: responses received so far are cached; re-run the same command "
         "to resume"),
    (["--no-cache"], "interrupted: nothing was cached (--no-cache); a re-run of the "
                     "same command starts again"),
])
def test_what_the_interrupt_line_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str],
                                      extra: list[str], said: str) -> None:
    def stopped(*_a: object, **_k: object) -> None:
        raise KeyboardInterrupt  # as Ctrl-C while the run executes (not in a coroutine)

    monkeypatch.setattr(engine, "execute", stopped)
    code = main(["run", "ancient-bench", "--data", str(DEMO / "ancient_bench"),
                 "--model", "baseline:empty", "--out", str(tmp_path / "o"), *extra])
    assert code == 130
    assert said in capsys.readouterr().err
