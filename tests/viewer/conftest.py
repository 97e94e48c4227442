"""Fixtures of the viewer tests: hand-made run folders, real CLI runs, headless Chromium.

Browser tests skip with the reason when Chromium, chromedriver or selenium is absent,
except under ``CI=true``, where they fail. Screenshots go to ``$HE_VIEWER_ARTIFACTS``
(default ``tests/viewer/artifacts/``, git-ignored).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.record import ImageRef, ResponseRecord, SampleRecord, TurnRecord
from heritage_eval.core.summary import envelope
from tests.conftest import realdata

REPO = Path(__file__).resolve().parents[2]
REALDATA = realdata()
DEMO = REPO / "data" / "demo"
ARTIFACTS = Path(os.environ.get("HE_VIEWER_ARTIFACTS") or REPO / "tests/viewer/artifacts")


def record(id: str, *, benchmark: str = "toy", model: str = "m1", state: str = "scored",
           scores: dict[str, float | None] | None = None, groups: dict[str, str] | None = None,
           images: Sequence[str] = (), image_root: str | None = None, answer: Any = "A",
           reference: Any = "A", details: dict[str, Any] | None = None,
           response: str | None = "A", prompt: str = "Question?") -> SampleRecord:
    """A hand-made record (one turn)."""
    return SampleRecord(
        id=id, benchmark=benchmark, model=model, state=state,  # type: ignore[arg-type,call-arg]
        scores=scores if scores is not None else {"acc": 1.0}, groups=groups or {},
        turns=[TurnRecord(prompt=prompt, images=[ImageRef(path=p, role="target")
                                                 for p in images],
                          response=ResponseRecord(text=response, latency_s=0.5))],
        image_root=image_root, answer=answer, reference=reference, details=details or {},
        source="hand:1")


def write_run(folder: Path, records: Sequence[SampleRecord], *, benchmark: str = "toy",
              metrics: Sequence[MetricSpec] = (MetricSpec("acc", "Acc"),),
              group_keys: Sequence[str] = (), partial: bool = False,
              extra_lines: Sequence[str] = ()) -> Path:
    """A run folder: samples.jsonl (+ raw ``extra_lines`` appended) and summary.json."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    lines = [r.to_json_line() for r in records] + list(extra_lines)
    (folder / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    summary = envelope(benchmark, list(records), list(metrics), list(group_keys),
                       partial=partial)
    summary["provenance"] = {"model": records[0].model if records else None,
                             "package_version": "0.0.test", "prompt_templates_hash": "abc123"}
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return folder


def make_image(path: Path, size: tuple[int, int] = (200, 100),
               color: tuple[int, int, int] = (200, 30, 30)) -> Path:
    """A plain JPEG/PNG image file (format from the suffix)."""
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path)
    return path


# ---- real CLI runs (session-scoped: each made once) ----

def _cli() -> list[str]:
    exe = Path(sys.executable).parent / "heritage-eval"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "heritage_eval.cli.main"]


def cli(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``heritage-eval ARGS`` and return the completed process."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run([*_cli(), *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"heritage-eval {' '.join(map(str, args))} -> "
                             f"{proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="session")
def real_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real CLI runs on the demo data and the shared real sample (a few seconds each):
    ``ab`` (Ancient-Bench demo, rapidocr, --limit 1: PARTIAL), ``hd`` / ``hs`` (HCSU
    discrimination / description without BERTScore, --limit 3), ``mu`` / ``mu2`` (MUSE on the real
    annotated artworks: random baseline; jigsaw-edges baseline for a second model)."""
    if not (REALDATA / "muse" / "annotations.json").is_file():
        pytest.skip(f"shared real data missing at {REALDATA}")
    base = tmp_path_factory.mktemp("runs")
    runs = {k: base / k for k in ("ab", "hd", "hs", "mu", "mu2")}
    questions = base / "mq" / "questions.jsonl"

    def muse() -> None:
        cli("muse", "generate", "--annotations", REALDATA / "muse" / "annotations.json",
            "--images", REALDATA / "muse" / "images", "--out", questions, "--seed", "0")
        cli("run", "muse", "--questions", questions, "--model", "baseline:random",
            "--out", runs["mu"])
        cli("run", "muse", "--questions", questions, "--model", "baseline:jigsaw-edges",
            "--out", runs["mu2"])

    jobs = [lambda: cli("run", "ancient-bench", "--data", DEMO / "ancient_bench", "--model",
                        "rapidocr", "--limit", "1", "--out", runs["ab"]),
            lambda: cli("run", "hcsu-discrimination", "--data", DEMO / "hcsu", "--model",
                        "baseline:image-similarity", "--k", "5", "--limit", "3",
                        "--out", runs["hd"]),
            lambda: cli("run", "hcsu-description", "--data", DEMO / "hcsu", "--model",
                        "baseline:nearest-description", "--limit", "3", "--no-bertscore",
                        "--out", runs["hs"]),
            muse]
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:  # processes: mostly start-up
        for fut in [pool.submit(job) for job in jobs]:
            fut.result()
    return runs


# ---- headless Chromium ----

@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A headless Chromium driver (skips outside CI when unavailable; fails in CI)."""
    from heritage_eval.viewer.browser import chromium, missing_reason

    reason = missing_reason()
    if reason:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true but the browser tests cannot run: {reason}")
        pytest.skip(f"browser tests skipped: {reason}")
    with chromium() as driver:
        yield driver


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Folder for screenshots (created)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def copy_run(src: Path, dest: Path) -> Path:
    """A copy of a run folder without its viewer/cache."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("viewer", "cache.sqlite*"))
    return dest
