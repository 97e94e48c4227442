"""How long the ``openai`` backend waits before sending again: the server's stated wait
(``Retry-After`` / ``retry-after-ms``), exponential backoff with full jitter, and the
clock all waits are measured and slept on. The rule is written out in ``docs/retries.md``.

- :func:`retry_after`: one ``Retry-After`` field line -> seconds (not capped), or ``None``.
- :func:`http_date`: an HTTP-date in any of the three forms of RFC 9110 §5.6.7 -> POSIX
  seconds, or ``None``.
- :func:`server_wait`: the wait a whole response asks for (every field line of both headers).
- :func:`backoff_s`: the full-jitter backoff before retry ``attempt``.
- :class:`Clock`: monotonic time, wall time and an async sleep; tests pass a fake one.
"""

from __future__ import annotations

import asyncio
import calendar
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

#: Default longest wait the backend accepts from a server, seconds
#: (``--model-option max_retry_after_s``). A longer stated wait is a failure, not a wait.
MAX_RETRY_AFTER_S = 120.0


@dataclass(frozen=True)
class Clock:
    """Where the backend reads time and how it waits.

    ``monotonic()``: seconds on a clock that never goes back (scheduling, cool-downs,
    latency); ``wall()``: POSIX seconds (to read an HTTP-date against); ``sleep(s)``:
    wait ``s`` >= 0 seconds. Defaults are the real ones."""

    monotonic: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep


# delta-seconds (RFC 9110 §10.2.3) is 1*DIGIT; a decimal fraction is accepted too (it has
# one obvious meaning). ASCII digits only: no sign, exponent, "inf", "_" or other scripts.
_DELTA = re.compile(r"[0-9]+(?:\.[0-9]+)?", re.ASCII)
_OWS = " \t"

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_LONG_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_TIME = r"([0-9]{2}):([0-9]{2}):([0-9]{2})"
_MON = "(" + "|".join(_MONTHS) + ")"
_FLAGS = re.ASCII | re.IGNORECASE
# IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" (a one-digit day is tolerated)
_IMF = re.compile(r"(?:" + "|".join(_DAYS) + r"),[ \t]+([0-9]{1,2})[ \t]+" + _MON
                  + r"[ \t]+([0-9]{4})[ \t]+" + _TIME + r"[ \t]+(?:GMT|UTC)", _FLAGS)
# obsolete RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT"
_RFC850 = re.compile(r"(?:" + "|".join(_LONG_DAYS) + r"),[ \t]+([0-9]{2})-" + _MON
                     + r"-([0-9]{2})[ \t]+" + _TIME + r"[ \t]+(?:GMT|UTC)", _FLAGS)
# asctime: "Sun Nov  6 08:49:37 1994" (always UTC)
_ASCTIME = re.compile(r"(?:" + "|".join(_DAYS) + r")[ \t]+" + _MON + r"[ \t]+([0-9]{1,2})"
                      r"[ \t]+" + _TIME + r"[ \t]+([0-9]{4})", _FLAGS)


def _delta(text: str) -> float | None:
    return float(text) if _DELTA.fullmatch(text) else None


def _posix(year: int, month: str, day: int, hh: str, mm: str, ss: str) -> float | None:
    mon = _MONTHS.index(month.capitalize()) + 1
    h, m, s = int(hh), int(mm), int(ss)
    if not (1 <= year <= 9999 and 1 <= day <= calendar.monthrange(year, mon)[1]
            and h <= 23 and m <= 59 and s <= 60):  # 60: a leap second
        return None
    return float(calendar.timegm((year, mon, day, h, m, s, 0, 0, 0)))


def two_digit_year(yy: int, now: float) -> int:
    """The year an RFC 850 two-digit year ``yy`` (0..99) names at POSIX time ``now``:
    the one with those last two digits that is at most 50 years after ``now``'s year
    (RFC 9110 §5.6.7; Python's :mod:`email.utils` uses a fixed 1969/2068 pivot instead)."""
    this = time.gmtime(now).tm_year
    year = this - this % 100 + yy
    return year - 100 if year > this + 50 else year


