"""The checks of ``run muse`` before anything is sent: an unusable question file
(:func:`input_problem`, :func:`labelstudio_hint`) and a model that would answer none of
the selected turns (:func:`refusal`, :func:`refusal_of_tasks`). Used by
:class:`~.benchmark.Muse`; light (no scoring code), like the class's module.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from heritage_eval.core.datapath import read_regular_text

if TYPE_CHECKING:
    from heritage_eval.benchmarks.muse.question_index import QuestionIndex
    from heritage_eval.benchmarks.muse.questions import Question


def input_problem(index: QuestionIndex, tasks: list[str] | None) -> str | None:
    """Why the indexed question file cannot be run with ``tasks`` (no readable question,
    or none of the selected tasks), or ``None``."""
    qs = index.qs
    if not index.n_readable:
        first = f"; first: {qs.bad[0].reason}" if qs.bad else ""
        return (f"{qs.path}: no readable question ({len(qs.bad)} unreadable line(s)"
                f"{first})")
    if not index.ids:
        have = sorted(index.file_tasks)
        return f"{qs.path}: no question of task(s) {', '.join(tasks or [])}; the file has " \
               f"{', '.join(have)}"
    return None


#: The models that suit MUSE, named when one is refused.
SUITABLE = ("'openai:NAME' (a vision-language model endpoint), 'hf:PATH' (a local "
            "transformers model), 'baseline:random' (multiple-choice tasks) or "
            "'baseline:jigsaw-edges' (jigsaw_puzzle)")


def labelstudio_hint(path: Path, max_bytes: int = 256 * 1024 * 1024) -> str:
    """``"; … use 'heritage-eval muse generate'"`` when ``path`` looks like a Label Studio
    JSON export (a JSON list of tasks with ``data`` / ``annotations``) rather than a
    question file, else ``""``. Files over ``max_bytes`` are not parsed."""
    try:
        if path.stat().st_size > max_bytes:
            return ""
        data = json.loads(read_regular_text(path, encoding="utf-8-sig"))  # no FIFO read
    except (OSError, UnicodeDecodeError, ValueError):
        return ""
    tasks = data if isinstance(data, list) else [data]
    if not tasks or not all(isinstance(t, dict) for t in tasks) or not any(
            "annotations" in t or "data" in t for t in tasks):
        return ""
    return (f"; {path} looks like a Label Studio export, not a question file: make the "
            f"questions first with 'heritage-eval muse generate --annotations {path} "
            "--images IMAGES_DIR --out questions.jsonl', then pass that file to "
            "--questions")


def refusal(spec: str, attempted: frozenset[str] | None, questions: Sequence[Question],
            tasks: list[str] | None, reads_prompt: bool = True) -> str | None:
    """Why ``spec`` cannot run any selected turn, or ``None``: an engine that ignores
    the prompt (``reads_prompt`` False: the bundled OCR engine ``rapidocr`` would only
    transcribe the image, 100 % invalid), or a backend declaring ``supported_tasks``
    (e.g. an HCSU baseline, which names no MUSE task) with none of the selected tasks,
    would leave the run empty."""
    selected = {t.task for q in questions for t in q.turns if not tasks or t.task in tasks}
    return refusal_of_tasks(spec, attempted, selected, reads_prompt)


def refusal_of_tasks(spec: str, attempted: frozenset[str] | None, selected: set[str],
                     reads_prompt: bool = True) -> str | None:
    """:func:`refusal` given the tasks of the selected turns (``selected``)."""
    if not reads_prompt and attempted is None:
        return (f"--model {spec!r} is an OCR engine: it reads the text off the image and "
                "ignores the question, so every MUSE answer would be invalid; use "
                f"{SUITABLE}")
    if attempted is None or selected & attempted:
        return None
    return (f"--model {spec!r} attempts only {', '.join(sorted(attempted)) or 'nothing'}, "
            f"none of the selected MUSE task(s) ({', '.join(sorted(selected))}); use "
            f"{SUITABLE}")
