"""Recognition (单字识别), parsing (字符提取) and classification (字体分类) probe answers.

Each rule is a function of the image's reference (recognition target, annotation or
script) returning an :class:`~tests.chronicles.probe_kit.Answer`; the rule tables below
are spread over the three probe tags so that every rule meets several images.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.chronicles.probe_kit import API_ERROR, TRADITIONAL, Answer, referring_target

Rows = dict[str, dict[str, Any]]
SCRIPTS = ("甲骨文", "金文", "篆书", "隶书", "楷书", "行书", "草书")
ENGLISH = {"甲骨文": "Oracle Bone Script", "金文": "Bronze Script", "篆书": "Seal Script",
           "隶书": "Clerical Script", "楷书": "Regular Script", "行书": "Running Script",
           "草书": "Cursive Script"}
#: Other names a model may give: traditional spellings or narrower terms, none of which
#: contains one of the seven names.
VARIANT = {"甲骨文": "甲骨", "金文": "鐘鼎文", "篆书": "篆書", "隶书": "隸書", "楷书": "楷書",
           "行书": "行書", "草书": "草書"}
ALIAS = {"甲骨文": "卜辞", "金文": "钟鼎文", "篆书": "小篆", "隶书": "汉隶", "楷书": "正楷",
         "行书": "行楷", "草书": "今草"}


def _other(script: str) -> str:
    return SCRIPTS[(SCRIPTS.index(script) + 1) % len(SCRIPTS)]


# ---- recognition -----------------------------------------------------------------------

def recognition(rows: Rows, tag: str) -> dict[str, Answer]:
    """Recognition answers of one tag, per ancient image with a target (``jiaguwen-03``
    has none: infer.py writes its "no_referring_target" record for every tag)."""
    seed = 7 if tag == "probe-c" else 42
    t = {stem: referring_target(row, seed) for stem, row in rows.items() if "spotting" in row}
    ch = {stem: (v or {}).get("gt_char", "") for stem, v in t.items()}

    def ok(rule: str, text: str, char: str) -> Answer:
        return Answer(rule, text, {"char": char}, seed=seed)

    none = Answer("no_target", seed=seed)
    tables: dict[str, dict[str, Answer]] = {
        "perfect": {s: ok("exact", f"现代汉字：{c}", c) for s, c in ch.items()},
        "empty": {s: Answer("empty_answer") for s in ch},
        "probe-a": {
            "jiaguwen-01": ok("exact", f"现代汉字：{ch['jiaguwen-01']}", ch["jiaguwen-01"]),
            "jiaguwen-02": ok("wrong_char", "现代汉字：卜", "卜"),
            "jinwen-01": Answer("unk_answer", "现代汉字：[UNK]", {"char": "[UNK]"}),
            "jinwen-02": ok("traditional_form", "现代汉字：賜", "賜"),
            "jinwen-03": ok("explanation_after_char", "现代汉字：对（对扬，答谢之意）", "对"),
            "zhuanshu-01": ok("two_chars_first_kept", "现代汉字：昌盛", "昌"),
            "zhuanshu-02": ok("no_prefix_first_cjk_kept", "答案是千", "答"),
            "zhuanshu-03": ok("think_block", "<think>红框里像是長字。</think>现代汉字：长", "长"),
        },
        "probe-b": {
            "jiaguwen-01": ok("latin_answer_first_letter", "现代汉字：gui", "g"),
            "jiaguwen-02": Answer("hand_lenticular_brackets", "【占】", {"char": "【占】"},
                                  source="hand"),
            "jinwen-01": Answer("hand_space_and_full_stop", " 宝。", {"char": " 宝。"},
                                source="hand"),
            "jinwen-02": Answer("empty_answer"),
            "jinwen-03": Answer("api_error", error=API_ERROR),
            "zhuanshu-01": ok("ascii_colon", "现代汉字: 昌", "昌"),
            "zhuanshu-02": ok("block_placeholder_answer", "识别结果：□", "□"),
            "zhuanshu-03": Answer("hand_corner_brackets", "「长」", {"char": "「长」"},
                                  source="hand"),
        },
        "probe-c": {  # infer.py run with --seed 7: other targets, read from the records
            "jiaguwen-01": ok("exact_seed7", f"现代汉字：{ch['jiaguwen-01']}", ch["jiaguwen-01"]),
            "jiaguwen-02": ok("exact_seed7", f"现代汉字：{ch['jiaguwen-02']}", ch["jiaguwen-02"]),
            "jinwen-01": ok("exact_seed7", f"现代汉字：{ch['jinwen-01']}", ch["jinwen-01"]),
            "jinwen-02": ok("exact_seed7", f"现代汉字：{ch['jinwen-02']}", ch["jinwen-02"]),
            "jinwen-03": Answer("hand_empty_char", "", {"char": ""}, source="hand", seed=7),
            "zhuanshu-01": Answer("hand_record_without_gt_char", f"现代汉字：{ch['zhuanshu-01']}",
                                  {"char": ch["zhuanshu-01"]}, source="hand", seed=7,
                                  gt_char=False),
            "zhuanshu-02": ok("prefix_hanzi", f"汉字：{ch['zhuanshu-02']}", ch["zhuanshu-02"]),
            "zhuanshu-03": ok("prefix_char_latin", f"char: {ch['zhuanshu-03']}",
                              ch["zhuanshu-03"]),
        },
    }
    out = dict(tables[tag])
    for stem, target in t.items():
        if target is None:
            out[stem] = none
    return out


# ---- parsing ---------------------------------------------------------------------------

def _halves(a: str) -> tuple[str, str]:
    m = len(a) // 2
    return a[:m], a[m:]


def _ok(rule: str, text: str, extracted: str, fallback: bool = False) -> Answer:
    ext: dict[str, Any] = {"extracted_text": extracted}
    if fallback:
        ext["fallback"] = True
    return Answer(rule, text, ext)


def _sub(a: str, ch: str) -> str:
    m = len(a) // 2
    return a[:m] + ch + a[m + 1:]


PARSE_RULES: tuple[Callable[[str], Answer], ...] = (
    lambda a: _ok("exact", f"提取文本：{a}", a),
    lambda a: _ok("one_substitution", f"提取文本：{_sub(a, '口')}", _sub(a, "口")),
    lambda a: _ok("punctuation_added", f"提取文本：{_halves(a)[0]}，{_halves(a)[1]}。",
                  f"{_halves(a)[0]}，{_halves(a)[1]}"),
    lambda a: _ok("lines_below_prefix", "提取文本：\n{}\n{}".format(*_halves(a)),
                  "{}\n{}".format(*_halves(a))),
    lambda a: _ok("lines_merged_after_prefix", "提取文本：{}\n{}".format(*_halves(a)),
                  "{}\n{}".format(*_halves(a))),
    lambda a: _ok("preamble_without_prefix", f"好的，以下是图片中的文字：\n{a}", a, True),
    lambda a: _ok("extra_chars", f"提取文本：{a}之乎者也", f"{a}之乎者也"),
    lambda a: _ok("truncated", f"提取文本：{_halves(a)[0]}", _halves(a)[0]),
    lambda a: _ok("columns_reversed", f"提取文本：{_halves(a)[1]}{_halves(a)[0]}",
                  _halves(a)[1] + _halves(a)[0]),
    lambda a: _ok("traditional_forms", "提取文本：" + "".join(TRADITIONAL.get(c, c) for c in a),
                  "".join(TRADITIONAL.get(c, c) for c in a)),
    lambda a: Answer("empty_answer"),
    lambda a: Answer("api_error", error=API_ERROR),
    lambda a: Answer("hand_empty_text", "", {"extracted_text": ""}, source="hand"),
    lambda a: _ok("literal_backslash_n", "提取文本：{}\\n{}".format(*_halves(a)),
                  "{}\\n{}".format(*_halves(a))),
    lambda a: _ok("ascii_and_ideographic_spaces",
                  f"提取文本：{_halves(a)[0]} {_halves(a)[1][:1]}\u3000{_halves(a)[1][1:]}",
                  f"{_halves(a)[0]} {_halves(a)[1][:1]}\u3000{_halves(a)[1][1:]}"),
    lambda a: _ok("no_break_space_kept", "提取文本：{}\u00a0{}".format(*_halves(a)),
                  "{}\u00a0{}".format(*_halves(a))),
    lambda a: _ok("think_block", f"<think>逐列从右往左读。</think>\n提取文本：{a}", a),
    lambda a: _ok("code_fence_without_prefix", f"```\n{a}\n```", a, True),
    lambda a: _ok("other_task_prefix_after", f"提取文本：{a}\n字体分类：楷书", a),
    lambda a: Answer("hand_not_a_string", "", {"extracted_text": 123}, source="hand"),
    lambda a: Answer("single_char_without_prefix", a[:1]),
    lambda a: _ok("question_mark_for_unknown", f"提取文本：{_sub(a, '？')}", _sub(a, "？")),
    lambda a: _ok("prefix_shibie_jieguo", f"识别结果：{a}", a),
    lambda a: _ok("last_prefix_wins", f"文本：旧稿\n提取文本：{a}", a),
)

#: Placeholder rules for the images whose annotation has one: (stem, tag) -> answer text
#: (with the prefix) and its extraction.
PARSE_UNK: dict[tuple[str, str], tuple[str, str]] = {
    ("jiaguwen-02", "probe-a"): ("unk_same_as_reference", "王占曰吉其[UNK]雨"),
    ("jiaguwen-02", "probe-b"): ("block_for_bracket_unk", "王占曰吉其□雨"),
    ("jiaguwen-02", "probe-c"): ("angle_unk_for_bracket_unk", "王占曰吉其<UNK>雨"),
    ("jiaguwen-03", "probe-a"): ("three_bracket_unks", "[UNK][UNK][UNK]"),
    ("jiaguwen-03", "probe-b"): ("three_blocks", "□□□"),
    ("jiaguwen-03", "probe-c"): ("lower_case_unks", "[unk]□[unk]"),
    ("jinwen-03", "probe-a"): ("block_omitted", "对扬休"),
    ("jinwen-03", "probe-b"): ("bracket_unk_for_block", "对扬[UNK]休"),
    ("jinwen-03", "probe-c"): ("question_mark_for_block", "对扬？休"),
    ("lishu-03", "probe-a"): ("filled_block_for_block", "延年益■长乐未央"),
    ("lishu-03", "probe-b"): ("block_same_as_reference", "延年益□长乐未央"),
    ("lishu-03", "probe-c"): ("block_omitted", "延年益长乐未央"),
    ("caoshu-02", "probe-a"): ("unk_same_as_reference", "白日依[UNK]尽"),
    ("caoshu-02", "probe-b"): ("bracket_unk_omitted", "白日依尽"),
    ("caoshu-02", "probe-c"): ("lower_angle_unk", "白日依<unk>尽"),
}
PROBE_TAGS = ("probe-a", "probe-b", "probe-c")


def parsing(rows: Rows, tag: str) -> dict[str, Answer]:
    """Parsing answers of one tag for every image."""
    if tag == "perfect":
        return {s: PARSE_RULES[0](r["annotation"]) for s, r in rows.items()}
    if tag == "empty":
        return {s: Answer("empty_answer") for s in rows}
    general = [s for s in rows if (s, "probe-a") not in PARSE_UNK]
    slot = PROBE_TAGS.index(tag) * len(general)
    out: dict[str, Answer] = {}
    for stem, row in rows.items():
        if (stem, tag) in PARSE_UNK:
            rule, text = PARSE_UNK[(stem, tag)]
            out[stem] = _ok(rule, f"提取文本：{text}", text)
        else:
            rule_fn = PARSE_RULES[(slot + general.index(stem)) % len(PARSE_RULES)]
            out[stem] = rule_fn(row["annotation"])
    return out


# ---- classification --------------------------------------------------------------------

def _cat(rule: str, text: str, category: str, fallback: bool = False,
         source: str = "infer") -> Answer:
    ext: dict[str, Any] = {"category": category}
    if fallback:
        ext["fallback"] = True
    return Answer(rule, text, ext, source=source)


CLASSIFY_RULES: tuple[Callable[[str], Answer], ...] = (
    lambda f: _cat("exact", f"字体分类：{f}", f),
    lambda f: _cat("suffix_ti", f"字体分类：{f}体", f),
    lambda f: Answer("english_name", f"字体分类：{ENGLISH[f]}"),
    lambda f: Answer("traditional_or_variant_name", f"字体分类：{VARIANT[f]}"),
    lambda f: _cat("wrong_script", f"字体分类：{_other(f)}", _other(f)),
    lambda f: _cat("sentence_without_prefix", f"这幅作品是{f}。", f, fallback=True),
    lambda f: _cat("reason_on_next_line", f"字体分类：{f}\n理由：笔画不同于{_other(f)}", f),
    lambda f: _cat("prefix_ziti", f"字体：{f}", f),
    lambda f: _cat("prefix_fenlei_ascii_colon", f"分类: {f}", f),
    lambda f: _cat("markdown_bold_prefix", f"**字体分类：** {f}", f),
    lambda f: _cat("two_names", f"字体分类：{f}或{_other(f)}", f, source="ambiguous"),
    lambda f: _cat("think_block", f"<think>像{_other(f)}又像{f}。</think>字体分类：{f}", f),
    lambda f: Answer("hand_padded_name", "", {"category": f" {f}\n"}, source="hand"),
    lambda f: Answer("hand_english_name", "", {"category": ENGLISH[f]}, source="hand"),
    lambda f: Answer("hand_not_a_string", "", {"category": 7}, source="hand"),
    lambda f: Answer("empty_answer"),
    lambda f: Answer("api_error", error=API_ERROR),
    lambda f: Answer("alias_name", f"字体分类：{ALIAS[f]}"),
    lambda f: _cat("last_mention_wins", f"不是{_other(f)}，而是{f}", f, fallback=True),
    lambda f: _cat("code_fence", f"```\n字体分类：{f}\n```", f),
    lambda f: Answer("hand_extract_not_a_dict", "", [f], source="hand"),
)


def classification(rows: Rows, tag: str) -> dict[str, Answer]:
    """Classification answers of one tag for every image (rule i + 7 * tag index)."""
    if tag == "perfect":
        return {s: CLASSIFY_RULES[0](r["font_type"]) for s, r in rows.items()}
    if tag == "empty":
        return {s: Answer("empty_answer") for s in rows}
    shift = 7 * PROBE_TAGS.index(tag)
    return {s: CLASSIFY_RULES[(i + shift) % len(CLASSIFY_RULES)](r["font_type"])
            for i, (s, r) in enumerate(rows.items())}
