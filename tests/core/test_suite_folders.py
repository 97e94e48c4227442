"""A suite places every run itself (OUT/<benchmark>/<model>): two entries that would share
one run folder, or an entry that sets its own ``out``, are refused when the file is read —
before anything runs — not found after the first run as a folder conflict."""

from __future__ import annotations

from pathlib import Path

import pytest

from heritage_eval.suite import SuiteConfigError, plan_suite

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "ancient_bench"


def _suite(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(f"out: {tmp_path / 'runs'}\n{body}", encoding="utf-8")
    return path


def test_two_entries_in_one_folder_are_refused(tmp_path: Path) -> None:
    path = _suite(tmp_path, "models:\n  - baseline:random\n"
                            "  - {model: baseline:random, model_option: [seed=5]}\n"
                            f"benchmarks:\n  - ancient-bench: {{data: {DEMO}}}\n")
    with pytest.raises(SuiteConfigError, match="would both write to"):
        plan_suite(path)
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("where", ["model", "benchmark", "options"])
def test_an_out_of_its_own_is_refused(tmp_path: Path, where: str) -> None:
    extra = f"out: {tmp_path / 'elsewhere'}"
    model = f"{{model: rapidocr, {extra}}}" if where == "model" else "rapidocr"
    bench = f"{{data: {DEMO}, {extra}}}" if where == "benchmark" else f"{{data: {DEMO}}}"
    options = f"options: {{{extra}}}\n" if where == "options" else ""
    path = _suite(tmp_path, f"{options}models:\n  - {model}\n"
                            f"benchmarks:\n  - ancient-bench: {bench}\n")
    with pytest.raises(SuiteConfigError, match="'out' is set by the suite"):
        plan_suite(path)


def test_distinct_pairs_plan_fine(tmp_path: Path) -> None:
    path = _suite(tmp_path, "models:\n  - rapidocr\n  - baseline:random\n"
                            f"benchmarks:\n  - ancient-bench: {{data: {DEMO}}}\n")
    assert [e.model for e in plan_suite(path)] == ["rapidocr", "baseline:random"]