def http_date(text: str, now: float | None = None) -> float | None:
    """POSIX seconds of an HTTP-date, or ``None`` when ``text`` is not one.

    Accepts IMF-fixdate, RFC 850 and asctime (RFC 9110 §5.6.7), all read as UTC; names
    of days and months in any case; runs of spaces or tabs between the parts. The day
    name is not checked against the date (the date wins). ``now`` (POSIX seconds,
    default the real time) only places an RFC 850 two-digit year."""
    text = text.strip(_OWS)
    if match := _IMF.fullmatch(text):
        day, mon, year, hh, mm, ss = match.groups()
        return _posix(int(year), mon, int(day), hh, mm, ss)
    if match := _RFC850.fullmatch(text):
        day, mon, yy, hh, mm, ss = match.groups()
        year = two_digit_year(int(yy), time.time() if now is None else now)
        return _posix(year, mon, int(day), hh, mm, ss)
    if match := _ASCTIME.fullmatch(text):
        mon, day, hh, mm, ss, year = match.groups()
        return _posix(int(year), mon, int(day), hh, mm, ss)
    return None


def _members(line: str, now: float) -> Iterable[str]:
    """The comma-separated members of a field line; a date's own comma (after the day
    name) is kept inside the member."""
    parts = line.split(",")
    i = 0
    while i < len(parts):
        part = parts[i]
        if i + 1 < len(parts) and _DELTA.fullmatch(part.strip(_OWS)) is None:
            joined = part + "," + parts[i + 1]
            if http_date(joined, now) is not None:
                yield joined
                i += 2
                continue
        yield part
        i += 1


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from one ``Retry-After`` field line, not capped; ``None`` when it
    says nothing usable.

    ``value``: delta-seconds (``"5"``, ``"5.5"``; spaces/tabs around ignored) or an
    HTTP-date (:func:`http_date`), or a comma list of those (the largest wait wins;
    unreadable members are ignored). ``now``: POSIX seconds a date is measured from
    (default: the real time). A date in the past gives 0.0; a number too large for a
    float gives ``inf`` (longer than any cap). ``None``, ``""``, negatives and anything
    else unreadable give ``None``. Never raises."""
    if not value:
        return None
    now = time.time() if now is None else now
    waits = []
    for member in _members(value, now):
        text = member.strip(_OWS)
        wait = _delta(text)
        if wait is None and (when := http_date(text, now)) is not None:
            wait = max(0.0, when - now)
        if wait is not None:
            waits.append(wait)
    return max(waits) if waits else None


def retry_after_ms(value: str | None) -> float | None:
    """Seconds from one ``retry-after-ms`` field line (milliseconds, same number grammar
    as delta-seconds; a comma list gives the largest), or ``None``."""
    if not value:
        return None
    waits = [w for m in value.split(",") if (w := _delta(m.strip(_OWS))) is not None]
    return max(waits) / 1000.0 if waits else None


class _MultiMapping(Protocol):
    def getall(self, key: str, default: list[str]) -> list[str]: ...


def field_lines(headers: Mapping[str, str], name: str) -> list[str]:
    """Every value of header ``name`` (case-insensitive), in order: all field lines of a
    multi-dict (aiohttp's ``getall``), else the keys of a plain mapping that match."""
    if hasattr(headers, "getall"):
        multi: _MultiMapping = headers
        return list(multi.getall(name, []))
    return [v for k, v in headers.items() if k.lower() == name]


def server_wait(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds the response asks the client to wait before sending again, not capped.

    ``retry-after-ms`` (sent by OpenAI and Azure: the same instruction in milliseconds)
    wins when one of its lines is readable; otherwise every ``Retry-After`` line is read
    with :func:`retry_after` at POSIX time ``now`` and the largest wait is kept. ``None``
    when neither says anything usable."""
    ms = [w for line in field_lines(headers, "retry-after-ms")
          if (w := retry_after_ms(line)) is not None]
    if ms:
        return max(ms)
    waits = [w for line in field_lines(headers, "retry-after")
             if (w := retry_after(line, now)) is not None]
    return max(waits) if waits else None


class _Uniform(Protocol):
    def uniform(self, a: float, b: float) -> float: ...


def backoff_s(attempt: int, base_s: float, max_s: float, rng: _Uniform) -> float:
    """Full-jitter backoff before the retry that follows attempt ``attempt`` (1-based):
    uniform in ``[0, min(max_s, base_s * 2 ** (attempt - 1))]`` seconds."""
    cap = min(max_s, base_s * 2.0 ** min(attempt - 1, 1023))
    return rng.uniform(0.0, cap)
