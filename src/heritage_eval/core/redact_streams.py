"""Every line the command line prints goes through the secret redactor
(:mod:`heritage_eval.core.redact`): :class:`RedactingStream` wraps ``sys.stdout`` /
``sys.stderr``, :class:`RedactingFilter` the logging records."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from heritage_eval.core.redact import redact


class RedactingStream:
    """A text stream wrapper that redacts every ``write``; everything else is the
    wrapped stream's (``isatty``, ``fileno``, ``encoding`` …)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        clean = redact(text)
        try:
            self._stream.write(clean)
        except UnicodeEncodeError:  # a lone surrogate from the data (JSON "\ud800", an
            # undecodable file name) or a character the encoding lacks: never a traceback
            from heritage_eval.core.unicode_text import replace_lone_surrogates

            enc = getattr(self._stream, "encoding", None) or "utf-8"
            self._stream.write(replace_lone_surrogates(clean).encode(
                enc, "backslashreplace").decode(enc))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class RedactingFilter(logging.Filter):
    """A logging filter that formats the message (and any exception text) now and
    redacts it, so no handler sees a secret."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: let the handler report it as usual
            return True
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


_FILTER = RedactingFilter()


def install_log_filter() -> None:
    """Add :class:`RedactingFilter` to the root logger and to each of its handlers
    (records of child loggers reach root's handlers without passing root's own filters).
    Idempotent."""
    root = logging.getLogger()
    for target in (root, *root.handlers):
        if _FILTER not in target.filters:
            target.addFilter(_FILTER)


@contextmanager
def redacting_std_streams() -> Iterator[None]:
    """Within the block, ``sys.stdout`` and ``sys.stderr`` redact what is written
    (restored after, also on an exception)."""

    saved = sys.stdout, sys.stderr
    sys.stdout = RedactingStream(saved[0])
    sys.stderr = RedactingStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
