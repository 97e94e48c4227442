"""Normalisation steps of the official evaluator, one behaviour per test.

Expected values are derived by hand from the step list in the official
``text_preprocess_for_eval`` (SCUT-DLVCLab/Ancient_Bench, eval/.ipynb_checkpoints/
run-checkpoint.py @ c51284fc), applied in its order.
"""

from __future__ import annotations

from heritage_eval.benchmarks.ancient_bench.normalize import (
    PROTOCOLS,
    NormalizationFlags,
    extract_answer,
    normalize_text,
    prediction_tokens,
    target_tokens,
    tokenize,
)

OFFICIAL = PROTOCOLS["official"]
PAPER = PROTOCOLS["paper"]


def test_official_defaults() -> None:
    # The official config.yaml's verifier_params.
    assert NormalizationFlags(ignore_st=False, ignore_punc=True,
                                          ignore_space=True, ignore_case=False) == OFFICIAL
    assert not OFFICIAL.collapse_u25a1
    assert PAPER.ignore_case and PAPER.collapse_u25a1 and not PAPER.ignore_st


def test_extract_null_and_first_res_block() -> None:
    assert extract_answer(None) == ""
    assert extract_answer("") == ""
    # Only the first <res> block counts; newlines at its ends are stripped.
    assert extract_answer("note <res>\n甲乙\n</res> <res>丙</res>") == "甲乙"
    # No block: the whole answer, newlines stripped at both ends only.
    assert extract_answer("\n甲\n乙\n") == "甲\n乙"
    # Only '\n' is stripped, spaces stay (they go later, with ignore_space).
    assert extract_answer("<res> 甲 </res>") == " 甲 "


def test_extract_drops_blocks_stray_tags_and_hash() -> None:
    raw = ("<res>甲<page_number>12</page_number>乙<img>圖</img>丙</signature>"
           "<watermark>印</watermark>#丁</res>")
    # page_number / img / watermark blocks go with content, stray </signature> and '#' go.
    assert extract_answer(raw) == "甲乙丙丁"


def test_hash_dropped_from_predictions_only() -> None:
    keep = NormalizationFlags(ignore_punc=False)
    assert prediction_tokens("甲#", keep) == ["甲"]
    assert target_tokens("甲#", keep) == ["甲", "#"]


def test_layout_tags_removed_keeping_content() -> None:
    assert normalize_text("<note>甲</note><ignore>乙</ignore>丙", OFFICIAL) == "甲乙丙"


def test_runs_collapsed_before_punctuation_removal() -> None:
    # Runs of ▢ (U+25A2) and 〇 collapse to one.
    assert normalize_text("▢▢▢甲〇〇乙", OFFICIAL) == "▢甲〇乙"
    # A comma separates the two ▢ when collapsing, and is removed only afterwards.
    assert normalize_text("▢，▢", OFFICIAL) == "▢▢"
    # The ground truth's □ (U+25A1) is not collapsed by the code, but is by the paper.
    assert normalize_text("□□甲", OFFICIAL) == "□□甲"
    assert normalize_text("□□甲", PAPER) == "□甲"


def test_punctuation_and_kept_marks() -> None:
    # Chinese and ASCII punctuation (category P*) go ...
    assert normalize_text("甲，乙。(丙)「丁」!", OFFICIAL) == "甲乙丙丁"
    # ... except the marks the official list keeps; = < > ~ ～ are symbols anyway.
    assert normalize_text("甲=乙-丙~丁～戊、己<庚>", OFFICIAL) == "甲=乙-丙~丁～戊、己<庚>"
    assert normalize_text("甲，乙", NormalizationFlags(ignore_punc=False)) == "甲，乙"


def test_whitespace_and_case() -> None:
    assert normalize_text("甲 乙\u3000丙\n丁\t", OFFICIAL) == "甲乙丙丁"
    assert normalize_text("甲 乙", NormalizationFlags(ignore_space=False)) == "甲 乙"
    assert normalize_text("AbC", OFFICIAL) == "AbC"
    assert normalize_text("AbC", PAPER) == "abc"


def test_simplified_traditional_switch() -> None:
    # OpenCC t2s: 會 -> 会, 蘭 -> 兰 (稽, 山 unchanged).
    assert normalize_text("會稽山蘭", NormalizationFlags(ignore_st=True)) == "会稽山兰"
    assert normalize_text("會稽山蘭", OFFICIAL) == "會稽山蘭"


def test_tokens_placeholders_whole() -> None:
    assert tokenize("甲<unrecognizable>乙<undeciphered>") == [
        "甲", "<unrecognizable>", "乙", "<undeciphered>"]
    # A misspelt placeholder is ordinary characters: < u n r c o g n z a b l > = 13 tokens.
    assert len(tokenize("<unrcognzabl>")) == 13
    # End to end on a prediction: <res>, a placeholder, a damaged run and a line break.
    assert prediction_tokens("<res>甲<unrecognizable>\n▢▢乙</res>", OFFICIAL) == [
        "甲", "<unrecognizable>", "▢", "乙"]
