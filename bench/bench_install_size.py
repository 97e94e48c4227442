"""Size of ``pip install heritage-eval`` without extras, and what it can do.

Creates a fresh virtual environment in a temporary folder, installs this checkout into it
with no extras (``pip install <copy of the checkout>``; pip's cache makes repeated runs
quick, the package index is needed the first time), and prints the size of what landed in
``site-packages``: the dependencies (goal: under 150 MB), heritage-eval itself, and pip /
setuptools (the virtual environment's own, not counted), with the ten largest
distributions. Then, with that environment's ``heritage-eval``, it scores generated
predictions for the bundled Ancient-Bench demo (``score ancient-bench``), builds the
viewer site of the result (``view``) and compares the run with itself (``compare``), and
checks that ``--model rapidocr`` stops with the ``ocr`` extra's install line.

Sizes are the files' byte counts (``.pyc`` files compiled by pip included) in MiB.
Needs the network (the package index); not part of the test suite.

Usage: ``python bench/bench_install_size.py [--keep DIR]`` (``--keep``: build the
environment in DIR and leave it there).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo" / "ancient_bench"
GOAL_MB = 150.0
#: What a new virtual environment brings itself (not heritage-eval's dependencies).
VENV_OWN = ("pip", "setuptools", "_distutils_hack", "pkg_resources", "distutils-precedence")
MB = 1024 * 1024


def copy_checkout(dest: Path) -> Path:
    """The files a build needs (pyproject.toml, README.md, LICENSE, src/) copied to
    ``dest``, so that pip's in-tree build writes nothing into the checkout."""
    dest.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "src", dest / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return dest


def run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False,
                          **kwargs)  # type: ignore[call-overload]


def tree_size(path: Path) -> int:
    """Bytes of the regular files under ``path`` (or of ``path`` itself)."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def distribution_sizes(site: Path) -> dict[str, int]:
    """Bytes per top-level entry of ``site-packages`` grouped by distribution: each
    ``*.dist-info`` with the files its RECORD lists (so ``numpy`` + ``numpy.libs`` +
    ``numpy-*.dist-info`` count as one), anything unlisted under its own name."""
    sizes: dict[str, int] = {}
    claimed: set[Path] = set()
    for info in sorted(site.glob("*.dist-info")):
        name = info.name.split("-")[0].lower().replace("_", "-")
        total = 0
        record = info / "RECORD"
        lines = record.read_text(encoding="utf-8").splitlines() if record.is_file() else []
        for line in lines:
            rel = line.split(",")[0]
            p = (site / rel).resolve()
            if p.is_file() and p not in claimed:
                claimed.add(p)
                total += p.stat().st_size
        for p in info.rglob("*"):  # files pip added after writing RECORD
            if p.is_file() and p.resolve() not in claimed:
                claimed.add(p.resolve())
                total += p.stat().st_size
        sizes[name] = sizes.get(name, 0) + total
    for p in site.rglob("*"):  # e.g. .pyc files pip compiled: by their top-level folder
        if p.is_file() and p.resolve() not in claimed:
            top = p.relative_to(site).parts[0].split(".")[0].lower().replace("_", "-")
            sizes[top] = sizes.get(top, 0) + p.stat().st_size
    return sizes


def write_predictions(out: Path) -> Path:
    """Predictions for every demo line: every third the ground truth, the others with
    characters dropped and one added (official layout)."""
    for conv in sorted(DEMO.glob("*/conv.jsonl")):
        folder = out / "demo-model" / conv.parent.name / "results"
        folder.mkdir(parents=True)
        for i, line in enumerate(conv.read_text(encoding="utf-8").splitlines()):
            row = json.loads(line)
            gt = row["human_gt"]
            answer = gt if i % 3 == 0 else gt[: max(0, len(gt) - 1 - i % 4)] + "乙"
            (folder / f"{Path(row['image']).stem}.json").write_text(
                json.dumps({"answer": answer}, ensure_ascii=False), encoding="utf-8")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", type=Path, default=None, metavar="DIR",
                    help="build the environment in DIR (must not exist) and keep it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="he-install-") as tmp:
        work = args.keep or Path(tmp)
        venv = work / "venv"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        py = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
        src = copy_checkout(work / "checkout")
        done = run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    str(src)])
        if done.returncode != 0:
            print(done.stdout + done.stderr)
            print("pip install heritage-eval (no extras) FAILED")
            return 1
        print(f"pip install heritage-eval (no extras): {time.perf_counter() - start:.0f} s")
        site = Path(run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()"
                         "['purelib'])"]).stdout.strip())
        sizes = distribution_sizes(site)
        own = sum(v for k, v in sizes.items() if k in VENV_OWN)
        package = sizes.get("heritage-eval", 0)
        deps = {k: v for k, v in sizes.items() if k not in VENV_OWN and k != "heritage-eval"}
        total = sum(deps.values())
        print(f"site-packages {tree_size(site) / MB:.1f} MB: dependencies {total / MB:.1f} MB "
              f"({len(deps)} entries), heritage-eval {package / MB:.1f} MB, the venv's own "
              f"pip/setuptools {own / MB:.1f} MB (not counted)")
        for name, size in sorted(deps.items(), key=lambda kv: -kv[1])[:10]:
            print(f"  {size / MB:7.1f} MB  {name}")
        verdict = "met" if total / MB < GOAL_MB else "NOT met"
        print(f"base install dependencies {total / MB:.1f} MB (goal < {GOAL_MB:.0f} MB: "
              f"{verdict})")
        return use(venv, work)


def use(venv: Path, work: Path) -> int:
    """Score the demo, view and compare the run, and try --model rapidocr, with the
    light environment's command; 0 when each behaves."""
    exe = venv / ("Scripts" if os.name == "nt" else "bin") / "heritage-eval"
    pred = write_predictions(work / "pred")
    out = work / "score"
    failed = 0
    steps = [("score ancient-bench", ["score", "ancient-bench", "--data", str(DEMO),
                                      "--predictions", str(pred), "--out", str(out)], 0),
             ("view", ["view", str(out)], 0),
             ("compare", ["compare", str(out), str(out), "--out", str(work / "cmp")], 0),
             ("run ancient-bench --model rapidocr", ["run", "ancient-bench", "--data",
                                                      str(DEMO), "--model", "rapidocr",
                                                      "--out", str(work / "ocr")], 2)]
    for label, argv, expected in steps:
        start = time.perf_counter()
        proc = run([str(exe), *argv], cwd=work)
        took = time.perf_counter() - start
        ok = proc.returncode == expected
        if label.startswith("run") and ok:
            ok = "pip install 'heritage-eval[ocr]'" in proc.stderr and not (work / "ocr").exists()
        failed += not ok
        print(f"{label}: exit {proc.returncode} in {took:.1f} s "
              f"({'as expected' if ok else f'FAILED, expected exit {expected}'})")
        if not ok:
            print(proc.stdout[-2000:] + proc.stderr[-2000:])
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8")) \
        if (out / "summary.json").is_file() else {}
    for res in summary.get("results", []):
        print(f"  demo scores: {res['model']} overall NED {100 * res['overall']['ned_score']:.2f}"
              f", F1 {100 * res['overall']['f1']:.2f}")
    print(f"light install: score, view, compare {'work' if not failed else 'FAILED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
