"""One run of the tutorial's commands per test session, shared by the documentation
tests: the tutorial test checks what the tutorial says about it, and the Python examples
of the other pages start from a copy of its run folders (``runs/demo-ancient-bench``,
``runs/demo-512``) instead of running the OCR again."""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from heritage_eval.cli.main import main
from tests.docs.doc_sources import DOCS, REPO, bash_commands, blocks, make_demo_argv

TUTORIAL = DOCS / "tutorial.md"


@dataclass(frozen=True)
class Ran:
    """One command of the tutorial as run: its text, exit status and output."""

    command: str
    status: int
    out: str
    err: str


@contextlib.contextmanager
def inside(folder: Path) -> Iterator[None]:
    """Run the body with ``folder`` as the working directory."""
    old = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def scratch(folder: Path) -> Path:
    """``folder`` made a working copy of the repository root for examples: ``data``
    links to the bundled demo data."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data").symlink_to(REPO / "data")
    return folder


def run_command(command: str) -> Ran | None:
    """Run one tutorial command in the working directory, in-process; ``None`` for shell
    set-up (``source …``). ``make demo`` runs the Makefile's demo recipe."""
    if command.startswith("source "):
        return None
    if command == "make demo":
        argv = make_demo_argv()
    else:
        words = shlex.split(command)
        assert words[0] == "heritage-eval", f"the tutorial runs only heritage-eval: {command}"
        argv = words[1:]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return Ran(command, status, out.getvalue(), err.getvalue())


@dataclass(frozen=True)
class TutorialRun:
    """The folder the tutorial's commands ran in, and what each printed."""

    folder: Path
    ran: list[Ran]

    def copy_runs(self, into: Path) -> None:
        """Copy the run folders into ``into/runs`` (a working copy for examples)."""
        shutil.copytree(self.folder / "runs", into / "runs", symlinks=True)


@pytest.fixture(scope="session")
def tutorial_run(tmp_path_factory: pytest.TempPathFactory) -> TutorialRun:
    folder = scratch(tmp_path_factory.mktemp("tutorial") / "repo")
    ran = []
    with inside(folder):
        for command in bash_commands(TUTORIAL):
            result = run_command(command)
            if result is not None:
                ran.append(result)
    return TutorialRun(folder, ran)


def run_python_examples(page: Path, folder: Path) -> int:
    """Run the ``python`` blocks of ``page`` that are not marked to skip, in order, in
    one namespace, with ``folder`` as the working directory; returns how many ran. A
    failing block raises with its page and line in the traceback."""
    namespace: dict[str, object] = {"__name__": "__docs_example__"}
    count = 0
    with inside(folder):
        for block in blocks(page, "python"):
            if block.skip is not None:
                continue
            exec(compile(block.code, block.where, "exec"), namespace)
            count += 1
    return count
