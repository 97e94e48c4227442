"""The written forms of an option-label declaration, as regular expressions: markers,
phrases, revisions, hedges, conclusions, bare lines and what ends a label. Part of the
label parser (:mod:`heritage_eval.core.parsing_choice`); the rule they implement is
written down in ``docs/answer-extraction.md``. Patterns holding ``{alt}`` are filled with
the alternation of the offered labels by the parser.
"""

from __future__ import annotations

import re

#: After a label: no further ASCII letter or digit (a CJK character may follow: "选C作为答案"),
#: no apostrophe + letter ("B's"), no abbreviation ("e.g.") and no operator-like character
#: ("A+", "A-", "C-shaped", "B=", "C#", "A^2", "B~D", "A%", "B±"): such a label is not a
#: clean declaration and declares nothing.
_LABEL_END = (r"(?![^\W\u3400-\u9fff\uf900-\ufaff])(?!['’][^\W_])(?!\.[^\W\d_]\.)"
              r"(?![-+=^~%#±×÷])")
#: An article before a single capital label ("The answer is a C"): skipped, never read as
#: the label "A" itself.
_LABEL_ARTICLE = r"(?:(?-i:an?|An?|the|The)[ \t]+(?=(?-i:[A-Z])(?![A-Za-z0-9])))?"
_CONNECTIVES = {"because", "since", "as", "which", "for", "given", "so"}
#: Words that never follow the article "a": after them "A" is a label ("A and B", "A is").
_NO_ARTICLE_BEFORE = _CONNECTIVES | {
    "and", "or", "nor", "is", "was", "seems", "looks", "matches", "has", "shows", "fits",
    "would", "could", "should", "might", "may", "can", "will", "does", "appears", "also",
    "too", "then", "vs"}
#: A label used negatively declares nothing ("B is wrong", "B can be ruled out", "B不对").
_NEGATED = re.compile(
    r"[\)\]]?[ \t]*(?:(?:is|are|was|seems?|looks?)\s+(?:not\b|wrong|incorrect|unlikely|"
    r"false|impossible|ruled out|excluded|eliminated)|(?:can|could|should|must|may)\s+be\s+"
    r"(?:ruled out|excluded|eliminated)|(?:不对|不對|错|錯|不是|不正确|不正確|排除|可以排除))",
    re.I)
_TAIL = r"[\(\[]?({alt})" + _LABEL_END + r"[\)\]]?"

_FINAL = (r"(?i:\bfinal\s+(?:answer|choice|option|selection|decision)"
          r"(?:\s+(?:is|would be|will be|should be))?\s*(?:option\s+|choice\s+|candidate\s+)?"
          rf"[:：=\-—–]?\s*{_LABEL_ARTICLE}|(?:最终|最終)\s*(?:答案|选择|選擇|选项|選項)\s*"
          r"(?:是|为|為)?\s*[:：]?\s*)")
_PHRASE = (
    r"(?i:\b(?:correct answer|correct option|correct choice|best option|right option|"
    r"(?:correct|right|best|matching|closest) (?:candidate|match)|"
    r"answer|choose|chose|select|selected|pick|picked|go with|i think|i believe|i'd say|"
    r"i would say|(?:option|choice|candidate|selection)(?=\s+(?:is|would be|should be|"
    r"will be)\b|\s*[:：]))"
    r"(?:\s+(?:is|would be|should be|will be))?\s*(?:option\s+|choice\s+|candidate\s+)?"
    rf"[:：=\-—–]?\s*{_LABEL_ARTICLE}|答案\s*(?:是|为|為|应为|應為)?\s*[:：]?\s*|答\s*[:：]\s*|"
    r"(?:正确|正確)(?:的|答案|选项|選項)*\s*(?:是|为|為|[:：])\s*|"
    r"(?<!候)(?:选择|選擇|选项|選項|选|選)\s*(?:是|为|為)?\s*[:：]?\s*|"
    r"(?:我认为|我認為|认为|認為|应该|應該|应|應)\s*(?:是|为|為|选|選)\s*[:：]?\s*)")
# "It is a C", "This is candidate D": a copula after it/this/that asserts the label
_COPULA = (r"(?i:\b(?:it|this|that|the (?:target|image|character|match))"
           r"(?:'s|’s|\s+is|\s+must be|\s+would be|\s+should be)\s+"
           r"(?:(?:an?|the)\s+)?(?:candidate\s+|option\s+)?)")
_REVISION = (
    r"(?i:\b(?:no[,.]?\s+wait|wait|actually|correction|i mean|on second thought|"
    r"on reflection|let me correct|sorry)\b[,，:：.!]*\s*(?:(?:the\s+)?(?:correct\s+)?answer"
    r"\s+(?:is|should be)\s*[:：]?\s*|it'?s\s+|it\s+is\s+|i(?:'ll|\s+will)?\s+(?:choose|"
    rf"pick|go with)\s+|option\s+|candidate\s+)?{_LABEL_ARTICLE})|"
    r"(?:不对|不對|更正|等等|改为|改為|改选|改選)[,，:：。!！\s]*(?:答案)?\s*(?:应)?(?:是|为|為|选|選)?"
    r"\s*(?i:option\s+|candidate\s+|选项\s*|選項\s*)?")
#: "So, C." / "Therefore C" / "Hence (B)": a conclusion word at a line or sentence start
#: whose label ends the line or the sentence (group 1 the label, a capital as offered).
_CONCLUSION = (r"(?m)(?:^|(?<=[.!?。；;]))[ \t]*(?i:so|therefore|thus|hence|consequently)"
               r"[,，:：]?[ \t]+[\(\[]?({alt})[\)\]]?[ \t]*(?:[.!。]?[ \t]*$|[.!。](?=\s))")
_HEDGE = (r"(?i:\b(?:maybe|perhaps|probably|possibly|likely|presumably|i guess|i suppose)"
          r"\b[,:]?\s*(?:(?:it'?s|it\s+is|the\s+answer\s+is|answer)\s*[:：]?\s*)?"
          rf"(?:option\s+|candidate\s+)?{_LABEL_ARTICLE})|"
          r"(?:可能|也许|也許|或许|或許|大概)\s*(?:是|选|選)?\s*")
#: A line that is only a label, or only labels joined by a hedge or a list ("B or C",
#: "A、C"): group 1 the first label, group 2 the rest of the list.
_BARE_ITEM = (r"[\(\[]?[ \t]*(?:candidate\s+|option\s+)?[\(\[]?[ \t]*(?:{alt})(?![A-Za-z0-9])"
              r"[ \t]*[\)\]]?")
_BARE_LINE = (r"(?m)^[ \t]*(?:(?:the\s+)?(?:candidate|option|choice)[ \t]*[:：]?[ \t]*)?"
              r"[\(\[]?[ \t]*({alt})(?![A-Za-z0-9])[ \t]*[\)\]]?(?:[ \t]*(?:选项|選項|项|項))?"
              r"((?:[ \t]*(?:or|and|/|或者|或|和|与|與|及|[、,，;；&])[ \t]*"
              r"(?:(?:maybe|perhaps|possibly|probably)[ \t]+)?" + _BARE_ITEM + r")*)"
              r"[ \t]*[.。:：!?？]?[ \t]*$")
