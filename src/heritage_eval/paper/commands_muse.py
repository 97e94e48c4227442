"""Declarations of ``heritage-eval paper …`` commands (light: imports nothing heavy)."""

from __future__ import annotations

GROUP = "paper"
GROUP_HELP = "the papers' tables and figures from run folders, one command each"
