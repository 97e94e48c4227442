#!/usr/bin/env python3
"""Build a tiny, randomly initialised LLaVA model folder for tests (no download).

    python scripts/make_tiny_vlm.py OUT_DIR [--seed 0] [--vocab-size 1024]

The folder is a complete local Hugging Face checkpoint that ``AutoProcessor`` and
``AutoModelForImageTextToText`` load with ``local_files_only=True``:

- ``config.json`` (LLaVA-1.5 layout: a 2-layer CLIP vision tower of width 32 on 56 x 56 px
  images, i.e. 16 image tokens, a GELU projector and a 2-layer Llama of width 64),
  ``generation_config.json`` and ``model.safetensors`` (random weights, seeded);
- ``tokenizer.json`` + ``tokenizer_config.json``: a byte-level BPE trained with
  ``tokenizers`` on a few hundred lines this script writes (English, Chinese, digits,
  option letters), plus ``<pad>``, ``<s>``, ``</s>`` and the image placeholder ``<image>``;
- ``preprocessor_config.json`` (CLIP image processor, PIL backend: no torchvision needed),
  ``processor_config.json`` and ``chat_template.jinja`` (the LLaVA-1.5 ``USER: … ASSISTANT:``
  format).

LLaVA is chosen because its processor needs no video processor (Qwen2-VL's needs
torchvision, which the CPU test environment does not have) and because batched, left-padded
generation is well supported for it.

Total size is about 1 MB; greedy generation of 8 tokens takes milliseconds on CPU. The
same ``--seed`` gives byte-identical weights; another seed gives other weights (tests use
that to check that the backend's identity follows the weights). The answers are random
text, which is the point: tests check the plumbing, not the quality.

The design follows how transformers tests its own models (a tiny config, random init);
no code is taken from there.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

#: Special tokens of the chat format and the image placeholder, in id order.
SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<image>"]

#: The LLaVA-1.5 conversation format ("USER: <image>\n... ASSISTANT: ...</s>").
CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- if message['content'] is string -%}{%- set parts = [{'type': 'text', "
    "'text': message['content']}] -%}{%- else -%}{%- set parts = message['content'] -%}"
    "{%- endif -%}"
    "{%- if message['role'] == 'system' -%}"
    "{%- for part in parts -%}{{ part['text'] + '\\n' }}{%- endfor -%}"
    "{%- else -%}{{ message['role'] | upper + ': ' }}"
    "{%- for part in parts -%}"
    "{%- if part['type'] == 'image' -%}{{ '<image>\\n' }}"
    "{%- elif part['type'] == 'text' -%}{{ part['text'] }}"
    "{%- endif -%}{%- endfor -%}"
    "{%- if message['role'] == 'assistant' -%}{{ '</s>' }}{%- endif -%}{{ '\\n' }}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ 'ASSISTANT:' }}{%- endif -%}"
)

_WORDS = ["the", "answer", "is", "option", "letter", "style", "script", "stele", "rubbing",
          "calligraphy", "seal", "bronze", "oracle", "bone", "silk", "slip", "woodblock",
          "painting", "artwork", "color", "count", "region", "emotion", "culture", "question",
          "image", "describe", "which", "one", "true", "false", "yes", "no", "regular",
          "running", "cursive", "clerical", "archaic"]
_HANZI = ("天地玄黃宇宙洪荒日月盈昃辰宿列張寒來暑往秋收冬藏"
          "閏餘成歲律呂調陽雲騰致雨露結為霜金生麗水玉出崑岡")


def corpus(seed: int, lines: int = 400) -> list[str]:
    """``lines`` lines of training text for the tokenizer (deterministic in ``seed``)."""
    rng = random.Random(seed)
    out = []
    for i in range(lines):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(4, 12))]
        hanzi = "".join(rng.choice(_HANZI) for _ in range(rng.randint(2, 10)))
        letter = "ABCDEFGH"[i % 8]
        out.append(f"{' '.join(words)} {hanzi} ({letter}) {rng.randint(0, 999)}.")
    return out


def build_tokenizer(seed: int, vocab_size: int) -> Any:
    """Train the byte-level BPE tokenizer (a ``PreTrainedTokenizerFast``, left padding)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus(seed), trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                   pad_token="<pad>", model_max_length=4096,
                                   padding_side="left", extra_special_tokens={
                                       "image_token": "<image>"})


def model_config(ids: dict[str, int], vocab_size: int) -> dict[str, Any]:
    """The LLaVA configuration (``config.json`` content) of the tiny model: a 2-layer CLIP
    vision tower on 56 x 56 px images (16 patches of 14 px, i.e. 16 image tokens) and a
    2-layer Llama of width 64."""
    return {
        "model_type": "llava",
        "architectures": ["LlavaForConditionalGeneration"],
        "image_token_index": ids["<image>"],
        "image_seq_length": 16,
        "vision_feature_select_strategy": "default",
        "vision_feature_layer": -2,
        "projector_hidden_act": "gelu",
        "tie_word_embeddings": False,
        "vision_config": {
            "model_type": "clip_vision_model", "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 56,
            "patch_size": 14, "projection_dim": 32, "initializer_range": 0.2,
        },
        "text_config": {
            "model_type": "llama", "vocab_size": vocab_size, "hidden_size": 64,
            "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
            "num_key_value_heads": 2, "max_position_embeddings": 4096,
            "bos_token_id": ids["<s>"], "eos_token_id": ids["</s>"],
            "pad_token_id": ids["<pad>"],
            "initializer_range": 0.2,  # wide logits: greedy answers are not near-ties
        },
    }


def build(out_dir: str | Path, seed: int = 0, vocab_size: int = 1024) -> Path:
    """Write the tiny model folder to ``out_dir`` (created); returns its path.

    Deterministic in ``seed``. Raises ``ImportError`` without torch / transformers.
    """
    import torch
    from transformers import AutoModelForImageTextToText, LlavaConfig, LlavaProcessor
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(seed, vocab_size)
    ids = {t: int(tokenizer.convert_tokens_to_ids(t)) for t in SPECIAL_TOKENS}
    image_processor = CLIPImageProcessorPil(size={"shortest_edge": 56},
                                            crop_size={"height": 56, "width": 56})
    processor = LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer,
                               patch_size=14, vision_feature_select_strategy="default",
                               num_additional_image_tokens=1, chat_template=CHAT_TEMPLATE)
    processor.save_pretrained(out)
    config = LlavaConfig(**model_config(ids, vocab_size))
    torch.manual_seed(seed)
    model = AutoModelForImageTextToText.from_config(config, dtype=torch.float32)
    model.generation_config.bos_token_id = ids["<s>"]
    model.generation_config.eos_token_id = ids["</s>"]
    model.generation_config.pad_token_id = ids["<pad>"]
    model.generation_config.do_sample = False
    model.save_pretrained(out, safe_serialization=True)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out_dir", type=Path, help="folder to write (created)")
    p.add_argument("--seed", type=int, default=0, help="weights and tokenizer seed")
    p.add_argument("--vocab-size", type=int, default=1024, help="tokenizer vocabulary size")
    args = p.parse_args(argv)
    path = build(args.out_dir, args.seed, args.vocab_size)
    size = sum(f.stat().st_size for f in path.iterdir() if f.is_file())
    print(f"tiny VLM written to {path} ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
