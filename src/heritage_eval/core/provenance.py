"""Provenance block recorded in every run's ``summary.json`` (docs/reference/run-folder.md).

The block never holds a secret: the recorded command line has the values of secret
options masked (``--zip-password ***``) and every string — ``base_url`` /
``base_urls`` with ``user:KEY@`` or ``?key=`` included — passes through the process-wide
redactor (:mod:`heritage_eval.core.redact`). Whether image references outside the data
folder were allowed (:mod:`heritage_eval.core.paths`) is recorded as
``allow_outside_paths``.
"""

from __future__ import annotations

import datetime as _dt
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from heritage_eval import __version__
from heritage_eval.core.paths import outside_allowed
from heritage_eval.core.redact import redact_argv, redact_obj


def git_commit(start: Path | None = None) -> str | None:
    """Commit hash of the git checkout containing the package (``None`` if not in git).

    A ``-dirty`` suffix marks uncommitted changes.
    """
    here = start or Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True,
                                text=True, timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=here, capture_output=True, text=True, timeout=5,
                               check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{commit}-dirty" if dirty else commit


def provenance(**fields: Any) -> dict[str, Any]:
    """Standard provenance: package version, git commit, Python, platform, UTC time,
    command line (secrets masked), ``allow_outside_paths``, plus the caller's ``fields``
    (model, settings, hashes, data counts); every string redacted (module docstring).
    A ``git_commit`` field replaces the look-up (:func:`git_commit`), keeping its place."""
    base: dict[str, Any] = {
        "package": "heritage-eval",
        "package_version": __version__,
        # a caller may pass the commit it looked up meanwhile (git takes ~0.1 s)
        "git_commit": fields.pop("git_commit") if "git_commit" in fields else git_commit(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "created_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "command": " ".join(redact_argv(sys.argv)),
        "allow_outside_paths": outside_allowed(),
    }
    base.update(fields)
    redacted: dict[str, Any] = redact_obj(base)
    return redacted
