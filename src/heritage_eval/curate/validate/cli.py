"""``heritage-eval validate ancient-bench | hcsu | muse``: the command objects.

Each prints one ``file:line: error[code]: message`` (or ``warning[code]``) line per
finding on stdout, then a summary line; ``--json FILE`` also writes the report as JSON
(atomically). Exit status: 0 clean or warnings only, 1 errors found, 2 usage error (the
data folder or export does not exist or has no benchmark layout). Light at import: the
validators are imported in the handlers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from heritage_eval.benchmarks.registry import Command
from heritage_eval.cliargs.common import add_allow_outside_option

if TYPE_CHECKING:
    from heritage_eval.curate.validate.report import Report

#: K of the HCSU K-way task used when --k is not given (HCSU §3.2; mirrors
#: ``heritage_eval.benchmarks.hcsu.discrimination.DEFAULT_K``, checked by a test).
HCSU_DEFAULT_K = 8
#: Default --phash-distance (mirrors ``imagecheck.DEFAULT_PHASH_DISTANCE``, checked by a
#: test; kept here so that --help imports no image code).
PHASH_DEFAULT = 4

_EXIT_HELP = ("\n\nEach finding is one line 'FILE:LINE: error[CODE]: MESSAGE' (or\n"
              "warning[CODE]); the last line sums up. Exit status: 0 no error (warnings\n"
              "only), 1 errors found, 2 usage error.")


def _k_value(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 2 <= value <= 26:
        raise argparse.ArgumentTypeError(f"must be between 2 and 26, got {text}")
    return value


def _distance(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 0 <= value <= 64:
        raise argparse.ArgumentTypeError(f"must be between 0 and 64 bits, got {text}")
    return value


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", type=Path, default=None, metavar="FILE",
                   help="also write the report (every finding, counts per code) as JSON "
                        "to FILE (written atomically)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar on stderr")


def _phash(p: argparse.ArgumentParser) -> None:
    p.add_argument("--phash-distance", type=_distance, default=PHASH_DEFAULT, metavar="BITS",
                   help="largest Hamming distance (0-64 bits) between the 64-bit perceptual "
                        "hashes of two images reported as duplicates "
                        f"(default: {PHASH_DEFAULT}; 0 = identical hash only)")


def _add_ancient(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, type=Path, metavar="DIR",
                   help="release root holding <category>/conv.jsonl (images beside it or "
                        "in its images/)")
    _phash(p)
    add_allow_outside_option(p)
    _common(p)


def _add_hcsu(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, type=Path, metavar="DIR",
                   help="folder holding bei/, tie/ and bei_annotations.json / "
                        "tie_annotations.json")
    p.add_argument("--k", type=_k_value, default=HCSU_DEFAULT_K,
                   help="K of the K-way task the classes must support: the true class + "
                        f"K-1 distractor classes (2-26; default: {HCSU_DEFAULT_K}, the "
                        "paper's)")
    p.add_argument("--distractor-pool", choices=("domain", "all"), default="domain",
                   help="where distractor classes come from, as in 'run "
                        "hcsu-discrimination': the target's domain (default) or both")
    _phash(p)
    _common(p)


def _add_muse(p: argparse.ArgumentParser) -> None:
    p.add_argument("--export", required=True, type=Path, metavar="FILE",
                   help="Label Studio export in the 'JSON' format (not JSON-MIN)")
    p.add_argument("--images", type=Path, default=None, metavar="DIR",
                   help="folder the tasks' data.image paths are found in, as given or by "
                        "file name (default: the export's folder)")
    _common(p)


def _finish(report: Report, args: argparse.Namespace) -> int:
    for finding in report.sorted_findings():
        print(finding)
    print(report.summary())
    if args.json is not None:
        report.write_json(args.json)
        print(f"report: {args.json}", file=sys.stderr)
    return report.exit_status()


def _missing_imagehash(command: str) -> bool:
    """Print the install line and return True when ``imagehash`` (the ``curate`` extra:
    image checks and near-duplicates) is missing."""
    from heritage_eval.core.extras import extra_problem

    missing = extra_problem("curate", ("imagehash",), command)
    if missing is not None:
        print(missing, file=sys.stderr)
    return missing is not None


def _ancient(args: argparse.Namespace) -> int:
    if _missing_imagehash("validate ancient-bench"):
        return 2
    from heritage_eval.curate.validate.ancient_bench import ReleaseLayoutError, validate_release

    try:
        report = validate_release(args.data, args.phash_distance, not args.no_progress)
    except ReleaseLayoutError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return _finish(report, args)


def _hcsu(args: argparse.Namespace) -> int:
    if _missing_imagehash("validate hcsu"):
        return 2
    from heritage_eval.curate.validate.hcsu import HcsuLayoutError, validate_hcsu

    try:
        report = validate_hcsu(args.data, args.k, args.distractor_pool, args.phash_distance,
                               not args.no_progress)
    except HcsuLayoutError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return _finish(report, args)


def _muse(args: argparse.Namespace) -> int:
    if _missing_imagehash("validate muse"):
        return 2
    from heritage_eval.curate.validate.muse import MuseExportError, validate_export

    if args.images is not None and not args.images.is_dir():
        print(f"error: --images {args.images} is not a folder", file=sys.stderr)
        return 2
    try:
        report = validate_export(args.export, args.images, not args.no_progress)
    except MuseExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return _finish(report, args)


ANCIENT_BENCH = Command(
    name="ancient-bench", help="validate an Ancient-Bench release: conv.jsonl lines, images, "
                               "annotation symbols",
    add_args=_add_ancient, handler=_ancient,
    description=(
        "Check every line of every <category>/conv.jsonl of an Ancient-Bench release:\n"
        "JSON, the image exists and decodes (size read from the header, refused over the\n"
        "decode limit, Pillow verify + bounded decode), the ground truth is not empty\n"
        "after the evaluator's normalisation, and it follows the annotation standard of\n"
        "the paper (§4.2): □ for a damaged character, <unrecognizable>, balanced\n"
        "<note>/<ignore>, repetition marks = and -, no stray punctuation; simplified\n"
        "forms in the traditional text (OpenCC s2t) and near-duplicate images\n"
        "(perceptual hash) are warnings. A malformed line is an error with its line\n"
        "number; the rest is still checked." + _EXIT_HELP))

HCSU = Command(
    name="hcsu", help="validate an HCSU release: annotations vs images, fields, K-way "
                      "feasibility, duplicates",
    add_args=_add_hcsu, handler=_hcsu,
    description=(
        "Check an HCSU release (bei/, tie/, *_annotations.json): each record (file:line)\n"
        "has the required fields (filename, char, calligrapher, script_type, quality) and\n"
        "an image that exists and decodes; every image has a record; every class has 2\n"
        "usable images and K-1 distractor classes for the K-way task (--k,\n"
        "--distractor-pool); near-duplicate images (perceptual hash) are warnings."
        + _EXIT_HELP))

MUSE = Command(
    name="muse", help="validate a Label Studio export against the MUSE schema",
    add_args=_add_muse, handler=_muse,
    description=(
        "Check a Label Studio JSON export against the MUSE schema: each task's image is\n"
        "present and decodes; every person box has emotion and visual_clues, every\n"
        "activity box activity_description; boxes lie within 0-100 % (Label Studio\n"
        "units); types match from_names; attributes, counts and relations refer to\n"
        "boxes of the right kind. Messages name the task (index and id) and the region\n"
        "id, after the line where the task begins. A JSON-MIN export is refused: export\n"
        "as 'JSON'. The labelling configuration for Label Studio is\n"
        "heritage_eval/benchmarks/muse/data/labelstudio_config.xml." + _EXIT_HELP))
