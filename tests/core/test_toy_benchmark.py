"""A toy benchmark (tests/core/toy_benchmark.py, < 100 lines) runs end to end through the
CLI, the Python API (inside a running event loop), the statistics and the run folder
rules, against a real local HTTP server speaking the OpenAI protocol."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import heritage_eval as he
from heritage_eval.cli.main import main
from heritage_eval.core.record import SampleRecord
from tests.fake_server import FakeServer

ROWS = [("fr", "France", "Europe", "Paris"), ("it", "Italy", "Europe", "Rome"),
        ("es", "Spain", "Europe", "Madrid"), ("jp", "Japan", "Asia", "Tokyo"),
        ("cn", "China", "Asia", "Beijing")]
pytestmark = pytest.mark.usefixtures("toy_registered")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    p = tmp_path / "capitals.jsonl"
    p.write_text("".join(json.dumps({"id": i, "country": c, "continent": k, "capital": cap})
                         + "\n" for i, c, k, cap in ROWS))
    return p


def _cli(data: Path, out: Path, server: FakeServer, *extra: str, model: str = "a") -> int:
    return main(["run", "toy-capitals", "--data", str(data), "--model", f"openai:{model}",
                 "--base-url", server.base_url, "--out", str(out), *extra])


def test_cli_run_statistics_and_resume(tmp_path: Path, data: Path, server: FakeServer) -> None:
    out = tmp_path / "run-a"
    assert _cli(data, out, server) == 0
    summary = json.loads((out / "summary.json").read_text())
    block = summary["models"]["openai:a"]
    acc = block["metrics"]["accuracy"]
    # hand-computed: Europe 2/3 (Spain wrong), Asia 1/2 (China unparsed counts as wrong);
    # the headline is the macro mean over continents (2/3 + 1/2) / 2 = 7/12
    assert acc["value"] == pytest.approx(7 / 12)
    assert acc["n"] == 5 and acc["ci_low"] <= 7 / 12 <= acc["ci_high"]
    assert block["groups"]["continent"]["Europe"]["accuracy"]["value"] == pytest.approx(2 / 3)
    assert block["states"] == {"scored": 4, "unparsed": 1, "error": 0, "unscored": 0}
    assert block["invalid_rate"]["value"] == pytest.approx(1 / 5)
    assert summary["results"][0]["pooled_accuracy"] == pytest.approx(3 / 5)  # body kept
    assert summary["partial"] is False and summary["schema"] == "heritage-eval/summary/1"
    lines = (out / "samples.jsonl").read_text().splitlines()
    records = [SampleRecord.model_validate_json(line) for line in lines]
    assert [r.id for r in records] == [r[0] for r in ROWS]
    assert records[2].reference == "Madrid" and records[2].answer == "Barcelona"
    assert "capital of Spain" in records[2].turns[0].prompt
    assert json.loads(lines[0])["schema"] == "heritage-eval/sample/1"
    # tables beside summary.md, for every benchmark the same: Markdown, CSV, LaTeX
    tex = (out / "tables" / "continent.tex").read_text()
    assert "\\toprule" in tex and "\\multicolumn{1}{c}{Europe}" in tex
    assert "66.67" in (out / "tables" / "continent.md").read_text()  # Europe 2/3
    assert (out / "tables" / "overall.csv").read_text().splitlines()[1].startswith(
        "openai:a,58.33,")  # 7/12 in percent
    # the same command again resumes from the cache: the only new request is China's,
    # whose empty answer is the model's failure and never cached (docs/denominators.md)
    sent = len(server.requests)
    assert _cli(data, out, server) == 0
    assert len(server.requests) == sent + 1


def test_other_configuration_is_refused(tmp_path: Path, data: Path, server: FakeServer,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert _cli(data, out, server) == 0
    before = (out / "samples.jsonl").read_bytes()
    capsys.readouterr()
    assert _cli(data, out, server, "--max-tokens", "7") == 2
    err = capsys.readouterr().err
    assert "--resume" in err and "--overwrite" in err and "max_tokens" in err
    assert (out / "samples.jsonl").read_bytes() == before  # nothing changed
    # a --limit run would replace the complete run: refused too
    assert _cli(data, out, server, "--limit", "1") == 2
    assert (out / "samples.jsonl").read_bytes() == before
    # --overwrite starts afresh with the new settings
    assert _cli(data, out, server, "--max-tokens", "7", "--overwrite") == 0
    run = json.loads((out / "run.json").read_text())
    assert run["config"]["max_tokens"] == 7 and run["status"] == "complete"


def test_limit_run_is_partial(tmp_path: Path, data: Path, server: FakeServer) -> None:
    out = tmp_path / "smoke"
    assert _cli(data, out, server, "--limit", "2") == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["partial"] is True
    assert (out / "summary.md").read_text().startswith("> **PARTIAL**")
    assert len((out / "samples.jsonl").read_text().splitlines()) == 2
    # the full run may follow into the same folder (partial -> complete), re-using answers
    sent = len(server.requests)
    assert _cli(data, out, server) == 0
    assert len(server.requests) == sent + 3
    assert json.loads((out / "run.json").read_text())["status"] == "complete"


def test_usage_error_creates_no_folder(tmp_path: Path, server: FakeServer) -> None:
    out = tmp_path / "never"
    assert _cli(tmp_path / "absent.jsonl", out, server) == 2
    assert not out.exists()


def test_api_inside_running_event_loop(tmp_path: Path, data: Path, server: FakeServer) -> None:
    async def notebook_cell() -> he.Run:
        # a Jupyter cell runs inside an event loop; asyncio.run() would refuse there
        return he.evaluate("toy-capitals", model="openai:b", base_url=server.base_url,
                           data=data, out=tmp_path / "run-b")

    run = asyncio.run(notebook_cell())
    assert run.status == 0 and run.benchmark == "toy-capitals"
    assert run.metrics()["accuracy"]["value"] == pytest.approx(1.0)  # model b always right
    df = run.to_pandas()
    assert list(df["continent"]) == ["Europe", "Europe", "Europe", "Asia", "Asia"]
    loaded = he.load_run(tmp_path / "run-b")
    assert [r.answer for r in loaded.records] == [r.answer for r in run.records]
    with pytest.raises(he.OptionsError, match="did you mean 'max_tokens'"):
        he.evaluate("toy-capitals", model="openai:b", data=data, out=tmp_path / "x",
                    max_token=5)
    assert not (tmp_path / "x").exists()


def test_comparison_of_two_models(tmp_path: Path, data: Path, server: FakeServer) -> None:
    assert _cli(data, tmp_path / "a", server) == 0
    assert _cli(data, tmp_path / "b", server, model="b") == 0
    comp = he.compare([tmp_path / "a", tmp_path / "b"], out=tmp_path / "cmp")
    (row,) = comp.paired
    # b - a, macro over continents as the headline: Europe 1 - 2/3, Asia 1 - 1/2
    # -> (1/3 + 1/2) / 2 = 5/12
    assert (row.model, row.reference) == ("openai:b", "openai:a")
    assert row.difference == pytest.approx(5 / 12) and row.n == 5
    assert row.ci_low <= 5 / 12 <= row.ci_high and 0 < row.p_value <= 1
    # a is wrong on Spain and silent on China: exactly those two samples disagree
    assert sorted(d.id for d in comp.disagreements) == ["cn", "es"]
    assert (tmp_path / "cmp" / "groups_continent.tex").is_file()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out",
                 str(tmp_path / "cmp2")]) == 0
