"""``heritage-eval export hf BENCHMARK SOURCE --out DIR`` (or ``--data SOURCE``: one form
with ``export tei``, :mod:`heritage_eval.curate.source_option`; declared in
``curate/commands.py``). Light at import: pyarrow and the loaders load in the handler."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from heritage_eval.benchmarks.registry import Command
from heritage_eval.cliargs.common import add_allow_outside_option
from heritage_eval.cliargs.option_types import float_option
from heritage_eval.core.option_checks import NumberRange
from heritage_eval.curate.source_option import add_source_args, resolve_source

BENCHMARKS = ("ancient-bench", "hcsu", "muse")
DEFAULT_SHARD_MB = 256


def _add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("benchmark", choices=BENCHMARKS, metavar="BENCHMARK",
                   help="which benchmark the source is: " + ", ".join(BENCHMARKS))
    add_source_args(p, "ancient-bench: release root (<medium>/conv.jsonl); hcsu: release "
                       "root (bei/, tie/, *_annotations.json); muse: question file "
                       "written by 'muse generate'")
    p.add_argument("--out", required=True, type=Path, metavar="DIR",
                   help="export folder to write: README.md (dataset card) and "
                        "data/<config>/test-NNNNN-of-MMMMM.parquet")
    p.add_argument("--license", default=None, metavar="ID",
                   help="licence of the data for the card's 'license' field (a Hub "
                        "licence id such as cc-by-4.0, mit); default 'other' with a "
                        "warning")
    p.add_argument("--max-shard-mb",
                   type=float_option(NumberRange(integer=False, low=0, low_open=True,
                                                 high=1 << 20, unit="MiB")),
                   default=DEFAULT_SHARD_MB, metavar="MB",
                   help=f"largest parquet shard, MiB of cell data (default "
                        f"{DEFAULT_SHARD_MB}); a new shard starts when the next row "
                        "group would pass it")
    p.add_argument("--images", type=Path, default=None, metavar="DIR",
                   help="muse only: folder of the source artworks (as 'run muse "
                        "--images'), when the question file's header does not find them")
    p.add_argument("--zip-password-env", default="HCSU_ZIP_PASSWORD", metavar="VAR",
                   help="hcsu only: environment variable holding the password of "
                        "bei.zip / tie.zip (default HCSU_ZIP_PASSWORD)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace a non-empty --out (the old folder is removed only once "
                        "the new export is complete)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_allow_outside_option(p)


def _handler(args: argparse.Namespace) -> int:
    import os
    import tempfile

    from heritage_eval.core.extras import extra_problem

    if (missing := extra_problem("curate", ("pyarrow",), "export hf")) is not None:
        print(missing, file=sys.stderr)
        return 2
    from heritage_eval.curate.hf.card import DEFAULT_LICENSE
    from heritage_eval.curate.hf.export import out_conflict, write_export
    from heritage_eval.curate.hf.spec import ExportSource, HfExportError

    if (problem := resolve_source(args)) is not None:
        print(f"error: export hf: {problem}", file=sys.stderr)
        return 2
    if args.max_shard_mb <= 0:
        print(f"error: --max-shard-mb must be > 0, got {args.max_shard_mb:g}",
              file=sys.stderr)
        return 2
    out: Path = args.out
    if out.exists() and not out.is_dir():
        print(f"error: --out {out} exists and is not a folder", file=sys.stderr)
        return 2
    if out.is_dir() and any(out.iterdir()) and not args.overwrite:
        print(f"error: --out {out} is not empty; nothing was written. Use another --out, "
              "or --overwrite to replace it", file=sys.stderr)
        return 2
    if args.images is not None and args.benchmark != "muse":
        print("error: --images is for muse only", file=sys.stderr)
        return 2
    given = [args.source, *([args.source.parent] if args.benchmark == "muse" else []),
             *([args.images] if args.images is not None else [])]
    conflict = out_conflict(out, given)  # checked again with every folder the source reads
    if conflict:
        print(f"error: {conflict}; nothing was written", file=sys.stderr)
        return 2
    license_id = args.license or DEFAULT_LICENSE
    with tempfile.TemporaryDirectory(prefix="heritage-eval-hf-") as scratch:
        try:
            src: ExportSource
            if args.benchmark == "ancient-bench":
                from heritage_eval.curate.hf.ancient_bench import source as ab

                src = ab(args.source)
            elif args.benchmark == "hcsu":
                from heritage_eval.curate.hf.hcsu import source as hcsu

                src = hcsu(args.source, Path(scratch),
                           os.environ.get(args.zip_password_env) or None)
            else:
                from heritage_eval.curate.hf.muse import source as muse

                src = muse(args.source, args.images)
        except HfExportError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        _print_list("warning", [*src.warnings, *src.problems])
        if src.total == 0:
            print(f"error: {args.source}: nothing to export (no usable sample)",
                  file=sys.stderr)
            return 1
        if args.license is None:
            print(f"warning: no --license given: the card says 'license: "
                  f"{DEFAULT_LICENSE}'; state the data's licence before sharing it",
                  file=sys.stderr)
        try:
            result = write_export(src, out, license_id, int(args.max_shard_mb * (1 << 20)),
                                  overwrite=args.overwrite, progress=not args.no_progress)
        except (FileExistsError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2 if isinstance(exc, FileExistsError) else 1
    configs = ", ".join(f"{c} {n}" for c, n in result.rows.items())
    print(f"wrote {sum(result.rows.values())} rows in {len(result.shards)} shard(s) and "
          f"README.md to {out} ({configs})")
    if src.problems:
        dropped = sum(p.startswith("not exported") for p in src.problems)
        print(f"{len(src.problems)} problem(s) (listed above): {dropped} sample(s) not "
              f"exported, {len(src.problems) - dropped} other (null images, skipped or "
              "flagged records); the rows written are complete otherwise", file=sys.stderr)
        return 1
    return 0


def _print_list(kind: str, items: list[str], most: int = 20) -> None:
    """``kind: item`` lines on stderr, the first ``most`` of them and a count of the rest."""
    for item in items[:most]:
        print(f"{kind}: {item}", file=sys.stderr)
    if len(items) > most:
        print(f"{kind}: … and {len(items) - most} more", file=sys.stderr)


EXPORT_HF = Command(
    name="hf", help="a benchmark as Hugging Face parquet shards with an image column and "
                    "a dataset card",
    add_args=_add_args, handler=_handler,
    description=(
        "Write a benchmark as parquet shards that 'datasets.load_dataset(DIR)' reads:\n"
        "images in the datasets Image encoding (original bytes), the benchmark's fields,\n"
        "one config per medium (ancient-bench), domain (hcsu) or task (muse), split\n"
        "'test', and a dataset card README.md (YAML: license, configs, dataset_info;\n"
        "body: statistics and provenance). Streams (one row group in memory), shows a\n"
        "progress bar, writes atomically (temporary folder renamed at the end) and\n"
        "refuses a non-empty --out without --overwrite (exit status 2), and an --out\n"
        "that is the source, holds it or replaces a folder inside it (exit status 2).\n"
        "Samples left out or exported with a null image (missing file, malformed line\n"
        "or record) are listed on stderr; the export is written and the exit status\n"
        "is 1.\n"
        "Read back: give DIR as 'run ancient-bench --data', 'run hcsu-* --data' or\n"
        "'run muse --questions'; it is materialised in the release layout under\n"
        "$HERITAGE_EVAL_HF_CACHE (default ~/.cache/heritage-eval/hf/<content hash>)."))
