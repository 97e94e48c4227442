"""Shared pieces of the validators: findings and report, the annotation-standard checks of
one transcription, JSON line numbers, perceptual-hash pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heritage_eval.curate.validate.imagecheck import Duplicate, find_duplicates
from heritage_eval.curate.validate.jsonpos import read_list_with_lines
from heritage_eval.curate.validate.report import Finding, Report
from heritage_eval.curate.validate.transcription import check_transcription, simplified_forms


def test_finding_and_summary_lines(tmp_path: Path) -> None:
    assert str(Finding("error", "a/conv.jsonl", 3, "gt-empty", "empty")) == \
        "a/conv.jsonl:3: error[gt-empty]: empty"
    assert str(Finding("warning", "x.json", None, "json-min", "flat")) == \
        "x.json: warning[json-min]: flat"
    report = Report("demo")
    assert report.exit_status() == 0
    report.warning("b", 2, "w", "later file")
    report.error("a", 5, "e", "second")
    report.error("a", None, "f", "file level first")
    report.count("files")
    report.count("classes", 3)
    assert report.exit_status() == 1
    assert [(f.file, f.line) for f in report.sorted_findings()] == [("a", None), ("a", 5),
                                                                    ("b", 2)]
    assert report.summary() == "demo: 2 errors, 1 warning (checked 1 file, 3 classes)"
    out = tmp_path / "sub" / "r.json"
    report.write_json(out)
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["codes"] == {"error[e]": 1, "error[f]": 1, "warning[w]": 1}
    assert data["checked"] == {"files": 1, "classes": 3}
    assert [f["line"] for f in data["findings"]] == [None, 5, 2]
    assert list(out.parent.iterdir()) == [out]  # no temporary file left behind


def test_warnings_alone_pass() -> None:
    report = Report("x")
    report.warning("f", 1, "w", "m")
    assert report.exit_status() == 0
    assert report.summary() == "x: 0 errors, 1 warning"


@pytest.mark.parametrize(("text", "expected"), [
    ("君諱全\n字景完", []),
    ("□□君<unrecognizable>字-=", []),                      # the standard's own symbols
    ("<ignore>目錄</ignore>\n古物（大小忽雷）<note>眉批</note>", []),  # editions
    ("<note><note>批</note></note>", [("error", "tag-nested")]),
    ("<note>批<ignore>版心</note></ignore>",
     [("error", "tag-unbalanced"), ("error", "tag-unbalanced")]),
    ("文<watermark>", [("error", "tag-unknown")]),
    ("文</unrecognizable>", [("error", "tag-unknown")]),
    ("文 < 字", [("warning", "stray-angle-bracket")]),
    ("君，字。", [("warning", "stray-punctuation")]),
    ("君\\n字", [("warning", "stray-punctuation"), ("warning", "escaped-newline")]),
    ("子—孫", [("warning", "repetition-mark-form")]),
    ("<note></note>", [("error", "gt-empty")]),
])
def test_transcription_checks(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(level, code) for level, code, _ in check_transcription(text)] == expected


def test_messages_name_the_problem() -> None:
    msgs = {code: m for _, code, m in check_transcription("文<watermark>")}
    assert msgs["tag-unknown"] == ("<watermark>: a tag the evaluator removes from "
                                   "predictions only; in ground truth it is scored as "
                                   "characters")
    msgs = {code: m for _, code, m in check_transcription("君，字。")}
    assert msgs["stray-punctuation"].startswith("punctuation '。' (U+3002), '，' (U+FF0C) is "
                                                "not an annotation symbol")


def test_simplified_forms_use_opencc_candidates() -> None:
    # STCharacters.txt: 于 -> 於 于, 后 -> 後 后 (valid traditional), 将 -> 將, 体 -> 體
    assert simplified_forms("于后将体将") == {"将": ("將",), "体": ("體",)}


def test_json_list_lines() -> None:
    text = '[\n  {"a": 1},\n\n  {"b": [1,\n 2]}, 3\n]'
    assert read_list_with_lines(text) == ([{"a": 1}, {"b": [1, 2]}, 3], [2, 4, 5])
    assert read_list_with_lines("\ufeff[1, 2]") == ([1, 2], [1, 1])
    assert read_list_with_lines('{"a": 1}') is None
    with pytest.raises(json.JSONDecodeError) as exc:
        read_list_with_lines('[\n1,\n]')
    assert exc.value.lineno == 3


def test_duplicate_pairs_by_hamming_distance() -> None:
    # 0b1111 vs 0b0111: 1 bit; vs 0b0000: 4 bits; 0b0111 vs 0b0000: 3 bits
    hashes = [0b1111, 0b0111, None, 0b0000]
    assert find_duplicates(hashes, 0) == []
    assert find_duplicates(hashes, 1) == [Duplicate(0, 1, 1)]
    assert find_duplicates(hashes, 3) == [Duplicate(0, 1, 1), Duplicate(1, 3, 3)]
    assert len(find_duplicates(hashes, 4)) == 3
