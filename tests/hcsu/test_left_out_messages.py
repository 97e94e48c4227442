"""Messages in summary.md's lists ("Left out", error reasons) are kept whole, paths
included; only a very long one is cut, on a character boundary, with a visible "…"
(``core/reason_text.py``; used by ``core/failure_counts.py`` and the MUSE analysis).

The user's case: ``…(nor ab1/bronze_rubbings/images/bronze_rubbings_000001.jp`` — a
message cut at 160 characters in the middle of a file name, with no sign of the cut."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.core.failure_counts import outcomes_body, outcomes_markdown
from heritage_eval.core.reason_text import ELLIPSIS, REASON_LIMIT, short_reason
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.types import Outcome

#: the shape of the user's message (a missing image under two roots), 240 characters
PATH_MESSAGE = ("missing image: " + "/data/ancient/" + "x" * 60 + "/ab1/bronze_rubbings/"
                "images/bronze_rubbings_000001.jpg (nor ab1/bronze_rubbings/images/"
                "bronze_rubbings_000001.jpg under --images)")


def _error(i: int, message: str) -> SampleRecord:
    return SampleRecord(schema="heritage-eval/sample/1", benchmark="b", model="m",
                        id=f"s{i}", state=Outcome.ERROR, scores={}, error=message,
                        groups={"domain": "Tie"})


def test_a_left_out_message_keeps_its_path_whole() -> None:
    # guards against: the Left out list cutting a path mid-name with no "…"
    assert 160 < len(PATH_MESSAGE) < REASON_LIMIT  # longer than the old cut
    body = outcomes_body([_error(0, PATH_MESSAGE), _error(1, PATH_MESSAGE)], "domain",
                         "wrong")
    md = outcomes_markdown({**body, "denominator_rule": "r"})
    assert f"- 2 × {PATH_MESSAGE}" in md  # the whole message, counted once per record


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(["a", "é", "字", " ", "/", "_", "😀"]),
               max_size=80), st.integers(2, 40))
def test_short_reason_keeps_or_cuts_visibly(text: str, limit: int) -> None:
    # guards against: a silent cut, a cut that loses more than half the limit, or a
    # shortened message that is not a prefix of the original.
    out = short_reason(text, limit)
    if len(text) <= limit:
        assert out == text  # kept whole
        return
    assert out.endswith(ELLIPSIS)
    head = out[: -len(ELLIPSIS)]
    assert text.startswith(head) and len(head) <= limit
    # cut at a space when one lies in the second half of the limit (a word kept whole)
    space = text[:limit].rfind(" ")
    if space >= limit // 2:
        assert head == text[:space].rstrip()
    else:
        assert head == text[:limit].rstrip()


def test_short_reason_by_hand() -> None:
    # guards against: an off-by-one at the limit (values worked out by hand)
    assert short_reason("abcd", 4) == "abcd"
    assert short_reason("abcde", 4) == "abcd …"
    assert short_reason("ab cdefg", 6) == "ab cde …"  # space at 2 < 6 // 2: cut at 6
    assert short_reason("abcd efgh", 7) == "abcd …"  # space at 4 >= 7 // 2: cut there
