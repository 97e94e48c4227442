#!/usr/bin/env python3
"""GPU check of the ``hf:`` backend (issue 9): harness throughput vs a bare generate loop.

    python scripts/gpu_check.py            # LLaVA-1.5-7B dimensions, random weights, GPU
    python scripts/gpu_check.py --tiny     # the tiny test model on CPU (a smoke test)

Steps (each timed and printed):

1. Build a randomly initialised model of a real VLM architecture from its config, with no
   download: LLaVA-1.5-7B dimensions (CLIP ViT-L/14 at 336 px, 576 image tokens, a GELU
   projector, a 32-layer Llama of width 4096, vocabulary 32064), bfloat16, initialised on
   the GPU and saved as a local checkpoint folder with a small ``tokenizers`` BPE and the
   processor files (``scripts/make_tiny_vlm.py`` provides tokenizer and chat template).
   ``--tiny`` uses the tiny LLaVA of that script instead.
2. Make ``--samples`` requests from the Ancient-Bench demo images with their
   transcription prompts (cycled; each prompt ends with its sample number, so no two
   requests are equal and none is answered from the cache).
3. Harness: :func:`heritage_eval.core.runner.run_items` with the ``hf:`` backend loaded
   from that folder (batching loop, worker threads, SQLite cache written per answer).
4. Bare loop: the same requests in batches of the same size, preprocessed beforehand
   (untimed), then only ``model.generate`` timed back to back on the same model.
5. Print requests/s of both, the ratio (goal >= 0.80) and the peak GPU memory
   (``torch.cuda.max_memory_allocated``) of each phase; write them to
   ``$OUT/gpu_check.json`` when ``$OUT`` is set (else ``--json``).

Runs in well under five minutes on one H200 (model build + save + load ~1 min, each pass
~10-30 s). Needs torch, transformers, tokenizers, safetensors, Pillow, pydantic and tqdm;
never the network. Exit status 0 when every request was answered, 1 otherwise (the
ratio goal is reported, not enforced).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "scripts"))

#: LLaVA-1.5-7B (llava-hf/llava-1.5-7b-hf) dimensions, written out: no download.
LLAVA_7B_VISION = {"model_type": "clip_vision_model", "hidden_size": 1024,
                   "intermediate_size": 4096, "num_hidden_layers": 24,
                   "num_attention_heads": 16, "image_size": 336, "patch_size": 14,
                   "projection_dim": 768, "hidden_act": "quick_gelu", "layer_norm_eps": 1e-5}
LLAVA_7B_TEXT = {"model_type": "llama", "vocab_size": 32064, "hidden_size": 4096,
                 "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
                 "num_key_value_heads": 32, "max_position_embeddings": 4096,
                 "rms_norm_eps": 1e-5, "rope_theta": 10000.0}


def _t(label: str, start: float) -> float:
    now = time.perf_counter()
    print(f"  {label}: {now - start:.1f} s", flush=True)
    return now


def build_llava_7b(out: Path, layers: int | None) -> Path:
    """Save a random LLaVA-1.5-7B-sized checkpoint to ``out`` (bfloat16, built on GPU)."""
    import torch
    from transformers import AutoModelForImageTextToText, LlavaConfig, LlavaProcessor
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    tiny = importlib.import_module("make_tiny_vlm")
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = tiny.build_tokenizer(0, 4096)
    ids = {t: int(tokenizer.convert_tokens_to_ids(t)) for t in tiny.SPECIAL_TOKENS}
    ip = CLIPImageProcessorPil(size={"shortest_edge": 336},
                               crop_size={"height": 336, "width": 336})
    LlavaProcessor(image_processor=ip, tokenizer=tokenizer, patch_size=14,
                   vision_feature_select_strategy="default", num_additional_image_tokens=1,
                   chat_template=tiny.CHAT_TEMPLATE).save_pretrained(out)
    text = dict(LLAVA_7B_TEXT, bos_token_id=ids["<s>"], eos_token_id=ids["</s>"],
                pad_token_id=ids["<pad>"])
    if layers:
        text["num_hidden_layers"] = layers
    config = LlavaConfig(vision_config=LLAVA_7B_VISION, text_config=text,
                         image_token_index=ids["<image>"], image_seq_length=576,
                         vision_feature_select_strategy="default", vision_feature_layer=-2,
                         projector_hidden_act="gelu", tie_word_embeddings=False)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = AutoModelForImageTextToText.from_config(config, dtype=torch.bfloat16)
    n = sum(p.numel() for p in model.parameters())
    print(f"  parameters: {n / 1e9:.2f} B", flush=True)
    model.generation_config.eos_token_id = ids["</s>"]
    model.generation_config.pad_token_id = ids["<pad>"]
    model.save_pretrained(out, max_shard_size="5GB")
    del model
    torch.cuda.empty_cache()
    return out


def make_items(n: int) -> list[Any]:
    """``n`` distinct one-turn Ancient-Bench requests over the demo images."""
    from heritage_eval.benchmarks.ancient_bench.prompts import PromptSet
    from heritage_eval.core.runner import RunItem
    from heritage_eval.core.types import Conversation, ImagePart, Message

    images = sorted((REPO / "data" / "demo" / "ancient_bench").glob("*/images/*.jpg"))
    if not images:
        raise SystemExit("no demo images under data/demo/ancient_bench")
    prompts = PromptSet()
    items = []
    for i in range(n):
        img = images[i % len(images)]
        text = f"{prompts.prompt(img.parent.parent.name)}\n(Sample {i}.)"
        items.append(RunItem(str(i), Conversation(turns=(Message.user(
            ImagePart(path=str(img)), text),))))
    return items


def peak_gib(device: str) -> float | None:
    import torch

    if not device.startswith("cuda"):
        return None
    torch.cuda.synchronize()
    return round(torch.cuda.max_memory_allocated() / 2**30, 2)


def reset_peak(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()


def bare_loop(backend: Any, items: list[Any], batch: int, settings: Any) -> tuple[float, int]:
    """Seconds of back-to-back ``model.generate`` on pre-made batches; new tokens made."""
    import torch
    from transformers import GenerationConfig

    from heritage_eval.core.images import load_image
    from heritage_eval.models import hf_model

    lm = backend.load()
    batches = []
    for i in range(0, len(items), batch):
        chunk = items[i:i + batch]
        convs = [list(it.conversation.turns) for it in chunk]
        imgs = [[load_image(p.path, p.page, backend.cap) for m in c for p in m.images()]
                for c in convs]
        batches.append(hf_model.prepare_batch(lm, convs, imgs))
    gen = GenerationConfig(max_new_tokens=settings.max_tokens, do_sample=False,
                           pad_token_id=lm.pad_id, eos_token_id=sorted(lm.eos_ids))
    tokens = 0
    if lm.device.startswith("cuda"):
        torch.cuda.synchronize()
    start = time.perf_counter()
    with torch.inference_mode():
        for inputs in batches:
            out = lm.model.generate(**inputs, generation_config=gen)
            tokens += (out.shape[1] - inputs["input_ids"].shape[1]) * out.shape[0]
    if lm.device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - start, tokens


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--tiny", action="store_true", help="tiny model on CPU (smoke test)")
    p.add_argument("--samples", type=int, default=None, help="requests (default 256; 24 tiny)")
    p.add_argument("--batch-size", type=int, default=None, help="default 32 (4 with --tiny)")
    p.add_argument("--tokens", type=int, default=None, help="new tokens (default 64; 8 tiny)")
    p.add_argument("--layers", type=int, default=None, help="override the 32 text layers")
    p.add_argument("--model-dir", type=Path, default=None, help="keep the checkpoint here")
    p.add_argument("--json", type=Path, default=None, help="results file (default $OUT/…)")
    args = p.parse_args(argv)
    samples = args.samples or (24 if args.tiny else 256)
    batch = args.batch_size or (4 if args.tiny else 32)
    tokens = args.tokens or (8 if args.tiny else 64)

    import torch
    import transformers

    device = "cpu" if args.tiny else "cuda"
    if device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no CUDA GPU visible to torch (use --tiny for the CPU smoke test)")
    gpu = torch.cuda.get_device_name(0) if device == "cuda" else "none"
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, GPU: {gpu}")
    import heritage_eval.models.hf_backend  # noqa: F401  (registers hf: if not built in)
    from heritage_eval.core.cache import ResponseCache
    from heritage_eval.core.runner import run_items
    from heritage_eval.core.types import GenerationSettings
    from heritage_eval.models.base import BackendOptions, create_backend

    tmp = tempfile.TemporaryDirectory(prefix="gpu-check-")
    folder = args.model_dir or Path(tmp.name) / "model"
    start = time.perf_counter()
    print("build model:", flush=True)
    if args.tiny:
        importlib.import_module("make_tiny_vlm").build(folder)
    else:
        build_llava_7b(folder, args.layers)
    start = _t("built and saved", start)
    extra = {"device": device, "batch_size": str(batch),
             "dtype": "float32" if args.tiny else "bfloat16"}
    backend = create_backend(f"hf:{folder}", BackendOptions(extra=extra))
    backend.load()  # type: ignore[attr-defined]
    start = _t("loaded from the folder by the hf backend", start)
    settings = GenerationSettings(max_tokens=tokens)
    items = make_items(samples)
    warm = make_items(batch)
    run_items(warm, backend, settings, None, desc="warm-up")
    bare_loop(backend, warm, batch, settings)
    start = _t("warm-up", start)

    reset_peak(device)
    bare_s, bare_tokens = bare_loop(backend, items, batch, settings)
    bare_mem = peak_gib(device)
    reset_peak(device)
    sizes_before = len(backend.batch_sizes)  # type: ignore[attr-defined]
    with ResponseCache(Path(tmp.name) / "cache.sqlite") as cache:
        t0 = time.perf_counter()
        res = run_items(items, backend, settings, cache, desc="harness")
        harness_s = time.perf_counter() - t0
        cached = len(cache)
    harness_mem = peak_gib(device)
    sizes = backend.batch_sizes[sizes_before:]  # type: ignore[attr-defined]
    errors = [r.error for r in res.values() if r.error]
    new_tokens = sum(r.responses[0].usage.completion_tokens or 0 for r in res.values()
                     if r.responses and r.responses[0].ok)
    result = {
        "model": "tiny-llava" if args.tiny else "llava-1.5-7b-random",
        "gpu": gpu, "samples": samples, "batch_size": batch, "max_new_tokens": tokens,
        "bare_s": round(bare_s, 2), "bare_req_per_s": round(samples / bare_s, 2),
        "bare_new_tokens": bare_tokens, "harness_s": round(harness_s, 2),
        "harness_req_per_s": round(samples / harness_s, 2), "harness_new_tokens": new_tokens,
        "ratio": round(bare_s / harness_s, 3), "goal_ratio": 0.8,
        "harness_batch_sizes": {str(k): sizes.count(k) for k in sorted(set(sizes))},
        "errors": len(errors), "first_error": errors[0] if errors else None,
        "cached_answers": cached, "peak_gpu_gib_bare": bare_mem,
        "peak_gpu_gib_harness": harness_mem,
    }
    print(f"bare generate loop: {samples} requests in {bare_s:.2f} s = "
          f"{samples / bare_s:.2f} req/s ({bare_tokens} new tokens)")
    print(f"hf: harness:        {samples} requests in {harness_s:.2f} s = "
          f"{samples / harness_s:.2f} req/s ({new_tokens} new tokens; batches "
          f"{result['harness_batch_sizes']}; {len(errors)} errors; {cached} cached)")
    verdict = "met" if result["ratio"] >= 0.8 else "NOT met"
    print(f"harness / bare throughput: {result['ratio']:.1%} (goal >= 80 %: {verdict})")
    if device == "cuda":
        print(f"peak GPU memory: bare {bare_mem} GiB, harness {harness_mem} GiB")
    target = args.json or (Path(os.environ["OUT"]) / "gpu_check.json" if os.environ.get("OUT")
                           else None)
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"results written to {target}")
    tmp.cleanup()
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
