"""Prompt templates: the conventions they must carry, and replacement from a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heritage_eval.benchmarks.ancient_bench.categories import MEDIA
from heritage_eval.benchmarks.ancient_bench.prompts import (
    BASE_PROMPT,
    MEDIUM_PROMPTS,
    PromptSet,
    load_prompts,
    prompt_hash,
)


def test_base_rules_present() -> None:
    # Conventions of the paper (sections 4.2.2-4.2.4) that the base prompt must state.
    for marker in ("<res>", "</res>", "punctuation", "=", "-", "□", "<unrecognizable>",
                   "rightmost", "top to bottom", "simplified", "seals", "remember"):
        assert marker in BASE_PROMPT, marker


def test_every_medium_has_its_addition() -> None:
    assert set(MEDIUM_PROMPTS) == set(MEDIA)
    assert "<ignore>" in MEDIUM_PROMPTS["traditional_chinese_book_editions"]
    assert "<note>" in MEDIUM_PROMPTS["traditional_chinese_book_editions"]
    assert "top, then left, then bottom, then right" in \
        MEDIUM_PROMPTS["traditional_chinese_book_editions"]
    assert "mirrored" in MEDIUM_PROMPTS["seals"]
    for cat in ("oracle_bone_artifacts", "bronze_rubbings"):
        assert "modern standard character" in MEDIUM_PROMPTS[cat]
    for cat in ("cliff_carvings", "inscription_rubbings"):
        assert "body" in MEDIUM_PROMPTS[cat]


def test_prompt_is_base_plus_medium() -> None:
    ps = PromptSet()
    assert ps.prompt("seals") == BASE_PROMPT + "\n\n" + MEDIUM_PROMPTS["seals"]
    assert ps.prompt("murals") == BASE_PROMPT  # unknown medium: base rules only


def test_override_from_file(tmp_path: Path) -> None:
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"base": "RULES", "Seal": "SEAL TEXT",
                             "cliff_carvings": "CLIFF"}), encoding="utf-8")
    ps = load_prompts(f)
    assert ps.prompt("seals") == "RULES\n\nSEAL TEXT"
    assert ps.prompt("cliff_carvings") == "RULES\n\nCLIFF"
    # Entries not named keep their default text.
    assert ps.prompt("calligraphys") == "RULES\n\n" + MEDIUM_PROMPTS["calligraphys"]
    assert ps.source == str(f)
    assert ps.hash() != PromptSet().hash()
    assert prompt_hash(ps.prompt("seals")) != prompt_hash(PromptSet().prompt("seals"))
    assert load_prompts(None).hash() == PromptSet().hash()


@pytest.mark.parametrize("content, message", [
    ('{"Murals": "x"}', "unknown key"),
    ('{"base": 3}', "non-empty string"),
    ('["base"]', "JSON object"),
    ("{not json", "cannot read prompt file"),
])
def test_bad_prompt_files(tmp_path: Path, content: str, message: str) -> None:
    f = tmp_path / "bad.json"
    f.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_prompts(f)
