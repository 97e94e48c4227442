"""What the command line imports before its first real work (issue 23, item 5).

Each command runs as a fresh process with the help cache off
(``HERITAGE_EVAL_HELP_CACHE=off``: the parser is built, as on the first ``--help`` after
an install and on every command that is not a help request); the modules it imported
are read from ``sys.modules`` when it ends. No timing: the rule is on the module set.

The module lists below come from ``python -X importtime`` of each command
(bench/bench_startup.py prints the times): pydantic, numpy, PIL, rapidfuzz, the engine
and the scoring code are what made these commands slow, and none is needed before the
command's own work starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: Run ``heritage_eval.cli.main.main`` with argv[2:], then write the sorted module names
#: to the file argv[1] (also when argparse ends the process, e.g. ``--help``).
_CHILD = r"""
import json, sys
out, argv = sys.argv[1], sys.argv[2:]
sys.argv = ["heritage-eval", *argv]
from heritage_eval.cli.main import main
try:
    code = main()
except SystemExit as exc:
    code = exc.code
with open(out, "w", encoding="utf-8") as f:
    json.dump(sorted(sys.modules), f)
sys.exit(code)
"""

#: Third-party packages that no command's parser needs (numeric, imaging, fuzzy
#: matching, templates, tables, HTTP, YAML, Chinese conversion).
HEAVY = ("numpy", "pandas", "PIL", "rapidfuzz", "jinja2", "tabulate", "httpx", "yaml",
         "opencc")
#: The platform's and Ancient-Bench's scoring and running code.
SCORING = ("heritage_eval.core.engine", "heritage_eval.core.summary",
           "heritage_eval.benchmarks.ancient_bench.records",
           "heritage_eval.benchmarks.ancient_bench.report",
           "heritage_eval.benchmarks.ancient_bench.scoring",
           "heritage_eval.benchmarks.ancient_bench.console",
           "heritage_eval.benchmarks.ancient_bench.envelope",
           "heritage_eval.benchmarks.ancient_bench.score_write",
           "heritage_eval.metrics.text")
#: What running a model needs (event loop, SQLite cache, progress bar, the runner).
RUNNING = ("asyncio", "sqlite3", "tqdm", "heritage_eval.core.runner",
           "heritage_eval.core.cache", "heritage_eval.benchmarks.ancient_bench.pipeline")


def imported(tmp_path: Path, *argv: str) -> tuple[int, set[str]]:
    """Exit status and imported modules of ``heritage-eval ARGV`` in a fresh process
    (help cache off; stdout and stderr discarded)."""
    out = tmp_path / "modules.json"
    env = {**os.environ, "HERITAGE_EVAL_HELP_CACHE": "off"}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(out), *argv], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=False, timeout=120)
    assert out.exists(), done.stderr
    return done.returncode, set(json.loads(out.read_text(encoding="utf-8")))


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The packages of ``names`` found in ``modules`` (a package or any sub-module)."""
    return sorted(n for n in names
                  if n in modules or any(m.startswith(n + ".") for m in modules))


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["score", "--help"]])
def test_top_level_help_imports_no_model_code(tmp_path: Path, argv: list[str]) -> None:
    code, modules = imported(tmp_path, *argv)
    assert code == 0
    assert "heritage_eval.cli.parser" in modules  # the parser was built, not cached
    assert loaded(modules, (*HEAVY, "pydantic", *SCORING, *RUNNING)) == []


def test_version_builds_no_parser(tmp_path: Path) -> None:
    code, modules = imported(tmp_path, "--version")
    assert code == 0
    assert loaded(modules, ("argparse", "heritage_eval.cli.parser", "heritage_eval.core.plugins",
                            "heritage_eval.benchmarks", *HEAVY, "pydantic")) == []


def test_score_help_needs_no_pydantic(tmp_path: Path) -> None:
    code, modules = imported(tmp_path, "score", "ancient-bench", "--help")
    assert code == 0
    assert "heritage_eval.benchmarks.ancient_bench.score_command" in modules
    assert loaded(modules, (*HEAVY, "pydantic", "pydantic_core", *SCORING, *RUNNING,
                            "heritage_eval.benchmarks.ancient_bench.score",
                            "heritage_eval.benchmarks.ancient_bench.benchmark",
                            "heritage_eval.core.config")) == []


