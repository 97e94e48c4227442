"""Run the ``heritage-eval`` command line with some top-level modules made unimportable,
as if their extras were not installed (tests/packaging).

Usage: ``python blocked_cli.py ARG ...`` with ``HE_BLOCKED=cv2,scipy,...`` in the
environment. A ``sys.meta_path`` finder placed before every other one raises
``ModuleNotFoundError`` for those names and their submodules. With ``HE_BLOCK_LOG=FILE``
each attempt is appended to FILE as a JSON line ``{"module": ..., "probe": bool}``;
``probe`` is true for a presence check by :func:`heritage_eval.core.extras.missing_modules`
(``importlib.util.find_spec``), false for a real import.
"""

from __future__ import annotations

import importlib.abc
import json
import os
import sys
import traceback
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType


class Blocker(importlib.abc.MetaPathFinder):
    """Refuses every module whose top-level name is in ``names``."""

    def __init__(self, names: Sequence[str], log: str | None) -> None:
        self.names = frozenset(names)
        self.log = log

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname.partition(".")[0] not in self.names:
            return None
        if self.log:
            probe = any(f.name == "missing_modules" for f in traceback.extract_stack())
            with open(self.log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"module": fullname, "probe": probe}) + "\n")
        raise ModuleNotFoundError(f"No module named {fullname!r} (blocked by the test)",
                                  name=fullname)


def main(argv: Sequence[str]) -> int:
    names = [n for n in os.environ.get("HE_BLOCKED", "").split(",") if n]
    sys.meta_path.insert(0, Blocker(names, os.environ.get("HE_BLOCK_LOG")))
    from heritage_eval.cli.main import main as cli

    return cli(list(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
