"""``bench:echo`` — an offline stand-in model for the scale benchmarks, and the child's
entry point that registers it before running the ``heritage-eval`` command line.

The model answers every turn at once, without opening the image: one of the offered
option labels when the turn offers some (the ``baseline:random`` rule: a generator
seeded from the sample id and the turn), otherwise one of a few fixed texts
(:data:`ANSWERS`, picked by a CRC of the sample id and turn; a transcription, a style
description or an open answer, so that the benchmark's text scorers run on non-empty
answers). It reads the payload (``reads_payload``), so every sample has its own cache
key — as with a real model and distinct images — although the synthetic samples share a
pool of image files. ``--model-option tasks=NAME,...`` declares the benchmark tasks it
supports (HCSU refuses a payload-reading backend that declares none).

Why not the loopback server of ``bench_run_scale.py``: an OpenAI-compatible backend
decodes, resizes and re-encodes every image it sends (tens of milliseconds for a
2,000 px image), which at 100,000 samples is most of an hour on its own and measures the
image encoder, not the run's memory or streaming.

Used as ``python bench/_bench_model.py run BENCH ... --model bench:echo``. With
``HE_BENCH_PEAK_FILE=PATH`` in the environment it also writes the process's peak RSS as
it stood when the run finished and the command began printing (KiB, to ``PATH``):
``bench_stream_scale.py`` prints it beside the whole process's peak, so that memory the
printing adds (e.g. reading every record back) shows as such.
"""

from __future__ import annotations

import random
import sys
import zlib
from typing import Any

from heritage_eval.core.backends import BackendOptions, ModelBackend, register_backend
from heritage_eval.core.types import GenerationSettings, Message, Response, stable_hash

#: Texts answered to turns without options (Chinese transcriptions, English
#: descriptions): varied, so a per-text cache in a scorer cannot make the run trivial.
ANSWERS = ("天地玄黄宇宙洪荒日月盈昃辰宿列张",
           "永和九年岁在癸丑暮春之初会于会稽山阴之兰亭",
           "Compact upright characters with firm, square stroke entries and dense ink.",
           "Flowing cursive strokes joined in one movement, with dry-brush trails.",
           "The woman smiles because the child has brought her a basket of fruit.",
           "学而时习之不亦说乎有朋自远方来")


class EchoModel(ModelBackend):
    """Options offered: a seeded choice among them; none: one of :data:`ANSWERS`."""

    backend = "bench"
    reads_payload = True
    max_concurrency = 64

    def __init__(self, name: str, options: BackendOptions) -> None:
        self.model_id = name or "echo"
        tasks = options.extra.get("tasks")
        self.supported_tasks: tuple[str, ...] | None = (
            tuple(t for t in tasks.split(",") if t) if tasks else None)

    def identity(self) -> dict[str, Any]:
        return {"backend": self.backend, "model": self.model_id}

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        turn = int(payload.get("turn", 0))
        options = payload.get("options")
        if isinstance(options, dict):
            options = options.get(str(turn), options.get(turn))
        sample = str(payload.get("sample_id", ""))
        if options:
            rng = random.Random(int(stable_hash([sample, turn]), 16))
            return Response(text=str(rng.choice(list(options))))
        return Response(text=ANSWERS[zlib.crc32(f"{sample}#{turn}".encode()) % len(ANSWERS)])


register_backend("bench", lambda name, options: EchoModel(name, options),
                 "(benchmarks only) offline stand-in: an option, else a fixed text",
                 option_keys={"tasks": "comma-separated benchmark tasks it declares"})


def _peak_kib() -> int:
    """This process's peak resident memory so far (``VmHWM``), KiB; 0 where unknown."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith("VmHWM")), 0)
    except OSError:
        return 0


def record_peak_before_report(path: str) -> None:
    """Write this process's peak RSS (KiB) to ``path`` when the run is done and the
    command starts printing it (``cliargs.run_report.print_outcome``): the memory of the
    run itself, apart from what printing adds. Nothing happens where that function is
    not found (the figure is then missing, the run unchanged)."""
    try:
        from heritage_eval.cliargs import run_report
    except ImportError:
        return
    original = getattr(run_report, "print_outcome", None)
    if original is None:
        return

    def print_outcome(*args: Any, **kwargs: Any) -> Any:
        with open(path, "w", encoding="ascii") as fh:
            fh.write(str(_peak_kib()))
        return original(*args, **kwargs)

    run_report.print_outcome = print_outcome


if __name__ == "__main__":
    import os

    from heritage_eval.cli.main import main

    if os.environ.get("HE_BENCH_PEAK_FILE"):
        record_peak_before_report(os.environ["HE_BENCH_PEAK_FILE"])
    sys.exit(main(sys.argv[1:]))
