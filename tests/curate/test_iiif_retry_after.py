"""The IIIF downloader reads Retry-After by the same rule as the model backend
(docs/retries.md): every form is a number of seconds or 'nothing stated', never a crash."""

from __future__ import annotations

import email.utils
import time

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.curate.iiif.http import MAX_RETRY_AFTER_S, _wait


def _resp(*values: str) -> httpx.Response:
    # raw latin-1 bytes, as a server can send them (httpx would refuse non-ASCII text)
    return httpx.Response(429, headers=[(b"Retry-After", v.encode("latin-1"))
                                        for v in values])


@pytest.mark.parametrize(("values", "expected"), [
    (("5",), 5.0), ((" 7 ",), 7.0), (("5.5",), 5.5),
    # unreadable forms are 'nothing stated': the backoff 1.0 * 2**2 = 4.0
    (("²",), 4.0), (("-5",), 4.0), (("soon",), 4.0), (("",), 4.0), ((), 4.0),
    (("1e9",), 4.0),
    # huge and several values: the largest readable one, capped at 60
    (("99999999",), MAX_RETRY_AFTER_S), (("3", "9"), 9.0), (("3, 8",), 8.0)])
def test_retry_after_forms(values: tuple[str, ...], expected: float) -> None:
    # the old reader crashed with ValueError on "²" (str.isdigit accepts it, float not)
    assert _wait(_resp(*values), 2, 1.0) == pytest.approx(expected)


def test_http_date_is_read_as_utc() -> None:
    # reference: email.utils.formatdate(usegmt=True) writes the IMF-fixdate form
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25.0 <= _wait(_resp(date), 0, 1.0) <= 31.0


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(max_codepoint=255, exclude_characters="\r\n"), max_size=40))
def test_any_header_text_gives_a_bounded_wait(text: str) -> None:
    try:
        resp = _resp(text)
    except ValueError:  # httpx refuses such a header: not our input
        return
    wait = _wait(resp, 1, 1.0)
    assert 0.0 <= wait <= MAX_RETRY_AFTER_S
