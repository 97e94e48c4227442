"""Every form of a server's stated wait (``Retry-After``, ``retry-after-ms``) read by
:mod:`heritage_eval.models.ratelimit`, checked against independent references: plain
``int`` / ``float`` parsing for seconds, :func:`email.utils.parsedate_to_datetime` for
HTTP-dates (formatted by :func:`email.utils.format_datetime` and :func:`time.asctime`
where the standard library has a formatter), and hand-computed values."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from multidict import CIMultiDict, CIMultiDictProxy

from heritage_eval.models.ratelimit import (
    backoff_s,
    http_date,
    retry_after,
    retry_after_ms,
    server_wait,
    two_digit_year,
)

NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC).timestamp()
LONG_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
FAST = settings(max_examples=200, deadline=None)


def imf(dt: datetime) -> str:
    return format_datetime(dt, usegmt=True)  # the standard library's IMF-fixdate writer


def rfc850(dt: datetime) -> str:  # no standard-library writer: written from RFC 9110
    return (f"{LONG_DAYS[dt.weekday()]}, {dt.day:02d}-{MONTHS[dt.month - 1]}-"
            f"{dt.year % 100:02d} {dt:%H:%M:%S} GMT")


def asctime(dt: datetime) -> str:
    return time.asctime(dt.utctimetuple())  # "Sun Nov  6 08:49:37 1994"


def reference_wait(text: str, now: float) -> float:
    """The wait a date asks for, by the standard library (asctime has no zone: UTC)."""
    when = parsedate_to_datetime(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - now)


OWS = st.text(alphabet=" \t", max_size=3)
DATES = st.integers(-10 * 366 * 86400, 10 * 366 * 86400).map(
    lambda s: datetime.fromtimestamp(NOW, UTC) + timedelta(seconds=s))


@FAST
@given(st.integers(0, 10**9), OWS, OWS)
def test_delta_seconds_equal_plain_int_parsing(n: int, left: str, right: str) -> None:
    # Reference: int() of the digits; surrounding spaces/tabs (OWS) change nothing.
    text = left + str(n) + right
    assert retry_after(text, NOW) == float(int(str(n)))
    assert retry_after("0" * 3 + str(n), NOW) == float(n)  # leading zeros: same number


@FAST
@given(st.integers(0, 10**6), st.integers(0, 10**6))
def test_fractional_seconds_are_accepted_as_float(whole: int, frac: int) -> None:
    # Our extension to the integer-only grammar: "5.5" means 5.5 s. Reference: float().
    text = f"{whole}.{frac}"
    assert retry_after(text, NOW) == float(text)


@FAST
@given(DATES, st.sampled_from([imf, rfc850, asctime]), st.integers(-3600, 3600))
def test_http_dates_in_all_three_forms_match_the_stdlib(dt: datetime, form: object,
                                                       shift: int) -> None:
    # Dates within 10 years of 2025: the RFC 850 two-digit year means the same year for
    # both rules there. The wait is the date minus now, 0 for a date in the past.
    assert callable(form)
    text = form(dt)
    now = NOW + shift
    assert retry_after(text, now) == reference_wait(text, now)
    assert http_date(text, now) == reference_wait(text, 0.0)


def test_hand_picked_forms() -> None:
    # Values by hand: RFC 9110's example date is 784111777 POSIX seconds.
    example = 784111777.0
    for text in ("Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
                 "Sun Nov  6 08:49:37 1994", "sun, 06 nov 1994 08:49:37 gmt",
                 "Sun,  6 Nov 1994 08:49:37 GMT", " \tSun Nov 6 08:49:37 1994 "):
        assert http_date(text, NOW) == example, text
        assert retry_after(text, example - 30) == 30.0
        assert retry_after(text, NOW) == 0.0  # in the past: send now
    assert retry_after("0", NOW) == 0.0
    assert retry_after("5", NOW) == 5.0 and retry_after(" 5 ", NOW) == 5.0
    assert retry_after("5.5", NOW) == 5.5
    assert retry_after("99999999", NOW) == 99999999.0
    assert retry_after("9" * 400, NOW) == float("inf")  # longer than any cap
    # a leap second is the next day's first second
    assert http_date("Sat, 31 Dec 2016 23:59:60 GMT") == http_date("Sun, 01 Jan 2017 00:00:00 GMT")
    years_ahead = datetime.fromtimestamp(NOW, UTC).replace(year=2031)
    assert retry_after(imf(years_ahead), NOW) == 6 * 365 * 86400 + 86400  # 2028 is leap


@pytest.mark.parametrize("text", [
    None, "", " ", "-5", "+5", "-0", "1e3", "inf", "nan", "0x10", "1_000", "５", "٣",
    "5s", "5 s", ".5", "5.", "soon", "Sun, 06 Nov 1994 08:49:37 PST",
    "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
    "Sun, 06 Nov 1994 08:49:37", "Sunday, 06-Nov-1994 08:49:37 GMT",
    "Sun Nov  6 08:49:37 0000", "6 Nov 1994", "Xyz, 06 Nov 1994 08:49:37 GMT", ",", ", ,"])
def test_garbage_negative_and_empty_say_nothing(text: str | None) -> None:
    # Unreadable -> None: the backend falls back to its own backoff.
    assert retry_after(text, NOW) is None


@FAST
@given(st.text(max_size=40))
def test_any_text_never_raises_and_accepts_only_what_a_reference_reads(text: str) -> None:
    got = retry_after(text, NOW)
    assert got is None or got >= 0.0
    if got is not None and "," not in text:
        stripped = text.strip(" \t")
        if stripped.isascii() and stripped.replace(".", "", 1).isdigit():
            assert got == float(stripped)
        else:  # anything else we accept, the standard library reads as the same date
            assert got == reference_wait(stripped, NOW)


@FAST
@given(st.lists(st.one_of(st.integers(0, 10**6).map(str),
                          DATES.map(imf), DATES.map(rfc850), DATES.map(asctime),
                          st.sampled_from(["soon", "-1", ""])), min_size=1, max_size=5))
def test_comma_lists_take_the_largest_readable_member(members: list[str]) -> None:
    # A date's own comma stays inside it; unreadable members are ignored; the largest
    # wait wins (never send before any stated time).
    waits = [float(m) if m.isdigit() else reference_wait(m, NOW)
             for m in members if m and m not in ("soon", "-1")]
    assert retry_after(", ".join(members), NOW) == (max(waits) if waits else None)


def test_two_digit_years_follow_rfc_9110_not_the_stdlib_pivot() -> None:
    # Hand-computed for 2025: at most 50 years ahead, else the century before.
    for yy, year in ((94, 1994), (25, 2025), (70, 2070), (75, 2075), (76, 1976), (0, 2000)):
        assert two_digit_year(yy, NOW) == year
    text = "Sunday, 06-Nov-70 08:49:37 GMT"
    assert parsedate_to_datetime(text).year == 1970  # the stdlib's fixed pivot differs
    assert http_date(text, NOW) == datetime(2070, 11, 6, 8, 49, 37, tzinfo=UTC).timestamp()


def test_several_field_lines_and_retry_after_ms() -> None:
    multi = CIMultiDictProxy(CIMultiDict([("Retry-After", "5"), ("retry-after", "12"),
                                          ("Retry-After", "soon")]))
    assert server_wait(multi, NOW) == 12.0  # every line read, the largest kept
    assert server_wait({"Retry-After": "5", "retry-after": "12"}, NOW) == 12.0  # plain dict
    assert server_wait({}, NOW) is None and server_wait({"Retry-After": ""}, NOW) is None
    # retry-after-ms is the same instruction in milliseconds and wins when readable
    assert server_wait({"retry-after-ms": "1500", "Retry-After": "2"}, NOW) == 1.5
    assert server_wait({"retry-after-ms": "abc", "Retry-After": "2"}, NOW) == 2.0
    assert retry_after_ms("250, 1000") == 1.0 and retry_after_ms("-3") is None
    # x-ratelimit-reset-* are not wait instructions and are not read
    assert server_wait({"x-ratelimit-reset-requests": "6m0s"}, NOW) is None


def test_backoff_is_full_jitter_under_a_doubling_cap() -> None:
    # uniform(0, min(max, base * 2**(attempt-1))), computed by hand for base 1, max 10.
    class Bounds:
        def __init__(self) -> None:
            self.calls: list[tuple[float, float]] = []

        def uniform(self, a: float, b: float) -> float:
            self.calls.append((a, b))
            return b

    rng = Bounds()
    waits = [backoff_s(k, 1.0, 10.0, rng) for k in (1, 2, 3, 4, 5, 2000)]
    assert waits == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    assert all(a == 0.0 for a, _ in rng.calls)
