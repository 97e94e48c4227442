"""A whole run at scale: peak memory flat in dataset size, and the cached re-run.

Builds a synthetic Ancient-Bench release of N samples (small PNGs, nine media), runs
``heritage-eval run ancient-bench --model openai:bench`` as a subprocess against a
loopback OpenAI-compatible server (no latency), for N = 1,000 and N = 10,000, then runs the
N = 10,000 command again (every answer cached). Prints, in one run:

- peak RSS of each run (the child's own high-water mark, ``_child.run_measured``), and
  the ratio 10,000 / 1,000 — goal: flat, < 1.5 (the issue asks for "flat in dataset
  size"; samples.jsonl is streamed and only small facts are kept per sample);
- wall time of the cached 10,000-sample re-run (start-up included; the median of
  ``--reruns`` runs, the machine being shared) against scoring the same 10,000 answers
  from scratch in-process — issue 11 goal: < 3 s;
- requests the cached re-runs sent (must be 0).

Children run with a bytecode cache (``PYTHONPYCACHEPREFIX`` in the temporary folder,
filled by a 20-sample warm-up run), as an installed package has its ``.pyc`` files;
``--no-pyc`` runs them as this sandbox's ``PYTHONDONTWRITEBYTECODE`` does (every run
compiles the toolkit's modules again).

The runner streams (``core/runner.py`` ``stream_items``): samples are planned, sent,
scored and written one window at a time, and cached answers are read a few hundred keys
per SQLite query, so neither every conversation nor every result is held.

``--compare-src DIR`` (another checkout's ``src``, e.g. a ``git worktree`` of the commit
before a change) then re-runs the same cached N = 10,000 run with that code too, in turns
with this tree's: it prints whether ``samples.jsonl``, ``summary.json``, ``summary.md``
and ``tables/`` are byte-identical (the provenance values that differ between any two
runs — time, duration, command line, checkout — blanked) and the CPU ratio of the two
(medians of ``--reruns`` pairs; issue 23).

Usage: ``python bench/bench_run_scale.py [--small 1000] [--large 10000] [--reruns 3]
[--no-pyc] [--compare-src DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _child import run_measured

MEDIA = ["oracle_bone_artifacts", "bronze_rubbings", "bamboo_wooden_slips",
         "silk_manuscripts", "seals", "inscription_rubbings", "cliff_carvings",
         "traditional_chinese_book_editions", "calligraphys"]
ANSWER = {"id": "x", "object": "chat.completion",
          "choices": [{"index": 0, "finish_reason": "stop",
                       "message": {"role": "assistant", "content": "<res>天地玄黄</res>"}}],
          "usage": {"prompt_tokens": 10, "completion_tokens": 5}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    count = 0

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # pre-flight
        self._send(json.dumps({"object": "list", "data": [{"id": "bench"}]}).encode())

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        type(self).count += 1
        self._send(json.dumps(ANSWER).encode())


def make_release(root: Path, n: int) -> None:
    """N samples over the nine media; one 48 x 48 PNG per sample (distinct pixels)."""
    for i in range(n):
        medium = MEDIA[i % len(MEDIA)]
        folder = root / medium / "images"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{medium}_{i:06d}.png"
        img = Image.new("L", (48, 48), 255)
        img.putdata([((i >> (k % 20)) & 1) * 255 for k in range(48 * 48)])  # distinct
        img.save(folder / name)
        with (root / medium / "conv.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"image": name, "human_gt": "天地玄黃宇宙洪荒"},
                                ensure_ascii=False) + "\n")


def child_env(pycache: Path | None) -> dict[str, str]:
    """The children's environment: ``OPENAI_API_KEY`` set and — with ``pycache`` — a
    bytecode cache in that folder, as an installed package has (``pip install`` writes
    ``.pyc`` files; this sandbox sets ``PYTHONDONTWRITEBYTECODE``, which would make every
    run compile the toolkit's modules again, ~0.15 s)."""
    env = dict(os.environ, OPENAI_API_KEY="x")
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def run_cli(release: Path, out: Path, url: str, env: dict[str, str]
            ) -> tuple[float, int, float]:
    """(wall seconds, peak RSS in MiB, CPU seconds: user + system) of one CLI run as a
    child process; the peak is this child's own (``_child.run_measured``: not this
    benchmark's, which a plain ``fork`` would pass on). CPU time is the steadier figure
    on a shared machine (wall time waits for other processes too)."""
    cmd = [sys.executable, "-c", "import sys; from heritage_eval.cli.main import main; "
           "sys.exit(main())", "run", "ancient-bench", "--data", str(release),
           "--model", "openai:bench", "--base-url", url, "--out", str(out),
           "--concurrency", "32"]
    usage = run_measured(cmd, env)
    return usage.wall, int(usage.rss_mib), usage.cpu


def score_from_scratch(release: Path) -> float:
    """Seconds to score N answers in-process with the official normalisation (the
    reference a cached re-run is compared with)."""
    from heritage_eval.benchmarks.ancient_bench.normalize import PROTOCOLS
    from heritage_eval.benchmarks.ancient_bench.scoring import score_pair

    pairs = []
    for conv in release.glob("*/conv.jsonl"):
        for line in conv.read_text(encoding="utf-8").splitlines():
            pairs.append(("<res>天地玄黄</res>", json.loads(line)["human_gt"]))
    start = time.perf_counter()
    for pred, gt in pairs:
        score_pair(pred, gt, PROTOCOLS["official"])
    return time.perf_counter() - start


#: Provenance values that differ between any two runs of the same data (time, duration,
#: command line, checkout): blanked before two runs' outputs are compared.
_VOLATILE = re.compile(r'((?:created_utc|run_seconds|git_commit|command)"?:\s*)'
                       r'(?:"[^"]*"|`[^`]*`|null|[0-9.]+)')


def output_bytes(run: Path) -> dict[str, bytes]:
    """``samples.jsonl``, ``summary.json``, ``summary.md`` and ``tables/*`` of a run
    folder, by relative path; in the summaries the :data:`_VOLATILE` values blanked."""
    out = {}
    for path in sorted(run.rglob("*")):
        rel = path.relative_to(run).as_posix()
        if path.is_file() and (rel.startswith("tables/") or rel in (
                "samples.jsonl", "summary.json", "summary.md")):
            data = path.read_bytes()
            if rel.startswith("summary"):
                data = _VOLATILE.sub(lambda m: m.group(1) + "X",
                                     data.decode("utf-8")).encode("utf-8")
            out[rel] = data
    return out


def compare_src(src: Path, release: Path, out: Path, url: str, env: dict[str, str],
                pairs: int) -> None:
    """Re-run the cached run in ``out`` with the code under ``src`` and with this tree's,
    in turns (``pairs`` times): print whether the outputs are byte-identical
    (:func:`output_bytes`) and the CPU ratio, ``src`` over this tree (median)."""
    other_env = dict(env, PYTHONPATH=str(src.resolve()))
    ratios, theirs, ours = [], {}, {}
    for _ in range(max(1, pairs)):
        their_cpu = run_cli(release, out, url, other_env)[2]
        theirs = output_bytes(out)
        our_cpu = run_cli(release, out, url, env)[2]
        ours = output_bytes(out)
        ratios.append(their_cpu / our_cpu)
    differ = sorted(k for k in theirs.keys() | ours.keys() if theirs.get(k) != ours.get(k))
    print(f"outputs of {src} and of this tree: "
          + ("byte-identical" if not differ else "DIFFERENT: " + ", ".join(differ))
          + f" ({len(ours)} files); CPU {src} / this tree: "
          f"{statistics.median(ratios):.3f} (median of "
          f"{', '.join(f'{r:.3f}' for r in ratios)})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=1000)
    ap.add_argument("--large", type=int, default=10000)
    ap.add_argument("--reruns", type=int, default=3,
                    help="cached re-runs timed; the median is reported (default: 3)")
    ap.add_argument("--no-pyc", action="store_true",
                    help="run the children without a bytecode cache (as this sandbox's "
                         "PYTHONDONTWRITEBYTECODE has it): every run compiles the "
                         "toolkit's modules")
    ap.add_argument("--compare-src", type=Path, default=None, metavar="DIR",
                    help="another checkout's src folder: re-run the cached run with it "
                         "too, check the outputs are byte-identical and compare CPU")
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    with tempfile.TemporaryDirectory() as tmp:
        env = child_env(None if args.no_pyc else Path(tmp) / "pycache")
        make_release(Path(tmp) / "release-warmup", 20)  # fills the bytecode cache
        run_cli(Path(tmp) / "release-warmup", Path(tmp) / "run-warmup", url, env)
        print("children run with " + ("no bytecode cache (--no-pyc)" if args.no_pyc else
                                      "a bytecode cache, as an installed package"))
        peaks = {}
        for n in (args.small, args.large):
            release = Path(tmp) / f"release-{n}"
            make_release(release, n)
            wall, peak, _ = run_cli(release, Path(tmp) / f"run-{n}", url, env)
            peaks[n] = peak
            print(f"N={n:>6}: first run {wall:6.1f} s, peak RSS {peak} MiB "
                  f"({_Handler.count} requests so far)")
        sent = _Handler.count
        reruns = [run_cli(Path(tmp) / f"release-{args.large}", Path(tmp) / f"run-{args.large}",
                          url, env) for _ in range(max(1, args.reruns))]
        walls = [r[0] for r in reruns]
        wall = statistics.median(walls)
        cpu = statistics.median(r[2] for r in reruns)
        ref = score_from_scratch(Path(tmp) / f"release-{args.large}")
        ratio = peaks[args.large] / max(1, peaks[args.small])
        print(f"peak RSS ratio {args.large}/{args.small}: {ratio:.2f} "
              f"(data x{args.large / args.small:.0f}; goal: flat, < 1.5: "
              f"{'met' if ratio < 1.5 else 'NOT met'})")
        resent = _Handler.count - sent
        print(f"cached re-run of N={args.large}: {wall:.2f} s wall (median of "
              f"{', '.join(f'{w:.2f}' for w in walls)}; CPU {cpu:.2f} s, "
              f"{cpu / args.large * 1e6:.0f} µs a sample all included; load average "
              f"{os.getloadavg()[0]:.1f}), start-up included, "
              f"{resent} requests sent (goal < 3 s, 0 requests: "
              f"{'met' if wall < 3 and resent == 0 else 'NOT met'}); scoring the "
              f"same answers from scratch in-process: {ref:.2f} s (ratio {wall / ref:.1f})")
        if args.compare_src is not None:
            compare_src(args.compare_src, Path(tmp) / f"release-{args.large}",
                        Path(tmp) / f"run-{args.large}", url, env, args.reruns)
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
