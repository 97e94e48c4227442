"""The torch side of the ``hf:`` backend: folder checks, fingerprints, loading, one batch.

Nothing here imports torch or transformers at module import time: :func:`load_model`
does, on first use, so ``heritage-eval --help`` stays fast. :func:`check_folder` and the
fingerprints read files only. :mod:`heritage_eval.models.hf_backend` gathers requests into
batches and calls :func:`prepare_batch` and :func:`generate_batch` from worker threads.
"""

from __future__ import annotations

import hashlib
import struct
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heritage_eval.core.types import GenerationSettings, ImagePart, Message, TextPart
from heritage_eval.models.base import ModelSpecError

if TYPE_CHECKING:
    from PIL import Image

#: Bytes read from the start and from the end of each weights file for its fingerprint.
SAMPLE_BYTES = 1 << 20
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
DTYPES = ("auto", "float32", "bfloat16", "float16")


def check_folder(path: Path) -> list[Path]:
    """The weights files of the local checkpoint folder ``path`` (sorted).

    Raises :class:`ModelSpecError` naming the path when the folder, its ``config.json`` or
    any weights file (``*.safetensors``, ``pytorch_model*.bin``) is missing. Never
    downloads: a hub id such as ``Qwen/Qwen2-VL-2B-Instruct`` is refused unless it is
    also an existing local folder.
    """
    if not path.is_dir():
        raise ModelSpecError(f"hf: model folder not found: {path} (the hf backend loads local "
                             "folders only and never downloads; download the checkpoint "
                             "first, e.g. with `huggingface-cli download … --local-dir DIR`)")
    if not (path / "config.json").is_file():
        raise ModelSpecError(f"hf: {path} has no config.json: not a transformers checkpoint")
    weights = sorted(p for p in path.iterdir()
                     if p.is_file() and p.suffix in WEIGHT_SUFFIXES and "optimizer" not in p.name)
    if not weights:
        raise ModelSpecError(f"hf: no weights in {path} (expected model.safetensors, "
                             "model-0000N-of-0000M.safetensors or pytorch_model.bin)")
    return weights


def config_fingerprint(path: Path) -> str:
    """SHA-256 (hex) of the folder's ``config.json`` bytes."""
    return hashlib.sha256((path / "config.json").read_bytes()).hexdigest()


def weights_fingerprint(weights: list[Path]) -> str:
    """SHA-256 (hex) identifying the weights without reading them all.

    For each file (sorted by name): its name and size; for safetensors its JSON header
    (tensor names, dtypes, shapes, offsets); then the first and last :data:`SAMPLE_BYTES`
    bytes of data. A retrained, re-initialised or re-quantised checkpoint changes it; a
    copy or move of the folder does not. Reads ~2 MiB per file (once per backend).
    """
    h = hashlib.sha256()
    for w in weights:
        size = w.stat().st_size
        h.update(f"{w.name}\0{size}\0".encode())
        with w.open("rb") as f:
            start = 0
            if w.suffix == ".safetensors" and size >= 8:
                (n,) = struct.unpack("<Q", f.read(8))
                h.update(f.read(min(n, size - 8)))
                start = 8 + n
            f.seek(start)
            h.update(f.read(SAMPLE_BYTES))
            if size - start > 2 * SAMPLE_BYTES:
                f.seek(size - SAMPLE_BYTES)
            h.update(f.read(SAMPLE_BYTES))
    index = next(iter(sorted(weights[0].parent.glob("*.index.json"))), None)
    if index is not None:
        h.update(index.read_bytes())
    return h.hexdigest()


