"""How log records look on the console: the command line's own ``warning: …`` style.

Every other message of the command line starts with ``warning:`` or ``error:``
(docs/reference/conventions.md, "Output and secrets"); a log record of level WARNING or
above is written the same way, so a user reads one style whatever printed it:

- a record of this package (logger ``heritage_eval.*``): ``warning: MESSAGE``;
- a record of another library: ``warning: LOGGER: MESSAGE`` (the library is named, as
  its message may not say where it comes from);
- a record below WARNING (INFO, DEBUG; ``--verbose``): ``LEVEL LOGGER: MESSAGE``, as
  before, for those who look at the machinery.

An exception attached to a record follows its message, as with :class:`logging.Formatter`.
"""

from __future__ import annotations

import logging

#: Loggers whose names are left out of WARNING+ lines (this package's own).
OWN_PREFIX = "heritage_eval"
#: The format of records below WARNING.
DETAIL_FORMAT = "%(levelname)s %(name)s: %(message)s"


class ConsoleLogFormatter(logging.Formatter):
    """:class:`logging.Formatter` that writes WARNING+ records as ``level: message``
    (see the module docstring); lower levels use :data:`DETAIL_FORMAT`."""

    def __init__(self) -> None:
        super().__init__(DETAIL_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        if record.levelno < logging.WARNING:
            return super().formatMessage(record)
        level = record.levelname.lower()
        own = record.name == OWN_PREFIX or record.name.startswith(OWN_PREFIX + ".")
        return f"{level}: {record.message}" if own else \
            f"{level}: {record.name}: {record.message}"


def console_handler() -> logging.Handler:
    """A handler writing to the current ``sys.stderr`` with :class:`ConsoleLogFormatter`."""
    handler = logging.StreamHandler()
    handler.setFormatter(ConsoleLogFormatter())
    return handler
