"""Presence checks for the optional modules a command needs, without importing them.

A group command whose module imports its heavy dependencies only when it runs (so that
building its options stays fast) calls :func:`require_modules` at import time instead:
when one of them is not installed, the command ends exactly as if its module had failed
to import it (``ModuleNotFoundError`` with ``name`` set, turned into the extra's
``pip install`` line by :meth:`heritage_eval.benchmarks.registry.LazyCommand.resolve`).
Uses :func:`importlib.util.find_spec`: nothing is imported, microseconds per module.
"""

from __future__ import annotations

import importlib.util


def require_modules(*names: str) -> None:
    """Raise ``ModuleNotFoundError`` (its ``name`` the first missing module) unless every
    top-level module of ``names`` (e.g. ``"cv2"``, ``"pandas"``) can be found. A finder
    that raises (a broken installation, a blocked module) counts as not found."""
    for name in names:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # ValueError: in sys.modules without a spec
            found = False
        if not found:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


__all__ = ["require_modules"]