@dataclass
class LoadOptions:
    """How to load a checkpoint. ``device``: ``cpu``, ``cuda``, ``cuda:N`` or ``auto``
    (cuda when available). ``dtype``: one of :data:`DTYPES` (``auto``: bfloat16 on a GPU
    that supports it, else float32). ``max_pixels``: cap on pixels per image handed to the
    image processor (``None``: the processor's own). ``attn_implementation``: passed to
    ``from_pretrained`` (``eager``, ``sdpa``, ``flash_attention_2`` …; ``None``: default)."""

    device: str = "auto"
    dtype: str = "auto"
    max_pixels: int | None = None
    attn_implementation: str | None = None
    trust_remote_code: bool = False


@dataclass
class LoadedModel:
    """A loaded model with its processor. ``eos_ids``: token ids that end an answer."""

    model: Any
    processor: Any
    device: str
    dtype: Any
    eos_ids: set[int] = field(default_factory=set)
    pad_id: int | None = None


_QUIET_LOCK = threading.Lock()


def quiet_transformers() -> None:
    """Silence transformers' progress bars ("Loading weights") and info/warning logs."""
    with _QUIET_LOCK:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        try:
            from huggingface_hub.utils import disable_progress_bars
            disable_progress_bars()
        except ImportError:  # pragma: no cover - old huggingface_hub
            pass


def load_model(path: Path, opts: LoadOptions) -> LoadedModel:
    """Load processor and model from the local folder ``path`` (``local_files_only``).

    Raises ``ModelSpecError`` (``cuda`` requested without a GPU) and whatever transformers
    raises for a broken checkpoint (e.g. ``ImportError`` when the processor needs
    torchvision); the backend turns those into per-request errors naming the path.
    """
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    quiet_transformers()
    device = opts.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ModelSpecError(f"hf: device={opts.device} but torch sees no CUDA GPU")
    if opts.dtype == "auto":
        dtype = (torch.bfloat16 if device.startswith("cuda") and torch.cuda.is_bf16_supported()
                 else torch.float32)
    else:
        dtype = getattr(torch, opts.dtype)
    processor = AutoProcessor.from_pretrained(path, local_files_only=True,
                                              trust_remote_code=opts.trust_remote_code)
    kwargs: dict[str, Any] = {"dtype": dtype, "local_files_only": True,
                              "trust_remote_code": opts.trust_remote_code}
    if opts.attn_implementation:
        kwargs["attn_implementation"] = opts.attn_implementation
    model: Any = AutoModelForImageTextToText.from_pretrained(path, **kwargs)
    model.to(device).eval()
    tokenizer = getattr(processor, "tokenizer", processor)
    if not getattr(model.config, "is_encoder_decoder", False):
        tokenizer.padding_side = "left"  # decoder-only: new tokens follow the prompt
    if tokenizer.pad_token_id is None and tokenizer.eos_token_id is not None:
        tokenizer.pad_token = tokenizer.eos_token
    if opts.max_pixels is not None:
        _cap_processor_pixels(processor, opts.max_pixels)
    eos = model.generation_config.eos_token_id
    eos_ids = {int(e) for e in (eos if isinstance(eos, list) else [eos]) if e is not None}
    if tokenizer.eos_token_id is not None:
        eos_ids.add(int(tokenizer.eos_token_id))
    return LoadedModel(model=model, processor=processor, device=device, dtype=dtype,
                       eos_ids=eos_ids, pad_id=tokenizer.pad_token_id)


def _cap_processor_pixels(processor: Any, max_pixels: int) -> None:
    """Lower the image processor's own pixel budget (Qwen2-VL style ``max_pixels`` /
    ``size["longest_edge"]``) so the number of visual tokens follows ``max_pixels``."""
    ip = getattr(processor, "image_processor", None)
    if ip is None:
        return
    if hasattr(ip, "max_pixels"):
        ip.max_pixels = max_pixels
    size = getattr(ip, "size", None)
    if isinstance(size, dict) and "longest_edge" in size and "shortest_edge" in size \
            and size["shortest_edge"] > 10_000:  # a pixel budget, not an edge length
        size["longest_edge"] = max_pixels


