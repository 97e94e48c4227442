"""Read predictions made elsewhere, in the official evaluation layout.

Layout: ``<root>/<model>/<category>/results/<stem>.json`` holding ``{"answer": ...}``
(``<stem>`` = the ground-truth ``image`` name without its extension, as the official
script builds it); UTF-8, with or without a byte-order mark.

What the official evaluator does, and what ``missing`` (``--missing``) does here:

- it reads the prediction file of each ground-truth line in turn and **stops** with
  ``FileNotFoundError`` at the first one that is missing (a file it cannot parse stops it
  too): ``error`` does the same, but lists every such file before scoring anything;
- its numbers for a prediction set with gaps (as the official demo set used by the parity
  tests) are its numbers over the ground-truth lines that have a prediction: ``skip``
  leaves the other lines out of the means and reproduces them bit for bit;
- it scores an empty answer (``""``, JSON ``null``) as an empty string, NED 0:
  ``empty`` (the default) scores a missing file the same way, so that the model's
  failure to give a prediction stays in its denominator (docs/denominators.md).

A prediction file that exists but gives no answer (:func:`read_prediction`: malformed
JSON, no ``answer`` field, an ``answer`` that is neither a string nor ``null``, an empty
file, bytes that are not UTF-8, over the size cap, not a regular file) is the model's
failure too, so ``missing`` treats it exactly as a missing file: ``empty`` scores it 0
keeping its reason, ``skip`` leaves it out, ``error`` stops (exit 2).
"""

from __future__ import annotations

import functools
import json
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from heritage_eval.benchmarks.ancient_bench.categories import MEDIA
from heritage_eval.benchmarks.ancient_bench.loader import json_error_text
from heritage_eval.benchmarks.ancient_bench.option_names import (  # noqa: F401 (its old home)
    MISSING_POLICIES,
)
from heritage_eval.core.datapath import regular_file_problem
from heritage_eval.core.paths import path_text
from heritage_eval.core.sizecap import MAX_LINE, CapExceeded, read_capped
from heritage_eval.core.unicode_text import replace_lone_surrogates

MissingPolicy = Literal["empty", "skip", "error"]


