"""Issue 10, item 18: every command in the ``bash`` blocks of the README and of the
documentation pages is run by a test.

:func:`documented_commands` extracts the commands of README.md and then of each page of
the site's nav, in nav order (:func:`tests.docs.doc_sources.doc_pages`; continuation
lines joined, comments dropped). Each one is either **run** here, in that order (a page
may use the run folders of an earlier one: the tutorial's before the papers' tables, the
MUSE page's before the statistics page), in a scratch folder holding
``data/`` (the bundled demo data) — with placeholders that need real servers or data
replaced by local equivalents (:data:`SUBSTITUTE`: the fake OpenAI-compatible server for
``--base-url``, the demo data for ``DATA``, a predictions folder written from the demo
ground truth for ``score``, the shared real MUSE sample for ``export.json``), and
``--limit`` where a full demo pass would take minutes on a small machine — or
**skipped** for the reason in :data:`SKIPPED`. A documented command in neither table
fails :func:`test_every_readme_command_is_accounted_for`, so a new command cannot go
untested. The suite file of docs/how-to/suites.md runs as printed in
:func:`test_readme_suite_example_exits_0`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from heritage_eval.cli.main import main
from tests.conftest import realdata
from tests.docs.doc_sources import DOCS, REPO, bash_commands, doc_pages
from tests.fake_server import FakeServer, Scripted, chat_reply, fake_openai_server

#: the page whose ``yaml`` block is the documented suite file
SUITES_PAGE = DOCS / "how-to" / "suites.md"

#: command prefix -> why it is not run here (checked by prefix match, in order)
SKIPPED = {
    "make test": "the whole suite itself (this test is part of it)",
    "make lint": "developer tool (ruff + mypy), run by CI's lint job",
    "make bench": "performance benchmarks (minutes); run by 'make bench'",
    "python bench/": "a performance benchmark (minutes; machine-dependent figures); run by "
                     "'make bench' (bench/run_all.py)",
    "source ": "shell set-up, not a command to test",
    "ray get-auth-token": "writes the Ray cluster's auth token (a cluster set-up step); the "
                          "token mode is tested in tests/core/test_ray_cluster.py",
    "export RAY_": "shell set-up for a Ray cluster, not a command to test",
    "ray start": "starts a Ray cluster (needs the nodes); the Ray executor is tested in "
                 "tests/core/test_ray_executor.py",
    "CUDA_VISIBLE_DEVICES": "starts vLLM on GPUs; endpoints are tested against the fake "
                            "server (tests/models/test_endpoints.py)",
    "heritage-eval run ancient-bench --data DATA --model hf:": "needs a local model folder; "
        "the hf backend runs a tiny random LLaVA in tests/models/test_hf_backend.py",
    "heritage-eval run ancient-bench --data /mnt/nfs/AncientBench": "needs a Ray cluster and "
        "a model folder (see the two above)",
    "heritage-eval ingest iiif https://": "fetches from the network; tested against a "
        "loopback IIIF server (v2 and v3 info.json, 404s, crops, resume) in "
        "tests/curate/test_iiif_ingest.py",
    "heritage-eval view runs/big-run --serve": "serves until interrupted; the server is "
                                               "tested in tests/viewer",
    "vllm serve": "starts a vLLM server on a GPU; endpoints are tested against the fake "
                  "server (tests/models/test_endpoints.py)",
    "huggingface-cli download": "downloads a model from the network; the hf backend runs a "
                                "tiny random LLaVA in tests/models/test_hf_backend.py",
    "pip install": "installs packages (make setup installs the same extras)",
    ".venv/bin/python -m mkdocs": "builds or serves the documentation site; "
                                  "tests/docs/test_site_build.py builds it (strict)",
    "heritage-eval run --config suite.yaml": "runs the suite file printed above it; "
        "test_readme_suite_example_exits_0 below runs that file as printed",
}


def documented_commands() -> list[str]:
    """The commands of the README's and the documentation pages' ``bash`` blocks, in
    page order (:func:`~tests.docs.doc_sources.bash_commands` of each page: blocks
    marked ``<!-- docs-test: skip (REASON) -->`` are left out)."""
    return [c for page in doc_pages() for c in bash_commands(page)]


def skip_reason(command: str) -> str | None:
    return next((why for prefix, why in SKIPPED.items() if command.startswith(prefix)), None)


def test_every_readme_command_is_accounted_for() -> None:
    commands = documented_commands()
    assert len(commands) >= 20
    for command in commands:
        head = command.split()[0]
        assert skip_reason(command) or head in ("heritage-eval", "make"), command


def _reply(body: dict[str, object]) -> Scripted:
    """One answer for every benchmark: a transcription, a choice, a count."""
    return chat_reply("<res>天地</res> [option] A")


@pytest.fixture
def servers() -> Iterator[list[FakeServer]]:
    with fake_openai_server() as a, fake_openai_server() as b, fake_openai_server() as c:
        for s in (a, b, c):
            s.responder = _reply
        yield [a, b, c]


def _predictions(root: Path) -> Path:
    """Official-layout predictions of one model ("demo-model") for the demo release:
    every answer is the ground truth."""
    for conv in sorted((REPO / "data" / "demo" / "ancient_bench").glob("*/conv.jsonl")):
        results = root / "demo-model" / conv.parent.name / "results"
        results.mkdir(parents=True)
        for line in conv.read_text("utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                stem = Path(item["image"]).stem
                (results / f"{stem}.json").write_text(
                    json.dumps({"answer": item["human_gt"]}, ensure_ascii=False), "utf-8")
    return root


def local(command: str, urls: list[str], scratch: Path) -> list[str] | None:
    """The argv (without ``heritage-eval``) running ``command`` locally (``--limit 2``,
    ``make demo`` ``--limit 1``: quick passes over the demo data), or ``None``
    when it needs data that is absent here (the MUSE sample)."""
    if command == "make demo":  # the Makefile's demo command, on 2 samples per medium
        command = ("heritage-eval run ancient-bench --data data/demo/ancient_bench --model "
                   "rapidocr --out runs/demo-ancient-bench --limit 1")
    url_iter = iter(urls)
    words = shlex.split(command)[1:]
    argv: list[str] = []
    for i, w in enumerate(words):
        prev = words[i - 1] if i else ""
        if prev == "--base-url":
            w = next(url_iter)
        elif prev == "--data" and w in ("DATA", "/path/to/Ancient_Bench"):
            w = "data/demo/hcsu" if "hcsu" in command else "data/demo/ancient_bench"
        elif prev == "--data" and w == "/path/to/gt":
            w = "data/demo/ancient_bench"
        elif prev == "--predictions" and w == "/path/to/predictions":
            w = str(_predictions(scratch / "predictions"))
        elif prev in ("--annotations", "--images") and w in ("export.json", "images/"):
            real = realdata("muse")
            if not real.is_dir():
                return None
            w = str(real / ("annotations.json" if w == "export.json" else "images"))
        argv.append(w)
    if "DATA" in words and "hcsu" in command and "--k" not in argv:
        argv += ["--k", "5"]  # the demo has 5 classes per domain (K=8 needs the release)
    if argv[:2] in (["run", "ancient-bench"], ["run", "hcsu-discrimination"],
                    ["run", "hcsu-description"], ["hcsu", "k-sweep"],
                    ["hcsu", "robustness"], ["run", "muse"]) and "--limit" not in argv \
            and "--help" not in argv and "runs/muse-demo/questions.jsonl" not in argv:
        # a quick pass over the demo data (the MUSE demo runs whole: 66 questions, a few
        # seconds with the baselines, so that human and model answers share questions)
        argv += ["--limit", "2"]
    return argv


#: run folders the view / compare / export commands read, made before them: name ->
#: the argv making it (another Ancient-Bench run on the demo data, fake server)
PREREQUISITES = ("runs/model-a", "runs/model-b", "runs/model-c")


@pytest.mark.slow
def test_readme_commands_run(tmp_path: Path, servers: list[FakeServer],
                             monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    # kind: documented commands that fail for a new user (exit 2, wrong paths, a study that
    # needs a second model) go unnoticed
    monkeypatch.chdir(tmp_path)
    os.symlink(REPO / "data", tmp_path / "data")
    urls = [s.base_url for s in servers]
    made: set[str] = set()
    timings: list[tuple[float, str]] = []
    not_made: set[str] = set()  # outputs of commands skipped without the shared sample
    for command in documented_commands():
        if skip_reason(command):
            continue
        argv = local(command, urls * 2, tmp_path)
        if argv is None:  # the shared sample is absent: this command and its users
            words = shlex.split(command)
            if "--out" in words:
                not_made.add(words[words.index("--out") + 1])
            continue
        for folder in PREREQUISITES:
            if folder in argv and folder not in made and not Path(folder).exists():
                assert main(["run", "ancient-bench", "--data", "data/demo/ancient_bench",
                             "--model", "openai:vlm", "--base-url", urls[0], "--limit", "1",
                             "--out", folder]) == 0
                made.add(folder)
        if ("--questions" in argv and argv[argv.index("--questions") + 1].startswith(
                "runs/muse/") and not Path(argv[argv.index("--questions") + 1]).exists()) \
                or any(w.startswith(tuple(not_made)) for w in argv if not_made):
            # its question file is generated from the shared sample (absent here), or it
            # reads the output of a command skipped for that reason
            if "--out" in argv:
                not_made.add(argv[argv.index("--out") + 1])
            continue
        if argv[:2] == ["hcsu", "robustness"] and "--description-model" not in argv \
                and "--tasks" not in argv:
            # the README line as it stood: both tasks with a discrimination-only model;
            # the message must say how to fix it
            assert main(argv) == 2, command
            err = capsys.readouterr().err
            assert "--description-model" in err and "--tasks discrimination" in err
            continue
        start = time.perf_counter()
        try:
            rc = main(argv)
        except SystemExit as exc:  # --help
            rc = int(exc.code or 0)
        out = capsys.readouterr()
        timings.append((round(time.perf_counter() - start, 1), command))
        assert rc == 0, f"{command}\n-> exit {rc}\n{out.err[-2000:]}"
    if os.environ.get("README_TIMINGS"):
        print("\n".join(f"{t:7.1f} s  {c}" for t, c in sorted(timings, reverse=True)))


def readme_suite_example(text: str) -> str:
    """The ``yaml`` block of the suites page (:data:`SUITES_PAGE`), as printed."""
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, flags=re.M | re.S)
    assert len(blocks) == 1, "the suites page shows one suite.yaml"
    return str(blocks[0])


@pytest.mark.slow
def test_readme_suite_example_exits_0(tmp_path: Path, servers: list[FakeServer],
                                      monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    # kind: a documented suite whose pair refused by design (an OCR engine on a
    # multiple-choice benchmark) made every run of the example exit 1. The documented
    # file runs as printed; only its base_url points at the local fake OpenAI-compatible
    # server instead of a vLLM server on localhost:8000.
    example = readme_suite_example(SUITES_PAGE.read_text("utf-8"))
    assert "http://localhost:8000/v1" in example
    monkeypatch.chdir(tmp_path)
    os.symlink(REPO / "data", tmp_path / "data")
    Path("suite.yaml").write_text(example.replace("http://localhost:8000/v1",
                                                  servers[0].base_url), "utf-8")
    assert main(["run", "--config", "suite.yaml"]) == 0, capsys.readouterr().err[-2000:]
    runs = json.loads(Path("runs/suite/suite.json").read_text("utf-8"))["runs"]
    status = {(r["benchmark"], r["model"]): r["status"] for r in runs}
    # by hand from the example: 2 benchmarks x 2 models; only rapidocr x the
    # multiple-choice benchmark is refused by design
    assert status.pop(("hcsu-discrimination", "rapidocr")) == "skipped"
    assert len(status) == 3 and set(status.values()) <= {"done", "partial"}, status
    skipped = next(r for r in runs if r["status"] == "skipped")
    assert "OCR engine" in skipped["message"]
    assert "| skipped: " in Path("runs/suite/suite.md").read_text("utf-8")