def test_score_startup_reaches_the_data_before_the_scoring_code(tmp_path: Path) -> None:
    # a missing --data folder is the first thing the command finds: it is refused
    # (exit 2, nothing written) having imported the loader, not the scoring code
    code, modules = imported(tmp_path, "score", "ancient-bench", "--data",
                             str(tmp_path / "absent"), "--predictions", str(tmp_path),
                             "--out", str(tmp_path / "out"))
    assert code == 2
    assert not (tmp_path / "out").exists()
    assert "heritage_eval.benchmarks.ancient_bench.loader" in modules
    assert loaded(modules, (*HEAVY, *SCORING,
                            "heritage_eval.benchmarks.ancient_bench.pipeline")) == []


def test_run_help_needs_only_the_options(tmp_path: Path) -> None:
    # the options are pydantic models (core/config.py, ancient_bench/options.py): pydantic
    # is needed; the scoring code and the heavy packages are not
    code, modules = imported(tmp_path, "run", "ancient-bench", "--help")
    assert code == 0
    assert {"pydantic", "heritage_eval.benchmarks.ancient_bench.options"} <= modules
    assert loaded(modules, (*HEAVY, *SCORING,
                            "heritage_eval.benchmarks.ancient_bench.pipeline",
                            "heritage_eval.benchmarks.ancient_bench.loader",
                            "heritage_eval.benchmarks.ancient_bench.prompts")) == []


