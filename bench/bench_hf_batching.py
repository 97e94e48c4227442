"""``hf:`` backend: batched vs one sample at a time, on the tiny random LLaVA (issue 9).

Builds the tiny model of ``scripts/make_tiny_vlm.py`` in a temporary folder, then sends
the same 64 requests (an Ancient-Bench demo image and its transcription prompt each, 16
new tokens, greedy) through the real run path — :func:`heritage_eval.core.runner.run_items`
with the ``hf`` backend on CPU — once with ``batch_size=8`` and once with
``batch_size=1``, and prints requests/s of each and the speed-up. The model is loaded and
warmed up before timing. Also checks that both give the same answers (greedy decoding).
Runtime well under a minute on two cores.

Usage: ``python bench/bench_hf_batching.py [--requests 64] [--batch-size 8] [--tokens 16]``
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--requests", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--tokens", type=int, default=16, help="new tokens per answer")
    args = p.parse_args()

    sys.path.insert(0, str(REPO / "scripts"))
    make_tiny_vlm = importlib.import_module("make_tiny_vlm")
    import heritage_eval.models.hf_backend  # noqa: F401  (registers hf:)
    from heritage_eval.benchmarks.ancient_bench.prompts import PromptSet
    from heritage_eval.core.runner import RunItem, run_items
    from heritage_eval.core.types import Conversation, GenerationSettings, ImagePart, Message
    from heritage_eval.models.base import BackendOptions, create_backend

    images = sorted((REPO / "data" / "demo" / "ancient_bench").glob("*/images/*.jpg"))
    items = []
    for i in range(args.requests):
        img = images[i % len(images)]
        text = PromptSet().prompt(img.parent.parent.name)
        items.append(RunItem(str(i), Conversation(turns=(Message.user(
            ImagePart(path=str(img)), text),))))
    settings = GenerationSettings(max_tokens=args.tokens)

    with tempfile.TemporaryDirectory() as tmp:
        model = make_tiny_vlm.build(Path(tmp) / "tiny")
        rates: dict[int, float] = {}
        answers: dict[int, list[str | None]] = {}
        for bs in (args.batch_size, 1):
            backend = create_backend(f"hf:{model}", BackendOptions(
                extra={"device": "cpu", "batch_size": str(bs)}))
            run_items(items[:bs], backend, settings, None, desc=f"warm-up bs={bs}")
            start = time.perf_counter()
            res = run_items(items, backend, settings, None, desc=f"batch_size={bs}")
            elapsed = time.perf_counter() - start
            rates[bs] = len(items) / elapsed
            answers[bs] = [r.responses[0].text for r in res.values()]
            errors = sum(1 for r in res.values() if r.error)
            sizes = getattr(backend, "batch_sizes", [])[-8:]
            print(f"batch_size={bs}: {len(items)} requests in {elapsed:.2f} s = "
                  f"{rates[bs]:.1f} req/s ({errors} errors; last batch sizes {sizes})")
    speedup = rates[args.batch_size] / rates[1]
    same = answers[args.batch_size] == answers[1]
    print(f"speed-up batched (batch_size={args.batch_size}) vs one at a time: {speedup:.2f}x; "
          f"same answers: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
