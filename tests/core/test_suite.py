"""``run --config``: models x benchmarks from one file, one folder each, suite summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heritage_eval.benchmarks.command_options import OptionsError
from heritage_eval.cli.main import main
from heritage_eval.suite import SuiteConfigError, plan_suite
from tests.fake_server import FakeServer

DATA = "".join(json.dumps(r) + "\n" for r in [
    {"id": "fr", "country": "France", "continent": "Europe", "capital": "Paris"},
    {"id": "jp", "country": "Japan", "continent": "Asia", "capital": "Tokyo"}])


pytestmark = pytest.mark.usefixtures("toy_registered")


def _config(tmp_path: Path, server: FakeServer, extra: str = "") -> Path:
    (tmp_path / "caps.jsonl").write_text(DATA)
    cfg = tmp_path / "suite.yaml"
    cfg.write_text(f"""
out: out
options: {{base_url: "{server.base_url}"}}
models: ["openai:a", {{model: "openai:b", max_tokens: 64}}]
benchmarks:
  - toy-capitals: {{data: caps.jsonl}}
{extra}""")
    return cfg


def test_suite_runs_every_pair_and_resumes(tmp_path: Path, server: FakeServer) -> None:
    cfg = _config(tmp_path, server)
    assert main(["run", "--config", str(cfg)]) == 0
    for slug in ("openai_a", "openai_b"):
        assert (tmp_path / "out" / "toy-capitals" / slug / "samples.jsonl").is_file()
    suite = json.loads((tmp_path / "out" / "suite.json").read_text())
    assert [r["status"] for r in suite["runs"]] == ["done", "done"]
    # model b answers every capital right (ANSWERS in test_toy_benchmark) -> 1.0
    assert suite["runs"][1]["metrics"]["accuracy"]["value"] == pytest.approx(1.0)
    b = json.loads((tmp_path / "out/toy-capitals/openai_b/run.json").read_text())
    assert b["config"]["max_tokens"] == 64  # per-model option applied
    assert "| toy-capitals | `openai:a` | done |" in (tmp_path / "out/suite.md").read_text()
    sent = len(server.requests)
    assert main(["run", "--config", str(cfg)]) == 0  # resumes: nothing new sent
    assert len(server.requests) == sent


def test_bad_config_is_refused_before_any_run(tmp_path: Path, server: FakeServer) -> None:
    cfg = _config(tmp_path, server)
    cfg.write_text(cfg.read_text().replace("max_tokens", "max_tokenz"))
    with pytest.raises(OptionsError, match="did you mean 'max_tokens'"):
        plan_suite(cfg)
    assert main(["run", "--config", str(cfg)]) == 2
    assert not (tmp_path / "out").exists()
    cfg.write_text("models: [a]\nbenchmark: []\n")
    with pytest.raises(SuiteConfigError, match="unknown top-level key"):
        plan_suite(cfg)