def test_the_configuration_imports_no_record_code(tmp_path: Path) -> None:
    # core/config.py needs only pydantic and the option rules: it declares the default
    # of --warn-downscale itself (core/run_limits.py, which counts it, imports records)
    code = ("import json, sys; import heritage_eval.core.config; "
            "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    modules = set(json.loads(done.stdout))
    assert loaded(modules, (*HEAVY, *RUNNING, "heritage_eval.core.record",
                            "heritage_eval.core.model_failures",
                            "heritage_eval.core.types",
                            "heritage_eval.core.sizecap")) == []


#: What ``run muse`` reads, scores and tabulates with (the question reader, the scoring,
#: the summary, the tables, the embedder), none of which its ``--help`` needs.
MUSE_WORK = ("heritage_eval.benchmarks.muse.question_index",
             "heritage_eval.benchmarks.muse.questions",
             "heritage_eval.benchmarks.muse.run",
             "heritage_eval.benchmarks.muse.scoring",
             "heritage_eval.benchmarks.muse.records",
             "heritage_eval.benchmarks.muse.report",
             "heritage_eval.benchmarks.muse.analysis",
             "heritage_eval.benchmarks.muse.streamed_scoring",
             "heritage_eval.benchmarks.muse.summary_sink",
             "heritage_eval.benchmarks.outcomes",
             "heritage_eval.core.images")


def test_run_muse_help_needs_only_the_options(tmp_path: Path) -> None:
    # the Muse class and its RunOptions are loaded (the help is built from them); the
    # question reader, the scoring and the engine's parts are imported by the methods
    code, modules = imported(tmp_path, "run", "muse", "--help")
    assert code == 0
    assert {"heritage_eval.benchmarks.muse.benchmark",
            "heritage_eval.benchmarks.muse.run_options"} <= modules
    assert loaded(modules, (*HEAVY, *SCORING, *RUNNING, *MUSE_WORK)) == []


def test_run_muse_help_imports_no_numpy(tmp_path: Path) -> None:
    code, modules = imported(tmp_path, "run", "muse", "--help")
    assert code == 0
    assert loaded(modules, ("numpy", "heritage_eval.metrics.embeddings")) == []


def test_muse_generate_help_imports_no_generator(tmp_path: Path) -> None:
    # the --set knob names come from the plain list of muse/knob_names.py, not from the
    # parameter models (params.py imports the text embedder, hence numpy)
    code, modules = imported(tmp_path, "muse", "generate", "--help")
    assert code == 0
    assert "heritage_eval.benchmarks.muse.cli_generate" in modules
    assert loaded(modules, (*HEAVY, *SCORING, *RUNNING, *MUSE_WORK, "cv2", "sklearn",
                            "scipy", "heritage_eval.benchmarks.muse.params",
                            "heritage_eval.benchmarks.muse.textembed",
                            "heritage_eval.benchmarks.muse.generate")) == []


def test_muse_knob_names_are_the_parameter_fields() -> None:
    # the list --help prints must stay the knobs --set accepts: params.knob_lines() is
    # the reference (it walks GenerationParams), in the same order
    from heritage_eval.benchmarks.muse.knob_names import KNOB_NAMES
    from heritage_eval.benchmarks.muse.params import knob_lines

    assert list(KNOB_NAMES) == [line.split(" = ", 1)[0] for line in knob_lines()]


def test_score_chronicles_help_needs_only_the_options(tmp_path: Path) -> None:
    # the plug-in declares its score options in chronicles_ocr/score_options.py: the
    # scoring module (records, judges, replay) and the engine are imported by the scorer
    pytest.importorskip("chronicles_ocr")
    code, modules = imported(tmp_path, "score", "chronicles-ocr", "--help")
    assert code == 0
    assert "chronicles_ocr.score_options" in modules
    assert loaded(modules, (*HEAVY, *SCORING, *RUNNING, "chronicles_ocr.scoring",
                            "chronicles_ocr.records", "chronicles_ocr.judges",
                            "chronicles_ocr.replay", "chronicles_ocr.loader")) == []


#: What the HCSU benchmarks load, plan, score and tabulate with (the loader and its data
#: schema, the planners, the judge and BERTScore, the records and summary), none of
#: which ``run hcsu-* --help`` needs.
HCSU_WORK = ("heritage_eval.benchmarks.hcsu.loader",
             "heritage_eval.benchmarks.hcsu.schema",
             "heritage_eval.benchmarks.hcsu.lazy_plan",
             "heritage_eval.benchmarks.hcsu.discrimination",
             "heritage_eval.benchmarks.hcsu.description",
             "heritage_eval.benchmarks.hcsu.pipeline",
             "heritage_eval.benchmarks.hcsu.studies",
             "heritage_eval.benchmarks.hcsu.judging",
             "heritage_eval.benchmarks.hcsu.scoring",
             "heritage_eval.benchmarks.hcsu.description_scoring",
             "heritage_eval.benchmarks.hcsu.records",
             "heritage_eval.benchmarks.hcsu.sample_records",
             "heritage_eval.benchmarks.hcsu.summary_sink",
             "heritage_eval.benchmarks.hcsu.markdown",
             "heritage_eval.benchmarks.hcsu.runio",
             "heritage_eval.benchmarks.hcsu.options",
             "heritage_eval.benchmarks.outcomes",
             "heritage_eval.metrics.judge",
             "heritage_eval.metrics.bertscore")


@pytest.mark.parametrize(("name", "module"), [
    ("hcsu-discrimination", "heritage_eval.benchmarks.hcsu.benchmark"),
    ("hcsu-description", "heritage_eval.benchmarks.hcsu.benchmark_description")])
def test_run_hcsu_help_needs_only_the_options(tmp_path: Path, name: str,
                                              module: str) -> None:
    # the Benchmark class, its typed options and the task defaults are loaded (the help is
    # built from them); the loader, the planning, the judge, the scoring and the engine's
    # parts are imported by the methods that use them
    code, modules = imported(tmp_path, "run", name, "--help")
    assert code == 0
    assert {module, "heritage_eval.benchmarks.hcsu.option_models"} <= modules
    assert loaded(modules, (*HEAVY, *SCORING, *RUNNING, *HCSU_WORK)) == []


def test_hcsu_task_defaults_are_the_task_modules_values() -> None:
    # the light module is the one definition: the names other code imports from the task
    # modules are the same objects (values from the paper, §3.2 / §4.2)
    from heritage_eval.benchmarks.hcsu import (
        description,
        discrimination,
        options,
        pipeline,
        runio,
        sample_records,
        studies,
        task_defaults,
    )
    from heritage_eval.benchmarks.hcsu.benchmark import HcsuDiscrimination
    from heritage_eval.benchmarks.hcsu.benchmark_description import HcsuDescription

    assert (discrimination.DEFAULT_K, description.DEFAULT_SHOTS, description.MAX_WORDS) \
        == (task_defaults.DEFAULT_K, task_defaults.DEFAULT_SHOTS, task_defaults.MAX_WORDS) \
        == (8, 2, 50)
    assert studies.PAPER_KS == (2, 3, 4, 5, 6, 7, 8, 9, 10)
    assert studies.PAPER_SHOTS == (1, 2, 3, 4, 8)
    assert pipeline.PAPER_TEMPERATURE == HcsuDiscrimination.default_temperature == 0.1
    assert runio.LIMIT_HELP == HcsuDescription.limit_help == task_defaults.LIMIT_HELP
    assert options.DISCRIMINATION_MAX_TOKENS == HcsuDiscrimination.default_max_tokens == 4096
    assert HcsuDescription.default_max_tokens == 256
    assert (options.DISCRIMINATION, sample_records.DISCRIMINATION, HcsuDiscrimination.name) \
        == ("hcsu-discrimination",) * 3
    assert (options.DESCRIPTION, sample_records.DESCRIPTION, HcsuDescription.name) \
        == ("hcsu-description",) * 3
