"""How a listed message (an error reason, a data problem) is shortened for a list.

Rule: a message of at most :data:`REASON_LIMIT` characters is kept whole, so the paths it
names are never cut. A longer one (an HTTP body, a traceback) is cut on a character
boundary, at the last space within the limit when that keeps at least half of it (so a
path or word is not split), else at the limit, and ends with a visible ``" …"``.
"""

from __future__ import annotations

#: Longest message kept whole (characters); far above any file path a message names.
REASON_LIMIT = 1000
#: What ends a cut message.
ELLIPSIS = " …"


def short_reason(text: str, limit: int = REASON_LIMIT) -> str:
    """``text`` whole when ``len(text) <= limit`` (``limit`` >= 2), else its first
    characters up to a space (or ``limit``) followed by :data:`ELLIPSIS`; the result is
    at most ``limit + len(ELLIPSIS)`` characters. Raises ``ValueError`` for
    ``limit < 2``."""
    if limit < 2:
        raise ValueError(f"limit must be at least 2, got {limit}")
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    if space >= limit // 2:
        head = head[:space]
    return head.rstrip() + ELLIPSIS
