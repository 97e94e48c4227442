"""The redactor's cheaper anchor checks give the same text as the checks they replace.

``Redactor._apply`` decides which credential patterns to run from cheap anchor checks;
issue 23 made two of them cheaper (``"@"`` searched before ``"://"``; the four header
words searched in the UTF-8 bytes lowered instead of in ``str.lower()``). The reference
below is the ``_apply`` body as it stood before that change (copied here, so that the
new one is compared with it and not with itself), run on generated texts built from the
characters that matter: the anchors in every case, the two non-ASCII characters whose
``str.lower()`` is ASCII (U+0130, U+212A), characters that ``re.IGNORECASE`` matches
with ASCII letters (U+017F, U+0131), a lone surrogate, CJK text and line breaks.
"""

from __future__ import annotations

import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.core import redact as R


def _reference_apply(text: str, secrets: list[str], auth_header: re.Pattern[str],
                     bearer: re.Pattern[str]) -> str:
    """``Redactor._apply`` before issue 23 (the reference implementation)."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, R.MASK)
    if "://" in text and "@" in text:
        text = R._URL_USERINFO.sub(lambda m: m.group("scheme") + R.MASK + "@", text)
    if "=" in text and R._may_hold_query_key(text):
        text = R._QUERY_VALUE.sub(lambda m: m.group("lead") + R.MASK, text)
    lower = text.lower()
    if "authorization" in lower or "api-key" in lower:
        text = auth_header.sub(
            lambda m: m.group("lead") + (m.group("scheme") or "") + R.MASK, text)
    if "bearer" in lower or "basic" in lower:
        # the value rule of the substitution is not what this test compares
        text = bearer.sub(R._mask_token, text)
    if "sk-" in text:
        text = R._SK_KEY.sub("sk-" + R.MASK, text)
    return text


#: Pieces a generated text is made of: whole anchors in mixed case, their letters one
#: by one, the special characters named in the module docstring.
PIECES = ["Authorization", "AUTHORIZATION", "authorizatIon", "api-key", "API-KEY",
          "api-\u212aey", "X-Api-Key", "Bearer", "bearer", "BEARER", "basic", "Basic",
          "ba\u017fic", "ba\u017f\u0131c", "bas\u0130c", "sk-", "sk-0123456789abcdefgh",
          "https://", "user:pw@", "@", "://", "?key=", "&token=", "=", ":", " ", "\n",
          "\"", "'", "\\", "a", "b", "c", "e", "i", "k", "r", "s", "y", "z", "-",
          "\u212a", "\u0130", "\u017f", "\u0131", "\udcff", "天地玄黄", "□", "abcdef123456"]

texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@settings(max_examples=3000, deadline=None)
@given(texts)
def test_apply_matches_the_reference(text: str) -> None:
    # both pattern sets: the one-line ones (redact) and the chunk ones (redact_lines)
    for auth, bearer in ((R._AUTH_HEADER, R._BEARER),
                         (R._LINE_SAFE[R._AUTH_HEADER.pattern],
                          R._LINE_SAFE[R._BEARER.pattern])):
        assert R.Redactor._apply(text, [], auth, bearer) == \
            _reference_apply(text, [], auth, bearer)
        assert R.Redactor._apply(text, ["abcdef123456"], auth, bearer) == \
            _reference_apply(text, ["abcdef123456"], auth, bearer)


@settings(max_examples=2000, deadline=None)
@given(texts)
def test_header_anchors_match_str_lower(text: str) -> None:
    low = text.lower()
    assert R._header_anchors(text) == ("authorization" in low or "api-key" in low,
                                       "bearer" in low or "basic" in low)


def test_only_two_characters_outside_ascii_lower_to_ascii() -> None:
    # the premise of _header_anchors, over every code point (surrogates lower to
    # themselves): U+0130 -> "i" + U+0307, U+212A -> "k"
    found = [c for c in range(0x80, sys.maxunicode + 1)
             if any(ord(x) < 0x80 for x in chr(c).lower())]
    assert found == [0x130, 0x212A]
    assert "\u0130".lower() == "i\u0307"
    assert "\u212a".lower() == "k"


def test_hand_written_cases() -> None:
    # expected texts written by hand from the patterns of redact.py
    assert R.Redactor._apply("Authorization: Bearer abcdefgh 天地", [], R._AUTH_HEADER,
                             R._BEARER) == "Authorization: Bearer *** 天地"
    assert R.Redactor._apply("x-api-\u212aey: zzzzzz 天", [], R._AUTH_HEADER,
                             R._BEARER) == "x-api-\u212aey: *** 天"
    assert R.Redactor._apply("see https://u:p@host/ 天", [], R._AUTH_HEADER,
                             R._BEARER) == "see https://***@host/ 天"
    assert R.Redactor._apply("天 basic 天", [], R._AUTH_HEADER, R._BEARER) == "天 basic 天"
