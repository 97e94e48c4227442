"""The line printed when a command is interrupted says what was kept: once a response
cache was opened, the answers so far (re-run to resume); with ``--no-cache``, nothing;
a command that opened no cache only says that it stopped."""

from __future__ import annotations

from pathlib import Path

import pytest

from heritage_eval.cli.main import main
from heritage_eval.core import engine
from heritage_eval.core.cache import ResponseCache
from tests.packaging.test_light_install import DEMO, write_predictions


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
        if not extra:  # a run with the cache: stopped once its cache is open
            ResponseCache(tmp_path / "o" / "cache.sqlite").close()
        raise KeyboardInterrupt  # as Ctrl-C while the run executes (not in a coroutine)

    monkeypatch.setattr(engine, "execute", stopped)
    code = main(["run", "ancient-bench", "--data", str(DEMO / "ancient_bench"),
                 "--model", "baseline:empty", "--out", str(tmp_path / "o"), *extra])
    assert code == 130
    assert said in capsys.readouterr().err


def test_a_command_without_a_cache_does_not_speak_of_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # score ancient-bench has no response cache: interrupted, it says only that it stopped
    from heritage_eval.benchmarks.ancient_bench import score_write

    def stopped(*_a: object, **_k: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(score_write, "write_scores", stopped)
    pred = write_predictions(tmp_path)
    code = main(["score", "ancient-bench", "--data", str(DEMO / "ancient_bench"),
                 "--predictions", str(pred), "--out", str(tmp_path / "o")])
    assert code == 130
    err = capsys.readouterr().err
    assert "interrupted: the command stopped before it finished" in err and "cache" not in err