def chat_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages in the Hugging Face chat-template form: ``{"role", "content": [{"type":
    "image"} | {"type": "text", "text"}]}``; images are passed separately, in order."""
    out = []
    for m in messages:
        parts: list[dict[str, Any]] = []
        for p in m.content:
            if isinstance(p, ImagePart):
                parts.append({"type": "image"})
            elif isinstance(p, TextPart):
                parts.append({"type": "text", "text": p.text})
        out.append({"role": m.role, "content": parts})
    return out


def prepare_batch(lm: LoadedModel, conversations: list[list[Message]],
                  images: list[list[Image.Image]]) -> Any:
    """Chat-template, tokenise and preprocess a batch (left padded); returns the
    processor's ``BatchFeature`` on the model's device (floating tensors in its dtype):
    ``input_ids`` / ``attention_mask`` of shape [B, T] plus the model's image tensors."""
    texts = [lm.processor.apply_chat_template(chat_messages(c), tokenize=False,
                                              add_generation_prompt=True)
             for c in conversations]
    flat = [img for imgs in images for img in imgs]
    inputs = lm.processor(text=texts, images=flat or None, padding=True, return_tensors="pt")
    return inputs.to(lm.device).to(lm.dtype)


@dataclass
class Generated:
    """One row of a batch's output. Token counts exclude padding; ``finish_reason`` is
    ``"stop"`` (an end token was produced) or ``"length"`` (``max_new_tokens`` reached)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str


def generate_batch(lm: LoadedModel, inputs: Any, settings: GenerationSettings) -> list[Generated]:
    """One ``model.generate`` call on prepared ``inputs`` (shape [B, T]).

    Greedy when ``settings.temperature == 0`` (``do_sample=False``), else sampling with
    ``temperature`` / ``top_p``; ``settings.seed`` seeds torch before the call (so a
    sampled answer is reproducible only for the same batch composition). Raises what
    torch raises (e.g. ``torch.cuda.OutOfMemoryError``).
    """
    import torch

    gen = lm.model.generation_config.to_dict()
    gen.update(max_new_tokens=settings.max_tokens, pad_token_id=lm.pad_id)
    if settings.temperature > 0:
        gen.update(do_sample=True, temperature=settings.temperature, top_p=settings.top_p)
    else:
        gen.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    if settings.seed is not None:
        torch.manual_seed(settings.seed)
    from transformers import GenerationConfig

    config = GenerationConfig(**{k: v for k, v in gen.items() if not k.startswith("_")})
    with torch.inference_mode():
        out = lm.model.generate(**inputs, generation_config=config)
    prompt_len = inputs["input_ids"].shape[1]
    new = out[:, prompt_len:].tolist()
    prompt_counts = inputs["attention_mask"].sum(dim=1).tolist()
    rows = []
    for tokens, n_prompt in zip(new, prompt_counts, strict=True):
        stop = next((i for i, t in enumerate(tokens) if t in lm.eos_ids), None)
        kept = tokens if stop is None else tokens[:stop]
        text = lm.processor.decode(kept, skip_special_tokens=True)
        rows.append(Generated(text=text.strip(), prompt_tokens=int(n_prompt),
                              completion_tokens=len(tokens) if stop is None else stop + 1,
                              finish_reason="length" if stop is None else "stop"))
    return rows


def is_out_of_memory(exc: BaseException) -> bool:
    """True for a CUDA (or other accelerator) out-of-memory error."""
    return type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower()


def describe_load_error(path: Path, exc: BaseException) -> str:
    """A one-line reason naming the folder, with a hint for the usual causes."""
    hint = ""
    text = str(exc)
    if isinstance(exc, ImportError) and "torchvision" in text.lower():
        hint = " (this model's processor needs torchvision: pip install torchvision)"
    elif "trust_remote_code" in text:
        hint = " (the checkpoint ships its own code: --model-option trust_remote_code=true)"
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return f"cannot load model {path}: {type(exc).__name__}: {first}{hint}"
