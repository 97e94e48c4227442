"""The run's cache line names the cache the run used (``--cache PATH`` as given, else the
folder's ``cache.sqlite``) and is absent without a cache (``--no-cache``, human answers).
Expected lines written out by hand from the summaries below."""

from __future__ import annotations

from pathlib import Path

import pytest

from heritage_eval.core.run_output import cache_line

SUMMARY = {"models": {"a": {"n_records": 27, "response_outcomes": {"cached": 10}},
                      "b": {"n_records": 3, "response_outcomes": {"cached": 3}}}}


@pytest.mark.parametrize("cache, expected", [
    ("cache.sqlite", "answers from the cache (cache.sqlite): 13 of 30 record(s)"),
    (Path("/tmp/shared.sqlite"), "answers from the cache (/tmp/shared.sqlite): 13 of 30 "
                                 "record(s)"),
    (None, None),  # --no-cache: nothing came from a cache
])
def test_the_cache_line_names_the_cache_used(cache: str | Path | None,
                                             expected: str | None) -> None:
    assert cache_line(SUMMARY, cache) == expected


def test_no_line_without_a_model() -> None:
    assert cache_line({"models": {}}) is None


def test_the_cli_names_the_given_cache_and_none_without(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    from heritage_eval.cli.main import main

    data = Path(__file__).resolve().parents[2] / "data" / "demo" / "ancient_bench"
    shared = tmp_path / "shared.sqlite"
    common = ["run", "ancient-bench", "--data", str(data), "--model", "rapidocr",
              "--limit", "1", "--categories", "seals"]
    assert main([*common, "--out", str(tmp_path / "a"), "--cache", str(shared)]) == 0
    assert f"answers from the cache ({shared}): 0 of 1 record(s)" in capsys.readouterr().err
    assert main([*common, "--out", str(tmp_path / "b"), "--no-cache"]) == 0
    assert "answers from the cache" not in capsys.readouterr().err