class MissingPredictionsError(Exception):
    """``missing='error'`` and some prediction files are absent; ``paths`` lists them."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        shown = "\n  ".join(str(p) for p in paths[:20])
        more = f"\n  … and {len(paths) - 20} more" if len(paths) > 20 else ""
        super().__init__(f"{len(paths)} prediction file(s) missing (the official evaluator "
                         f"stops at the first):\n  {shown}{more}")


class UnusablePredictionsError(ValueError):
    """``missing='error'`` and some prediction files exist but give no answer;
    ``reasons`` holds one reason per file (``path[:line]: why``, as
    :func:`read_prediction` gives it) and ``n_missing`` how many other files are absent.
    A ``ValueError``: the command reports it as a usage error (exit 2)."""

    def __init__(self, reasons: list[str], n_missing: int = 0) -> None:
        self.reasons = reasons
        self.n_missing = n_missing
        shown = "\n  ".join(reasons[:20])
        more = f"\n  … and {len(reasons) - 20} more" if len(reasons) > 20 else ""
        absent = f"; {n_missing} other prediction file(s) are missing" if n_missing else ""
        super().__init__(
            f"{len(reasons)} prediction file(s) cannot be used (--missing error stops at "
            f"them, as the official evaluator does){absent}:\n  {shown}{more}\n(use "
            "--missing empty to score each as an empty answer, 0, or --missing skip to "
            "leave it out)")


@dataclass(frozen=True)
class Prediction:
    """One prediction file's content: ``answer`` (``None`` = empty) or ``error`` (a reason
    naming the file); ``missing`` when the file does not exist. ``path``: the file's path
    as a string (:func:`prediction_file`)."""

    path: str
    answer: str | None = None
    error: str | None = None
    missing: bool = False


def prediction_path(root: Path, model: str, category: str, image_name: str) -> Path:
    """Path of the prediction for one ground-truth line (:func:`prediction_file` as a
    ``Path``)."""
    return Path(prediction_file(root, model, category, image_name))


def prediction_file(root: Path | str, model: str, category: str, image_name: str) -> str:
    """``<root>/<model>/<category>/results/<stem>.json`` for one ground-truth line, as a
    string: the scoring loop builds one per (model, sample), and on Python 3.11 every
    ``Path`` built interns its file name for the rest of the process (~0.1 KiB per
    pair, never freed)."""
    name = os.path.splitext(image_name)[0] + ".json"
    return path_text(_results_folder(os.fspath(root), model, category), name)


@functools.lru_cache(maxsize=1024)
def _results_folder(root: str, model: str, category: str) -> str:
    """``str(Path(root, model, category, "results"))`` (normalised: ``.`` → ``results``
    under ``model``, not ``./model``), built once per (model, category)."""
    return str(Path(root, model, category, "results"))


def read_prediction(path: str | os.PathLike[str]) -> Prediction:
    """Read one prediction file; never raises. ``missing`` when nothing is at ``path``;
    otherwise ``answer`` (``None`` for JSON ``null``) or ``error``, a reason starting with
    the path (``path:line:`` for malformed JSON): not UTF-8, malformed JSON (an empty
    file included), not an object with an ``answer`` field, an ``answer`` that is neither
    a string nor ``null``, over the ``max_line_bytes`` cap (at most the cap + 1 bytes are
    read; docs/limits.md), not a regular file, unreadable. A leading UTF-8 byte-order
    mark is dropped."""
    path = os.fspath(path)
    try:
        raw = _read_regular(path)
    except CapExceeded as exc:
        return Prediction(path=path, error=str(exc))
    except (OSError, ValueError) as exc:  # ValueError: a NUL or lone surrogate in path
        if not os.path.lexists(path):  # nothing there: no prediction file
            return Prediction(path=path, missing=True)
        why = regular_file_problem(path) if not os.path.isfile(path) else None
        return Prediction(path=path, error=f"{path}: {why or f'cannot read ({exc})'}")
    if raw is None:  # a folder, a FIFO …: something stands there, but no prediction file
        # can be read from it: an error naming it (never a silent "missing" 0 or skip)
        why = regular_file_problem(path) or "not a regular file"
        return Prediction(path=path, error=f"{path}: {why}")
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark (Windows editors) dropped
        if "\r" in text:  # as text mode reads it (universal newlines)
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        data = json.loads(text)
    except UnicodeDecodeError as exc:
        return Prediction(path=path, error=f"{path}: not valid UTF-8 ({exc.reason})")
    except json.JSONDecodeError as exc:
        why = "an empty file" if not text.strip() else json_error_text(exc)
        return Prediction(path=path, error=f"{path}:{exc.lineno}: malformed JSON ({why})")
    if not isinstance(data, dict) or "answer" not in data:
        what = "no 'answer' field" if isinstance(data, dict) else (
            f"a JSON {_json_kind(data)}, not an object with an 'answer' field")
        return Prediction(path=path, error=f"{path}: {what}")
    answer = data["answer"]
    if answer is not None and not isinstance(answer, str):
        return Prediction(path=path, error=f"{path}: 'answer' is {type(answer).__name__}, "
                                           "expected a string or null")
    # a lone surrogate ("\\ud800" in the JSON) cannot be written as UTF-8: one U+FFFD for
    # it scores as the official evaluator scores the surrogate (one unmatched token)
    return Prediction(path=path, answer=None if answer is None
                      else replace_lone_surrogates(answer))


def _json_kind(value: object) -> str:
    """The JSON name of a parsed value's type (``list`` -> ``array``)."""
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "null" if value is None else type(value).__name__


