"""English names of Chinese script, typeface and dynasty labels, for figure labels.

Used only when no CJK font is installed (:func:`.figures.setup_fonts`): matplotlib would
draw empty boxes for Han characters, so a label is shown by its English name (script
names as in the HCSU and Ancient-Bench papers: Seal, Clerical, Regular, Running,
Cursive). Tables and ``stats.json`` always keep the original labels.
"""

from __future__ import annotations

#: Script and typeface-style labels -> English (HCSU ``script_type`` values).
SCRIPTS: dict[str, str] = {
    "甲骨文": "Oracle Bone", "金文": "Bronze", "篆书": "Seal", "篆書": "Seal",
    "隶书": "Clerical", "隸書": "Clerical", "楷书": "Regular", "楷書": "Regular",
    "行书": "Running", "行書": "Running", "草书": "Cursive", "草書": "Cursive",
    "宋体": "Song (typeface)", "仿宋": "FangSong (typeface)", "黑体": "Hei (typeface)",
    "圆体": "Yuan (typeface)",
}

#: Dynasty / period labels -> English.
DYNASTIES: dict[str, str] = {
    "商": "Shang", "周": "Zhou", "西周": "Western Zhou", "东周": "Eastern Zhou",
    "春秋": "Spring and Autumn", "战国": "Warring States", "秦": "Qin", "汉": "Han",
    "西汉": "Western Han", "东汉": "Eastern Han", "三国": "Three Kingdoms", "魏": "Wei",
    "晋": "Jin", "西晋": "Western Jin", "东晋": "Eastern Jin", "南北朝": "Southern and Northern",
    "北魏": "Northern Wei", "隋": "Sui", "唐": "Tang", "五代": "Five Dynasties", "宋": "Song",
    "北宋": "Northern Song", "南宋": "Southern Song", "元": "Yuan", "明": "Ming", "清": "Qing",
    "民国": "Republic", "近现代": "Modern",
}


def has_han(text: str) -> bool:
    """Whether ``text`` holds a CJK ideograph (U+3400–U+9FFF, U+F900–U+FAFF, U+20000+)."""
    return any("\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or ch >= "\U00020000"
               for ch in text)


def english(label: str, english_name: str | None = None) -> str:
    """``label`` readable without a CJK font: itself when it has no Han character, else
    ``english_name`` when given (e.g. a record's ``calligrapher_en``), else its entry in
    :data:`SCRIPTS` or :data:`DYNASTIES`; a ``"<a>-<b>"`` class name is translated part
    by part. A label with no known English name is returned unchanged."""
    if not has_han(label):
        return label
    if english_name:
        return english_name
    if label in SCRIPTS:
        return SCRIPTS[label]
    if label in DYNASTIES:
        return DYNASTIES[label]
    if "-" in label:
        return "-".join(english(part) for part in label.split("-"))
    return label
