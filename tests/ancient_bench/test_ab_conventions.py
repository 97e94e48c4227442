"""The three parsing conventions of the paper (§4.2.4) that the prompts state — reading
order of horizontal text, the inter-line spacing mark, the bracket form of double-line
interlinear notes — and how the official normalisation treats each, unchanged."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import realdata

from heritage_eval.benchmarks.ancient_bench.categories import MEDIA
from heritage_eval.benchmarks.ancient_bench.normalize import (
    PROTOCOLS,
    NormalizationFlags,
    prediction_tokens,
    target_tokens,
)
from heritage_eval.benchmarks.ancient_bench.prompts import BASE_PROMPT, PromptSet

DEMO_GT = realdata("ancient_bench_official_demo", "gt")
OFFICIAL = PROTOCOLS["official"]


def _rule(number: int) -> str:
    """The text of base rule ``number`` (``"6. …"`` up to the next rule)."""
    match = re.search(rf"^{number}\. (.*?)(?=^\d+\. |\Z)", BASE_PROMPT, re.M | re.S)
    assert match is not None, number
    return match.group(1)


def _ground_truth() -> list[tuple[str, str]]:
    return [(f.parent.name, json.loads(line)["human_gt"])
            for f in sorted(Path(DEMO_GT).glob("*/conv.jsonl"))
            for line in f.read_text(encoding="utf-8").splitlines()]


def test_horizontal_text_is_read_right_to_left() -> None:
    rule = _rule(6)
    assert "Horizontal writing" in rule and "right to left" in rule
    assert "character at the right end comes first" in rule
    # The rule is in every medium's prompt (part of the base rules).
    assert all(rule in PromptSet().prompt(cat) for cat in MEDIA)


def test_spacing_mark_is_whitespace_which_the_official_scorer_drops() -> None:
    rule = _rule(7)
    assert "one space" in rule and "empty line" in rule
    assert "<space>" not in BASE_PROMPT  # the paper's name, never what is released
    # A transcription with the spacing marks scores the same as one without them under
    # the official protocol (ignore_space drops every str.isspace() character) ...
    gt = "古物\n\n雜識 璽印"
    assert target_tokens(gt, OFFICIAL) == list("古物雜識璽印")
    assert prediction_tokens(f"<res>{gt}</res>", OFFICIAL) == list("古物雜識璽印")
    # ... whereas a literal <space> tag would count as 7 extra tokens: < and > are kept
    # punctuation, the letters are not punctuation (normalize.py step 10).
    assert prediction_tokens("<res>古物<space>雜識</res>", OFFICIAL) == [
        "古", "物", "<", "s", "p", "a", "c", "e", ">", "雜", "識"]
    # Without ignore_space the marks are compared as written.
    keep = NormalizationFlags(ignore_space=False)
    assert target_tokens("雜識 璽印", keep) == ["雜", "識", " ", "璽", "印"]


def test_interlinear_notes_in_full_width_brackets() -> None:
    rule = _rule(8)
    assert "double-line" in rule and "（ ）" in rule and "right half-column first" in rule
    assert "rule 8" in _rule(2)  # the one exception to "no added punctuation"
    assert "（ ）" in PromptSet().prompt("traditional_chinese_book_editions")
    # U+FF08 / U+FF09 are punctuation (Ps / Pe): the official protocol drops them ...
    assert target_tokens("陶侃（著）", OFFICIAL) == ["陶", "侃", "著"]
    # ... and with --no-ignore-punc an answer in the bracket form matches as written.
    keep = NormalizationFlags(ignore_punc=False)
    assert prediction_tokens("<res>陶侃（著）</res>", keep) == target_tokens("陶侃（著）", keep) \
        == ["陶", "侃", "（", "著", "）"]


def test_conventions_match_the_released_ground_truth() -> None:
    # Counted on the official demo ground truth (173 lines, all 9 media), recorded in
    # prompts.py's docstring: no <space> tag; 142 spaces and 31 empty lines; 20 bracket
    # pairs, in woodblock editions (4 lines) and one cliff carving.
    rows = _ground_truth()
    assert len(rows) == 173
    assert not any("<space>" in gt for _, gt in rows)
    assert sum(gt.count(" ") for _, gt in rows) == 142
    assert sum(len(re.findall(r"\n\s*\n", gt)) for _, gt in rows) == 31
    assert sum(gt.count("（") for _, gt in rows) == sum(gt.count("）") for _, gt in rows) == 20
    assert sorted({cat for cat, gt in rows if "（" in gt}) == [
        "cliff_carvings", "traditional_chinese_book_editions"]