#: ``os.open`` flags: a FIFO opened for reading without a writer would block without
#: ``O_NONBLOCK`` (which changes nothing for a regular file).
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def _read_regular(path: str) -> bytes | None:
    """The bytes of the regular file at ``path`` (symbolic links followed), or ``None``
    when it is something else (a folder, a FIFO, a device: never read). Raises
    ``OSError`` when it cannot be opened (absent included) and
    :class:`~heritage_eval.core.sizecap.CapExceeded` past the ``max_line_bytes`` cap.

    The same bytes as ``read_capped`` on the opened file, in one ``read`` of the size
    ``fstat`` gives: ``read_capped`` asks for cap + 1 bytes (64 MiB), and a buffer that
    large is allocated and given back for every file — ~30 µs a file, more than the
    read itself."""
    fd = os.open(path, _OPEN_FLAGS)
    with open(fd, "rb", buffering=0) as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        if st.st_size < MAX_LINE.value():
            data = fh.read(st.st_size + 1)
            if len(data) <= st.st_size:  # the whole file (it did not grow meanwhile)
                return data
            fh.seek(0)
        return read_capped(fh, MAX_LINE, path, "prediction file")  # one JSON record


def discover_models(root: Path) -> list[str]:
    """Model folder names under a predictions root (sorted). Raises ``FileNotFoundError``
    when ``root`` is not a folder or holds no sub-folder."""
    if not root.is_dir():
        raise FileNotFoundError(f"predictions folder not found: {root}")
    models = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not models:
        raise FileNotFoundError(f"no model folders under {root}")
    return models


class PredictionLayoutError(ValueError):
    """``--predictions`` points inside a model folder (one or two levels too deep)."""


def check_model_folders(root: Path, models: Iterable[str],
                        categories: Iterable[str] = ()) -> None:
    """Refuse model folders that are really category or ``results`` folders.

    A "model" named like a medium folder (the nine of the paper or any of ``categories``),
    or holding ``results/`` itself, means ``root`` is a model folder: the fix is its
    parent. A "model" named ``results`` means ``root`` is a category folder: the fix is two
    levels up. Raises :class:`PredictionLayoutError` with that suggestion.
    """
    known = set(MEDIA) | set(categories)
    for model in models:
        folder = root / model
        if model == "results":
            up = root.resolve().parent.parent
            raise PredictionLayoutError(
                f"{root} looks like a category folder (it holds 'results/'), not a "
                f"predictions root; pass {up} (the folder holding the model folders)")
        if model in known or (folder / "results").is_dir():
            why = ("is named like a category folder" if model in known
                   else "holds 'results/' directly")
            raise PredictionLayoutError(
                f"'{model}' under {root} {why}, so {root} looks like one model's folder "
                f"rather than the predictions root; pass its parent {root.resolve().parent} "
                "(layout: <root>/<model>/<category>/results/<stem>.json)")


def _has_results(folder: Path) -> bool:
    """True when ``folder`` holds ``<category>/results/`` (a model folder)."""
    return folder.is_dir() and any(p.is_dir() for p in folder.glob("*/results"))


def check_predictions_root(root: Path, models: Iterable[str]) -> None:
    """Refuse a ``--predictions`` root none of whose model folders holds
    ``<category>/results/`` — typically one folder too high (its sub-folders are
    ``gt/``, ``predictions/`` …, not models): the message names the sub-folder that has
    the layout (``root/predictions``), if any. Raises :class:`PredictionLayoutError`."""
    models = list(models)
    if not models or any(_has_results(root / m) for m in models):
        return
    meant = [child for child in sorted(root.iterdir()) if child.is_dir()
             and any(_has_results(m) for m in child.iterdir() if m.is_dir())]
    hint = (f"; did you mean {meant[0]} (it holds <model>/<category>/results/)?" if meant
            else "")
    raise PredictionLayoutError(
        f"{root} is not a predictions root: none of its sub-folders "
        f"({', '.join(models[:6])}{', …' if len(models) > 6 else ''}) holds "
        f"<category>/results/ (layout: <root>/<model>/<category>/results/<stem>.json)"
        f"{hint}")
