"""The options of ``heritage-eval run chronicles-ocr`` (and the Python API's keywords).

``--data`` is the release folder (``Chronicles_OCR.jsonl`` + ``images/<script>/…``) or
the JSONL file itself (images then relative to its folder). ``--tasks`` / ``--scripts``
keep a subset (ids or the release's Chinese names); ``--protocol`` chooses the scoring
rules (:mod:`chronicles_ocr.protocol`); ``--seed`` is the official ``infer.py --seed``
that picks each image's recognition target.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from chronicles_ocr.names import (
    BY_ID,
    SCRIPT_CHOICES,
    SCRIPTS,
    TASK_CHOICES,
    script_of,
    task_of,
    tasks_for,
)
from chronicles_ocr.redbox import DEFAULT_SEED
from heritage_eval.plugin import BenchmarkOptions, NumberRange, opt

SEED_RANGE = NumberRange(integer=True, low=0, high=2**63 - 1)
PROTOCOL_HELP = (
    "scoring rules: 'official' = what the official code computes (IoU >= 0.75, [UNK] "
    "left as the letters UNK in parsing, unreadable spotting answers left out of "
    "Spotting, images without a recognition target scored 0); 'corrected' = what its "
    "README describes (IoU > 0.75, [UNK] removed, unreadable spotting answers scored 0 "
    "and valid boxes of a partly valid answer kept, target-less images not asked). See "
    "docs/chronicles-ocr.md")


def selection_problem(tasks: tuple[str, ...] | None, scripts: tuple[str, ...] | None
                      ) -> str | None:
    """Why ``tasks`` × ``scripts`` (ids; ``None``: all) select nothing — no chosen
    script has a chosen task (e.g. spotting of regular script) — or ``None``."""
    if tasks is None:
        return None
    chosen = [BY_ID[s] for s in scripts] if scripts is not None else list(SCRIPTS)
    if any(t in tasks_for(s) for s in chosen for t in tasks):
        return None
    ancient = ", ".join(s.id for s in SCRIPTS if s.group == "ancient")
    return (f"nothing to evaluate: the scripts chosen ({', '.join(s.id for s in chosen)}) "
            f"have none of the tasks chosen ({', '.join(tasks)}); spotting and recognition "
            f"are asked of the ancient scripts only ({ancient}), parsing and "
            "classification of every script")


def _task_id(name: str) -> str | None:
    """The id of a task named by its id or official Chinese key: a selection of
    ``--tasks`` is kept as ids, so ``parsing`` and ``字符提取`` are one task."""
    task = task_of(name)
    return task.id if task else None


def _script_id(name: str) -> str | None:
    """The id of a script named by its id or the release's Chinese name."""
    script = script_of(name)
    return script.id if script else None


class Options(BenchmarkOptions):
    """Options of ``run chronicles-ocr`` (``config.options`` in a run). Raises (as a
    validation error: ``OptionsError`` from the CLI and the Python API) when ``tasks``
    and ``scripts`` select nothing (:func:`selection_problem`)."""

    data: Annotated[Path, opt(
        "the release: a folder holding Chronicles_OCR.jsonl and images/<script>/…, or "
        "the JSONL file itself (image paths relative to its folder)", metavar="DIR")]
    tasks: Annotated[tuple[str, ...] | None, opt(
        "only these tasks (default: all four; each image gets those its script has: "
        "the ancient scripts all four, the modern ones parsing and classification); "
        "names or the official Chinese keys, several as 'a,b' or 'a b'",
        list_choices=TASK_CHOICES, canonical=_task_id, metavar="TASK")] = None
    scripts: Annotated[tuple[str, ...] | None, opt(
        "only images of these scripts (default: all seven): ids or the release's "
        "Chinese names", list_choices=SCRIPT_CHOICES, canonical=_script_id,
        metavar="SCRIPT")] = None
    protocol: Annotated[Literal["official", "corrected"], opt(
        PROTOCOL_HELP, choices=("official", "corrected"), group="scoring protocol")
    ] = "official"
    seed: Annotated[int, opt(
        "seed choosing each ancient image's recognition target (the official infer.py "
        "--seed); 'score' uses the target recorded with each answer instead",
        rule=SEED_RANGE, metavar="N", group="scoring protocol")] = DEFAULT_SEED

    def model_post_init(self, context: Any, /) -> None:
        """The rule between ``tasks`` and ``scripts`` (class docstring)."""
        problem = selection_problem(self.task_ids(), self.script_ids())
        if problem:
            raise ValueError(problem)

    def task_ids(self) -> tuple[str, ...] | None:
        """The chosen task ids (Chinese keys mapped to ids), or ``None`` for all."""
        if self.tasks is None:
            return None
        return tuple(dict.fromkeys(t.id for n in self.tasks if (t := task_of(n))))

    def script_ids(self) -> tuple[str, ...] | None:
        """The chosen script ids, or ``None`` for all."""
        if self.scripts is None:
            return None
        return tuple(dict.fromkeys(s.id for n in self.scripts if (s := script_of(n))))
