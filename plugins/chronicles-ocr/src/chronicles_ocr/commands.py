"""The plug-in's own command, declared through the entry-point group
``heritage_eval.commands``: ``heritage-eval export chronicles-ocr RUN OUT`` writes a run's
answers in the official ``results.jsonl`` layout (:mod:`chronicles_ocr.export`). Light:
the export code is imported when the command is chosen."""

from __future__ import annotations

import argparse

from heritage_eval.plugin import Command, register_command


def _add_args(p: argparse.ArgumentParser) -> None:
    from chronicles_ocr.export import add_args

    add_args(p)


def _handle(args: argparse.Namespace) -> int:
    from chronicles_ocr.export import handle

    return handle(args)


register_command("export", "export a run or a benchmark in other formats", Command(
    name="chronicles-ocr",
    help="write a Chronicles-OCR run's answers in the official results.jsonl layout",
    add_args=_add_args, handler=_handle,
    description="Write OUT/<model_tag>/results.jsonl as the official infer.py does, so the "
                "official judge (or 'heritage-eval score chronicles-ocr') can score them."))
