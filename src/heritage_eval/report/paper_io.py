"""Shared plumbing of the ``heritage-eval paper …`` commands: run-folder arguments,
reading runs of one benchmark, the ``--out`` folder, atomic PNG writing, a CJK font.

Light at import (standard library and :mod:`heritage_eval.report.runs` only); matplotlib
is imported inside :func:`save_png` and :func:`cjk_font`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heritage_eval.core.atomic_write import file_mode
from heritage_eval.core.records_io import RunReadError
from heritage_eval.core.tables import FORMATS
from heritage_eval.report.fonts import CJK_FAMILIES
from heritage_eval.report.runs import RunData, read_run

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["CJK_FAMILIES", "INTERVALS", "PaperInputError", "add_common_args",
           "add_intervals_arg", "check_models",
           "cjk_font", "guarded", "read_runs", "save_png"]


class PaperInputError(ValueError):
    """The runs given to a ``paper`` command cannot make its table or figure (wrong
    benchmark, no record, a missing setting); the message names the folder."""


def add_common_args(p: argparse.ArgumentParser, runs_help: str, *, one: bool = False) -> None:
    """Positional run folders (``RUN_DIR ...``; exactly one with ``one``), ``--out DIR``
    (created) and ``--formats`` (table renderings, default ``md,csv,tex``)."""
    p.add_argument("runs", type=Path, nargs=1 if one else "+", metavar="RUN_DIR",
                   help=runs_help)
    p.add_argument("--out", required=True, type=Path, metavar="DIR",
                   help="folder to write the table(s) and figure(s) into (created; files "
                        "of the same name are replaced atomically, others are kept)")
    p.add_argument("--formats", default=",".join(FORMATS), metavar="LIST",
                   help="table renderings, comma-separated among md, csv, tex "
                        "(default: md,csv,tex)")


#: ``--intervals`` choices of every ``paper`` table command: none (the papers' layout),
#: pm (``± half-width``), brackets (``[low, high]``).
INTERVALS = ("none", "pm", "brackets")


def add_intervals_arg(p: argparse.ArgumentParser, what: str = "the table's values") -> None:
    """``--intervals none|pm|brackets``, the same on every ``paper`` table command: default
    ``pm``; a bare ``--intervals`` means ``pm`` too (the older flag form)."""
    p.add_argument("--intervals", nargs="?", choices=INTERVALS, default="pm", const="pm",
                   metavar="none|pm|brackets",
                   help=f"95 %% intervals of {what}: pm (± half-width, the default; also a "
                        "bare --intervals), brackets ([low, high]) or none (the papers' "
                        "layout, values only)")


def formats_of(args: argparse.Namespace) -> list[str]:
    """The ``--formats`` list; :class:`PaperInputError` for an unknown format."""
    wanted = [f.strip() for f in str(args.formats).split(",") if f.strip()]
    bad = [f for f in wanted if f not in FORMATS]
    if bad or not wanted:
        raise PaperInputError(f"--formats {args.formats!r}: choose among "
                              f"{', '.join(FORMATS)}")
    return wanted


def read_runs(paths: Sequence[Path], benchmarks: Sequence[str]) -> list[RunData]:
    """Read every run folder; each must be a run of one of ``benchmarks`` and hold at
    least one record. Raises :class:`PaperInputError` / :class:`RunReadError` naming the
    folder; skipped ``samples.jsonl`` lines, a folder given twice (its models would be
    rows ``"MODEL (run I)"`` twice) and a run whose every record ended as error (its
    cells stay empty) are printed as warnings on stderr."""
    runs = []
    seen: dict[Path, Path] = {}
    for path in paths:
        same = seen.get(path.resolve())
        if same is not None:
            print(f"warning: {path} is given twice (as {same}); its models appear twice "
                  "(rows named 'MODEL (run I)' or 'MODEL (FOLDER)')", file=sys.stderr)
        seen.setdefault(path.resolve(), path)
        run = read_run(path, whole=True)  # a damaged folder is refused, as in compare
        if run.benchmark not in benchmarks:
            raise PaperInputError(f"{path} is a {run.benchmark or 'unknown'!s} run; this "
                                  f"command reads {' or '.join(benchmarks)} runs")
        if not run.records:
            raise PaperInputError(f"{path}/samples.jsonl holds no sample record")
        for note in run.warnings:
            print(f"warning: {note}", file=sys.stderr)
        if all(r.state.value == "error" for r in run.records):
            print(f"warning: {path}: every one of its {len(run.records)} sample(s) ended as "
                  "error (no answer); its values are empty", file=sys.stderr)
        runs.append(run)
    different = different_samples_note(runs)
    if different:
        print(f"warning: {different}", file=sys.stderr)
    return runs


def different_samples_note(runs: Sequence[RunData]) -> str | None:
    """A warning when the models of ``runs`` count different samples (records that are
    not ``error``, by id): their values average different items, so their ranking is NOT
    comparable (``compare`` and ``paper ab-table3`` score on the common samples by
    default; the other tables read the runs' own numbers). ``None`` when they agree."""
    counted: dict[str, set[str]] = {}
    for i, run in enumerate(runs):
        for r in run.records:
            ids = counted.setdefault(f"{r.model} (run {i + 1})", set())
            if r.state.value != "error":
                ids.add(r.id)
    sets = list(counted.values())
    if len(sets) < 2 or all(s == sets[0] for s in sets):
        return None
    common = set.intersection(*sets)
    sizes = ", ".join(f"{m} {len(s)}" for m, s in counted.items())
    return (f"the models count DIFFERENT samples ({sizes}; {len(common)} in common): "
            "values over different items are NOT comparable; `heritage-eval compare` "
            "scores them on the common samples")


def check_models(option: str, named: Iterable[str], present: Sequence[str]) -> None:
    """:class:`PaperInputError` when a model ``named`` by ``option`` (``--type``,
    ``--group`` …) is not among the model names ``present`` in the runs; the message lists
    them (as ``muse-* --models`` does), so a typo is reported instead of ignored."""
    unknown = [m for m in dict.fromkeys(named) if m not in present]
    if unknown:
        raise PaperInputError(f"{option}: unknown model(s) {', '.join(unknown)}; the runs "
                              f"hold {', '.join(present)}")


def prepare_out(out: Path) -> Path:
    """Create ``--out``; :class:`PaperInputError` when it exists and is not a folder."""
    if out.exists() and not out.is_dir():
        raise PaperInputError(f"--out {out} exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    return out


def save_png(fig: Figure, path: Path, dpi: int = 130) -> Path:
    """Write ``fig`` as PNG to ``path`` atomically (temporary file in the same folder,
    then ``os.replace``) and close it; returns ``path``."""
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".png", dir=path.parent)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=dpi, bbox_inches="tight", format="png")
        os.chmod(tmp, file_mode())  # the umask's mode, not mkstemp's 0600
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def cjk_font() -> str | None:
    """Family name of an installed font with Chinese glyphs, or ``None``
    (:func:`heritage_eval.report.fonts.cjk_family`)."""
    from heritage_eval.report.fonts import cjk_family

    return cjk_family()


def guarded(handler: Callable[[argparse.Namespace], int]
            ) -> Callable[[argparse.Namespace], int]:
    """``handler`` with :class:`PaperInputError` / :class:`RunReadError` turned into an
    ``error: …`` line on stderr and exit status 2 (nothing is written after the error)."""
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except (PaperInputError, RunReadError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return run


def print_written(paths: Sequence[Path]) -> None:
    """One ``wrote PATH`` line per file on stdout."""
    for p in paths:
        print(f"wrote {p}")


def estimate_cell(est: Any) -> tuple[float | None, float | None, float | None]:
    """``(value, ci_low, ci_high)`` of a summary estimate dict (``None`` where absent)."""
    if not isinstance(est, dict) or est.get("value") is None:
        return None, None, None
    lo, hi = est.get("ci_low"), est.get("ci_high")
    if lo is None or hi is None:
        return float(est["value"]), None, None
    return float(est["value"]), float(lo), float(hi)
