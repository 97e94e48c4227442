"""Answer reading of the chronicles-ocr plug-in (chronicles_ocr.text_rules / .extract).

Expected values: worked out by hand from the rules of the official code
(``Opensource/prompts/_text.py``, ``prompts/<task>.py`` at 23a37c6, described in
docs/chronicles-ocr.md), and — for every probe answer whose ``extract`` came from the
official extraction (``source: infer`` in ``fixtures/probe_manifest.jsonl``, checked
against the official code by ``check_probes.py``) — the official extraction itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("chronicles_ocr")

from chronicles_ocr.extract import (
    read_classification,
    read_parsing,
    read_recognition,
    read_spotting,
)
from chronicles_ocr.names import TASK_BY_ZH
from chronicles_ocr.protocol import CORRECTED, OFFICIAL
from chronicles_ocr.scoring_rules import read_answer
from chronicles_ocr.text_rules import (
    after_prefix,
    clean,
    drop_unk,
    final_answer,
    is_unk,
)

HERE = Path(__file__).resolve().parent
CJK = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FA5)
NOISE = st.text(alphabet="abcdefgh 0123456789", max_size=12)


@pytest.mark.parametrize(("text", "want"), [
    ("<think>x</think>\n<answer>天</answer>", "天"),      # the answer pair wins
    ("reasoning </THINK> 答：地", "答：地"),              # after the last closing tag
    ("a</think>b</reasoning> c ", "c"),
    ("<think>unfinished", ""),                            # open tag, nothing before
    ("前言<think>…", "前言"),                              # what precedes the open tag
    ("  plain  ", "plain"),
])
def test_final_answer(text: str, want: str) -> None:
    assert final_answer(text) == want


CLASSIFY = ("字体分类", "字体", "分类")
PARSE = ("提取文本", "提取结果", "识别结果", "识别文本", "文本")


@pytest.mark.parametrize(("text", "prefixes", "multiline", "want"), [
    ("字体分类：楷书", CLASSIFY, False, "楷书"),
    ("字体: “行书”。", CLASSIFY, False, "行书"),                      # edge marks cleaned
    ("分类：隶书\n字体分类：草书", CLASSIFY, False, "草书"),            # the last prefix wins
    ("提取文本：天地\n玄黄\n字体分类：楷书", PARSE, True, "天地\n玄黄"),  # stops at a field
    ("提取文本：天地\n玄黄", PARSE, False, "天地"),
    # a fence opening on the prefix's line is cut at its close; one on the next line is
    # not seen as a fence: every following non-empty line is kept
    ("提取文本：```text\n天\n```\n说明", PARSE, True, "天"),
    ("提取文本：\n```\n天地\n玄黄\n```\n说明", PARSE, True, "天地\n玄黄\n说明"),
    ("no prefix here", PARSE, True, ""),
])
def test_after_prefix(text: str, prefixes: tuple[str, ...], multiline: bool,
                      want: str) -> None:
    assert after_prefix(text, prefixes, multiline) == want


def test_clean_and_fences() -> None:
    assert clean("```\n「王」\n```") == "「王」"  # 「」 is not among the edge marks
    assert clean("``'王'。``") == "王"


@pytest.mark.parametrize(("text", "want"), [
    ("字体分类：楷书", {"category": "楷书"}),
    ("字体分类：楷书体", {"category": "楷书"}),                    # contained
    ("字体分类：隶书或楷书", {"category": "隶书"}),                # first named (fixed rule)
    ("我认为是行书，也像草书", {"category": "草书", "fallback": True}),  # last in the text
    ("Oracle bone script", None),
    ("字体分类：小篆", None),
])
def test_read_classification(text: str, want: dict[str, Any] | None) -> None:
    assert read_classification(text) == want


@pytest.mark.parametrize(("text", "want"), [
    ("提取文本：天 地", {"extracted_text": "天 地"}),
    ("好的\n天地玄黄", {"extracted_text": "天地玄黄", "fallback": True}),  # preamble dropped
    ("好人好事", None),                  # a line starting with 好 is preamble, as officially
    ("天", None),                        # a one-character fallback is refused
    ("天地\n字体分类：楷书", {"extracted_text": "天地", "fallback": True}),
])
def test_read_parsing(text: str, want: dict[str, Any] | None) -> None:
    assert read_parsing(text) == want


@pytest.mark.parametrize(("text", "want"), [
    ("现代汉字：王子", {"char": "王"}),      # the first ideograph
    ("答案是王", {"char": "答"}),           # no colon: the whole answer
    ("现代汉字：[unk]", {"char": "[UNK]"}),
    ("现代汉字：<UNK>", {"char": "[UNK]"}),
    ("abc def", {"char": "a"}),
    ("", None),
])
def test_read_recognition(text: str, want: dict[str, Any] | None) -> None:
    assert read_recognition(text) == want


def test_read_spotting_rounds_clamps_and_strips() -> None:
    got = read_spotting('```json\n[{"bbox": [1.5, 2.5, 10, 1200], "char": " 天 "}]\n```')
    # round half to even: 1.5 -> 2, 2.5 -> 2; 1200 clamped to 1000
    assert got.ok and got.items == [{"idx": 1, "bbox": [2, 2, 10, 1000], "char": "天"}]


@pytest.mark.parametrize(("text", "official", "corrected_items"), [
    ("[]", {"items": []}, None),                                    # empty: valid, scores 0
    ('结果：[{"bbox": [0, 0, 10, 10], "char": "天"}] 完', {"items": [
        {"idx": 1, "bbox": [0, 0, 10, 10], "char": "天"}]}, 1),      # first [ to last ]
    ('[{"bbox": [0, 0, 10, 10], "char": "天"}, {"bbox": [5, 5, 5, 9]}]', None, 1),
    ('{"items": [{"bbox": [0, 0, 10, 10]}]}', None, None),          # an object, not a list
    ('[{"bbox": [NaN, 0, 10, 10]}, {"bbox": [0, 0, 9, 9]}]', None, 1),  # NaN: reader fails
    ("no json", None, None),
])
def test_read_spotting_failures(text: str, official: dict[str, Any] | None,
                                corrected_items: int | None) -> None:
    assert read_answer("spotting", text, OFFICIAL) == official
    got = read_answer("spotting", text, CORRECTED)
    if corrected_items is None:
        assert got == official
    else:  # corrected keeps the valid boxes of a partly valid answer
        assert got is not None and len(got["items"]) == corrected_items


def _probe_answers() -> list[tuple[str, str, Any]]:
    """(task id, answer, official extract or None) of every probe whose extract is the
    official extraction's."""
    manifest = {}
    for line in (HERE / "fixtures" / "probe_manifest.jsonl").read_text("utf-8").splitlines():
        m = json.loads(line)
        manifest[(m["model"], m["image_path"], m["task"])] = m["source"]
    out = []
    for path in sorted((HERE / "fixtures" / "predictions").glob("*/results.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else {}
            for task, entry in (row.get("infer_results") or {}).items():
                key = (path.parent.name, row.get("image_path"), task)
                if manifest.get(key) == "infer" and isinstance(entry, dict) \
                        and not entry.get("error"):
                    out.append((TASK_BY_ZH[task].id, entry["answer"], entry.get("extract")))
    return out


def test_every_probe_answer_reads_as_the_official_extraction() -> None:
    probes = _probe_answers()
    assert len(probes) > 200  # the fixtures hold 271 such answers
    wrong = [(t, a, want, got) for t, a, want in probes
             if (got := read_answer(t, a, OFFICIAL)) != want]
    assert not wrong, wrong[:3]


@given(NOISE, st.text(alphabet=CJK, min_size=1, max_size=6), NOISE)
def test_recognition_reads_the_first_ideograph_after_the_prefix(
        before: str, chars: str, after: str) -> None:
    assert read_recognition(f"{before}现代汉字：{chars}{after}") == {"char": chars[0]}


@given(st.sampled_from(["[{}]", "<{}>", "{}", " {} "]), st.sampled_from(["unk", "UNK", "Unk"]))
def test_unk_token_forms(shape: str, word: str) -> None:
    assert is_unk(shape.format(word))


@given(st.text(alphabet="□■▢◻◼", min_size=1, max_size=4), st.text(alphabet=CJK, min_size=1))
def test_unk_blocks_and_real_characters(blocks: str, real: str) -> None:
    assert is_unk(blocks) and is_unk("") and is_unk("  ")
    assert not is_unk(real) and not is_unk(real + blocks)


@given(st.lists(st.tuples(st.text(alphabet=CJK, max_size=3),
                          st.sampled_from(["[UNK]", "[unk]", "<UNK>", "□", "◼", ""])),
                max_size=6))
def test_drop_unk_removes_only_the_placeholders(parts: list[tuple[str, str]]) -> None:
    text = "".join(a + b for a, b in parts)
    assert drop_unk(text) == "".join(a for a, _ in parts)
    assert drop_unk("UNK天") == "UNK天"  # a bare UNK stays (official remove_unk)
