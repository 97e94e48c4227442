"""Free-text ``Bearer`` / ``Basic`` redaction: credentials masked, a model's words kept.

The rule (``core/redact.py``, ``_BEARER`` and ``_token_like``): outside a header,
``bearer`` or ``basic`` in any case, then a value of 16 or more token characters that
holds a digit and a letter and either both letter cases or one of ``_+=~``, or a run of
16+ hexadecimal digits mixing digits and letters, becomes ``<scheme> ***`` (a final
``.`` is kept). Before, "Basic strokes dominate" in a model's answer was written to
``samples.jsonl`` as "Basic *** dominate", and a first narrower rule still masked
"Basic proportions/composition" and "bearer 17th-century-merchant".
"""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.core.redact import REDACTOR, redact
from heritage_eval.core.store import RunFolder

#: Words as a model writes them: lower, Title, UPPER or CamelCase letters; ordinals and
#: plain numbers; joined by "-" or "/" (numbers and words) or "_" (words only), followed
#: by sentence punctuation.
_letters = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=14)
_word = st.one_of(
    st.tuples(_letters, st.sampled_from([str.lower, str.title, str.upper])).map(
        lambda p: p[1](p[0])),
    st.lists(_letters.map(str.title), min_size=2, max_size=4).map("".join),  # CamelCase
    st.lists(_letters, min_size=2, max_size=2).map(lambda p: p[0] + p[1].title()),  # iPhone
)
_number = st.one_of(st.integers(0, 10**20).map(str),
                    st.tuples(st.integers(1, 99), st.sampled_from(["st", "nd", "rd", "th"]))
                    .map(lambda p: f"{p[0]}{p[1]}"))
_phrase_word = st.one_of(
    st.lists(st.one_of(_word, _number), min_size=1, max_size=3).flatmap(
        lambda parts: st.sampled_from(["-", "/"]).map(lambda sep: sep.join(parts))),
    st.lists(_word, min_size=2, max_size=3).map("_".join))
_after = st.sampled_from(["", ".", ",", ";", "!", "?", ":", ")", " and more"])


@settings(max_examples=2000, deadline=None)
@given(st.sampled_from(["basic", "Basic", "BASIC", "bearer", "Bearer", "BEARER"]),
       st.lists(_phrase_word, min_size=1, max_size=4), _after)
def test_words_after_basic_or_bearer_are_kept(scheme: str, words: list[str],
                                              after: str) -> None:
    # guards against: a model's answer rewritten in the run folder
    text = f"The {scheme} {' '.join(words)}{after}"
    assert redact(text) == text


@pytest.mark.parametrize("text", [
    # the break-it report's answer, sentence by sentence (kept as written)
    "Basic proportions/composition follow Tang models.",
    "The bearer 17th-century-merchant seal.",
    "Basic brushwork_techniques remain.",
    "Bearer e.g.something.",
    "Basic iPhone-photographed rubbing.",
    "Basic McDonaldsRestaurantSign.",
    "Basic 1234567890123456.",
])
def test_the_reported_sentences_are_kept(text: str) -> None:
    assert redact(text) == text


def _credentials() -> list[str]:
    """Realistic credentials, each made by a fixed rule (seeded, so the grid is the
    same in every run)."""
    rng = random.Random(20261206)
    users = ["admin:hunter2hunter2", "curator:Pa55word!", "ray:token-xyz-123456",
             "lab@uni.edu:correct horse battery"]
    out = [base64.b64encode(u.encode()).decode() for u in users]  # Basic user:password
    out += [base64.urlsafe_b64encode(rng.randbytes(24)).decode()
            for _ in range(200)]                                     # opaque tokens
    out += [rng.randbytes(16).hex() for _ in range(50)]              # hex tokens
    out += ["sk-proj-" + base64.urlsafe_b64encode(rng.randbytes(30)).decode()
            for _ in range(20)]                                      # API-key shape
    out += ["ghp_" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789") for _ in range(36))
            for _ in range(20)]                                      # GitHub token shape
    out += ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJlLXZhbHVl"]  # a JWT
    return out


def test_credentials_after_basic_or_bearer_are_masked() -> None:
    # guards against: a token a server echoes in free text reaching a file
    REDACTOR.clear()  # nothing registered: the shape alone is masked
    for i, value in enumerate(_credentials()):
        for scheme in ("Bearer", "bearer", "BEARER", "Basic", "basic"):
            text = f"HTTP 401: {scheme} {value} rejected"
            assert redact(text) == f"HTTP 401: {scheme} *** rejected", (i, value)
            if not value.endswith((".", "=")):
                assert redact(f"sent {scheme} {value}.") == f"sent {scheme} ***.", value


def test_a_model_answer_is_written_as_it_came(tmp_path: Path) -> None:
    # guards against: samples.jsonl holding another prediction than the one scored
    answer = "Basic strokes dominate; the Bearer of the seal wrote 永字八法. BASIC-FORM."
    RunFolder(tmp_path).write_samples([{"prediction": answer},
                                       {"error": "HTTP 401: Bearer abcDEF0123456789xyz"}])
    lines = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text(
        encoding="utf-8").splitlines()]
    assert lines == [{"prediction": answer}, {"error": "HTTP 401: Bearer ***"}]
