"""The four prompts, in Chinese like the official ones and in this project's own words.

Each asks for the answer format the official prompt asks for, so that the official
answer readers (:mod:`chronicles_ocr.extract`) apply unchanged:

- spotting: only a JSON array ``[{"idx": 1, "bbox": [x1, y1, x2, y2], "char": "字"}, …]``,
  integer coordinates normalised to 0–1000 over the whole image, ``[UNK]`` for an
  unreadable character (its box still given), top to bottom and left to right;
- recognition: ``现代汉字：<one character>`` for the character in the red box, ``[UNK]``
  when unreadable;
- parsing: ``提取文本：<the characters in reading order>``, nothing else;
- classification: ``字体分类：<one of the seven script names>``.

The image comes first in the message, then the prompt (the official client's order).
"""

from __future__ import annotations

import hashlib

SPOTTING = """请找出这张古文字图像中的每一个单字，给出它在图中的位置和它对应的现代汉字。

框选规则：
- 一个独立的字对应一个框；属于同一个字的笔画合在一个框里
- 残缺但仍能看出是字的，也要框出
- 不要框选标点、纹饰、裂痕、器物边缘等不是文字的部分

坐标规则：
- 每个框写成 [x1, y1, x2, y2]，(x1, y1) 为左上角，(x2, y2) 为右下角
- 坐标以整幅图像为准，归一化到 0 至 1000 之间，只用整数
- 必须满足 x1 < x2、y1 < y2

字符规则：
- char 填写框内这个字对应的现代汉字，每个框只写一个字
- 认不出的字写 "[UNK]"，但这个框仍然要给出

顺序：自上而下、自左而右排列，idx 从 1 起连续编号。

只输出一个合法的 JSON 数组，不要附加任何说明、Markdown 或代码块。格式示例：
[
  {"idx": 1, "bbox": [x1, y1, x2, y2], "char": "<框内的字>"},
  {"idx": 2, "bbox": [x1, y1, x2, y2], "char": "<框内的字>"}
]
"""

RECOGNITION = """图像中有一个红色矩形框，框里是一个古文字。请辨认这个字，写出它对应的现代汉字。

要求：
- 只辨认红框里的这一个字，图中其他位置的字都不用管
- 只写一个现代汉字，不加拼音、标点、解释或其他任何字符
- 如果认不出来，就写 [UNK]

请严格按下面的格式回答：
现代汉字：<一个汉字>
"""

PARSING = """请识读这张图像中的全部汉字，并按原文的阅读顺序依次写出来。

要求：
- 严格遵循图中文字的阅读顺序
- 只写出识读到的字本身，不要添加标点、解释或分析

请严格按下面的格式回答：
提取文本：<按阅读顺序排列的汉字>
"""

CLASSIFICATION = """请判断这张图像中的汉字是用哪一种字体书写的。

只能从下面七种字体中选择一种：
1. 甲骨文
2. 金文
3. 篆书
4. 隶书
5. 楷书
6. 行书
7. 草书

要求：
- 依据字形结构、笔画特点、线条风格和整体章法作出判断
- 只给出一个最可能的字体，不要列出多个，也不要回答"无法判断"（图像极其模糊时除外）
- 不需要解释

请严格按下面的格式回答：
字体分类：<字体名称>
"""

PROMPTS = {"spotting": SPOTTING, "recognition": RECOGNITION, "parsing": PARSING,
           "classification": CLASSIFICATION}


def prompt_hashes() -> dict[str, str]:
    """Task id -> the first 16 hex digits of the prompt's SHA-256 (provenance)."""
    return {task: hashlib.sha256(text.encode()).hexdigest()[:16]
            for task, text in PROMPTS.items()}
