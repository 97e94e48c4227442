"""``heritage-eval stats ancient-bench|hcsu|muse``: the Command objects (light at import).

Each handler checks ``--out`` first (a non-empty folder is refused without
``--overwrite``, exit status 2), reads the collection (a missing or unreadable collection
is a usage error, exit status 2, and nothing is written), then writes the tables
(``*.csv`` + ``*.md``), the PNG figures, ``stats.md`` and ``stats.json``. Bad items
(unreadable images, malformed lines) are listed on stderr and in ``stats.json``: the
exit status is then 1, else 0.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from heritage_eval.benchmarks.registry import Command
from heritage_eval.cliargs.common import add_allow_outside_option

_OUT_HELP = ("output folder: CSV + Markdown tables, PNG figures, stats.md and stats.json "
             "(provenance, counts, every bad item)")
_EPILOG = ("--no-figures skips the PNG files.\n"
           "Exit status: 0 all read; 1 written, but bad items were found (listed on\n"
           "stderr and in stats.json); 2 usage error (nothing written).")


def _common(p: argparse.ArgumentParser, data_help: str) -> None:
    p.add_argument("--data", required=True, type=Path, metavar="PATH", help=data_help)
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help=_OUT_HELP)
    p.add_argument("--overwrite", action="store_true",
                   help="write into a non-empty --out (files of the same name are replaced, "
                        "other files are kept)")
    p.add_argument("--no-figures", action="store_true",
                   help="write the tables, stats.md and stats.json only (no PNG figures; "
                        "faster)")
    add_allow_outside_option(p)


def _start(out: Path, overwrite: bool, figures: bool = False, command: str = "stats") -> bool:
    from heritage_eval.core.extras import extra_problem
    from heritage_eval.curate.stats.output import out_folder_error

    error = extra_problem("curate", ("matplotlib",), f"{command} (its figures; "
                          "--no-figures writes the tables only)") if figures else None
    error = error or out_folder_error(out, overwrite)
    if error:
        print(error, file=sys.stderr)
    return error is None


def _end(stats_json: Path, n_items: int, what: str, n_problems: int) -> int:
    print(f"{what}: {n_items}; wrote {stats_json.parent / 'stats.md'} and {stats_json}")
    if n_problems:
        print(f"{n_problems} bad item(s): listed in {stats_json}", file=sys.stderr)
    return 1 if n_problems else 0


# ---- ancient-bench ------------------------------------------------------------------

def _ancient_args(p: argparse.ArgumentParser) -> None:
    _common(p, "Ancient-Bench release root: one folder per medium holding conv.jsonl "
               "(lines {\"image\", \"human_gt\"}) and its images")
    # a list option by the rule of every list option (docs/reference/conventions.md), read
    # as run ancient-bench --categories is: read_categories after argparse's "extend"
    p.add_argument("--media", nargs="+", action="extend", default=None, metavar="NAME",
                   help="count only these media: folder or paper names in any case (e.g. "
                        "'seals' or 'Stele'), several separated by commas or spaces, or "
                        "the option repeated (default: all found)")
    p.add_argument("--protocol", choices=("official", "paper"), default="official",
                   help="text normalisation before counting characters: 'official' (the "
                        "official evaluator's: punctuation and spaces dropped; default) or "
                        "'paper' (also lower-case, runs of □ collapsed)")


def _ancient(args: argparse.Namespace) -> int:
    from heritage_eval.benchmarks.ancient_bench.categories import read_categories
    from heritage_eval.curate.stats import ancient_bench as ab
    from heritage_eval.curate.stats.output import StatsWriter, print_problems

    try:  # "", "," and " " name no medium: refused, never "all media"
        media = read_categories(args.media)
    except ValueError as exc:
        print(f"error: --media: {exc}", file=sys.stderr)
        return 2
    if not _start(args.out, args.overwrite, not args.no_figures, "stats ancient-bench"):
        return 2
    try:
        stats = ab.collect(args.data, args.protocol, None if media is None else list(media))
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    w = StatsWriter(args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    w.table("table2_media", ab.table2(stats))
    for name in [] if args.no_figures else ab.write_figures(stats, args.out):
        w.figure(name)
    body = ab.to_json(stats)
    path = w.finish("Ancient-Bench dataset statistics", body, stats.problems, stats.warnings)
    print_problems(stats.problems, stats.warnings)
    return _end(path, body["counts"]["images"], "images", len(stats.problems))


ANCIENT_BENCH = Command(
    name="ancient-bench", help="Ancient-Bench: per-medium counts, characters and resolutions",
    add_args=_ancient_args, handler=_ancient,
    description=(
        "Dataset statistics of an Ancient-Bench collection (paper Table 2 and Fig. 2):\n"
        "per medium the images, characters per image (min/median/max after the\n"
        "normalisation of --protocol), image width and height (min/median/max, read from\n"
        "the file headers only) and source institutions when conv.jsonl names them.\n"
        "Writes table2_media.csv/.md, fig_media.png, fig_text_length.png,\n"
        "fig_resolution.png, stats.md and stats.json. Malformed lines and unreadable\n"
        "images are listed (file:line) and counted; the run goes on.\n" + _EPILOG))


# ---- hcsu ---------------------------------------------------------------------------

def _hcsu_args(p: argparse.ArgumentParser) -> None:
    _common(p, "HCSU release folder: bei/ and tie/ (or bei.zip / tie.zip) with "
               "bei_annotations.json / tie_annotations.json")
    p.add_argument("--extract-to", type=Path, default=None, metavar="DIR",
                   help="folder for extracted release zips (default: a temporary folder, "
                        "removed afterwards)")
    p.add_argument("--zip-password-env", default="HCSU_ZIP_PASSWORD", metavar="VAR",
                   help="environment variable holding the release-zip password (default: "
                        "HCSU_ZIP_PASSWORD); the password is never stored")


def _hcsu(args: argparse.Namespace) -> int:
    import os

    from heritage_eval.benchmarks.hcsu.archive import ArchiveError
    from heritage_eval.benchmarks.hcsu.loader import HcsuDataError, load_hcsu
    from heritage_eval.curate.stats import hcsu
    from heritage_eval.curate.stats.output import StatsWriter, print_problems

    if not _start(args.out, args.overwrite, not args.no_figures, "stats hcsu"):
        return 2
    password = os.environ.get(args.zip_password_env) or None
    with tempfile.TemporaryDirectory(prefix="hcsu-stats-") as tmp:
        try:
            ds = load_hcsu(args.data, extract_to=args.extract_to or Path(tmp),
                           password=password)
        except (HcsuDataError, ArchiveError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        stats = hcsu.collect(ds)
    w = StatsWriter(args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    w.table("classes", hcsu.class_table(stats))
    w.table("domains", hcsu.domain_table(stats))
    for name in [] if args.no_figures else hcsu.write_figures(stats, args.out):
        w.figure(name)
    body = hcsu.to_json(stats, args.data)
    path = w.finish("HCSU dataset statistics", body, stats.problems, stats.warnings)
    print_problems(stats.problems, stats.warnings)
    return _end(path, body["counts"]["images"], "images", len(stats.problems))


HCSU = Command(
    name="hcsu", help="HCSU: images per class and domain, scripts and dynasties",
    add_args=_hcsu_args, handler=_hcsu,
    description=(
        "Dataset statistics of an HCSU collection (paper Fig. 3): images per class\n"
        "(calligrapher-script) and per domain (Bei, Tie), scripts and dynasties per\n"
        "domain, image sizes (from headers) and characters shared by classes. Writes\n"
        "classes.csv/.md, domains.csv/.md, fig_scripts_dynasties.png, fig_classes.png,\n"
        "stats.md and stats.json. Missing or corrupt images and malformed records are\n"
        "listed and counted; the run goes on.\n" + _EPILOG))


# ---- muse ---------------------------------------------------------------------------

def _muse_args(p: argparse.ArgumentParser) -> None:
    _common(p, "Label Studio JSON export of the MUSE annotations (or a folder holding "
               "annotations.json)")
    p.add_argument("--images", type=Path, default=None, metavar="DIR",
                   help="folder the export's image paths are relative to (default: the "
                        "export's folder)")
    p.add_argument("--questions", type=Path, default=None, metavar="FILE",
                   help="a question file written by 'heritage-eval muse generate': adds "
                        "questions per task, and its scene categories and culture clusters")


def _muse(args: argparse.Namespace) -> int:
    from heritage_eval.benchmarks.muse.labelstudio import LabelStudioFormatError, load_labelstudio
    from heritage_eval.benchmarks.muse.questions import QuestionFileError
    from heritage_eval.curate.stats import muse, muse_report
    from heritage_eval.curate.stats.output import StatsWriter, print_problems

    if not _start(args.out, args.overwrite, not args.no_figures, "stats muse"):
        return 2
    export: Path = args.data / "annotations.json" if args.data.is_dir() else args.data
    if not export.is_file():
        print(f"error: Label Studio export not found: {export}", file=sys.stderr)
        return 2
    images_dir: Path = args.images or export.parent
    try:
        imported = load_labelstudio(export, images_dir)
        probe = muse.MuseStats(export)
        header = muse.add_questions(probe, args.questions) if args.questions else None
    except (LabelStudioFormatError, QuestionFileError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stats = muse.collect(imported, export, images_dir, header)
    stats.questions = probe.questions
    stats.problems += probe.problems
    w = StatsWriter(args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    w.table("regions", muse_report.region_table(stats))
    for stem, table in muse_report.label_tables(stats).items():
        w.table(stem, table)
    qt = muse_report.question_table(stats)
    if qt is not None:
        w.table("questions_per_task", qt)
    for name in [] if args.no_figures else muse_report.write_figures(stats, args.out):
        w.figure(name)
    body = muse.to_json(stats, images_dir)
    path = w.finish("MUSE dataset statistics", body, stats.problems, stats.warnings)
    print_problems(stats.problems, stats.warnings)
    return _end(path, stats.images, "images", len(stats.problems))


MUSE = Command(
    name="muse", help="MUSE: questions per task, scene themes, emotions, cultures, boxes",
    add_args=_muse_args, handler=_muse,
    description=(
        "Dataset statistics of a MUSE collection (paper Figs. 2-4) from its Label Studio\n"
        "export: people per image, person categories, emotions, scene labels and themes,\n"
        "cultural-element labels, box sizes (fraction of the image area) per box kind;\n"
        "with --questions also questions and turns per task. Writes regions, emotions,\n"
        "people, scene_themes, scenes, cultures (and questions_per_task) as CSV +\n"
        "Markdown, fig_*.png, stats.md and stats.json. Skipped tasks, missing images and\n"
        "bad question lines are listed and counted; the run goes on.\n" + _EPILOG))
