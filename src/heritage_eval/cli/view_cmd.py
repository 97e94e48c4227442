"""``heritage-eval view RUN... [--out DIR] [--serve [--port N]]`` (wired into ``cli/main.py``).

Light at import: the viewer (pydantic, Pillow, OpenCC) is imported in the handler, so
``heritage-eval --help`` stays fast.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from heritage_eval.benchmarks.registry import Command
from heritage_eval.cliargs.option_types import int_option
from heritage_eval.core.option_checks import PORT, NumberRange

#: ``--processes``: 0 (render here) to 64 worker processes
PROCESSES = NumberRange(integer=True, low=0, high=64)
#: ``--shard-size``: samples per index file (the page shows the first file's at once)
SHARD_SIZE = NumberRange(integer=True, low=1, high=10_000_000)


def _add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN",
                   help="run folders (each holds samples.jsonl and summary.json); several "
                        "runs of one benchmark are compared side by side")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="site folder (default for one run: RUN/viewer; required for "
                        "several): a new or empty folder, or an earlier site, which is "
                        "rebuilt; any other non-empty folder is refused without "
                        "--overwrite")
    p.add_argument("--overwrite", action="store_true",
                   help="build into a non-empty --out that holds no earlier site (the "
                        "site's files, e.g. index.html, static/, data/, are replaced; "
                        "other files are kept)")
    p.add_argument("--copy-images", action="store_true",
                   help="copy the original images into the site (default: link them by a "
                        "relative path; thumbnails are always made)")
    p.add_argument("--processes", type=int_option(PROCESSES, "processes"), default=None,
                   metavar="N",
                   help="worker processes rendering the sample pages (0 = none, render in "
                        "this process; default: one per CPU, at most 8, for runs over "
                        "8 MiB of samples, else 0); the site is the same either way")
    p.add_argument("--shard-size", type=int_option(SHARD_SIZE, "shard-size"), default=None,
                   metavar="N",
                   help="samples per index file (data/index-NNNN.js; default: 50,000): "
                        "the page lists the first file's samples at once and adds the "
                        "others as they load; filters cover the samples loaded so far. "
                        "A small N costs time: the page loads the files one after "
                        "another, and thousands of files load slowly; keep the default "
                        "unless the page is too slow to show its first samples")
    p.add_argument("--serve", action="store_true",
                   help="after building, serve the site on 127.0.0.1 until Ctrl-C")
    p.add_argument("--port", type=int_option(PORT, "port"), default=8000, metavar="N",
                   help="port for --serve (default: 8000; 0 = any free port)")


def _handler(args: argparse.Namespace) -> int:
    if args.out is None and len(args.runs) > 1:
        print("error: --out DIR is required when several runs are given", file=sys.stderr)
        return 2
    if args.port is not None and not 0 <= args.port <= 65535:
        print(f"error: --port must be 0-65535, not {args.port}", file=sys.stderr)
        return 2
    for r in args.runs:
        if not r.is_dir():
            what = "does not exist" if not r.exists() else "is not a folder"
            print(f"error: run folder {r} {what}", file=sys.stderr)
            return 2
    out = args.out if args.out is not None else args.runs[0] / "viewer"
    from heritage_eval.viewer import ViewerError, build
    from heritage_eval.viewer.outdir import check_site_folder

    try:  # the option named here; build() checks the same folder again
        check_site_folder(out, args.overwrite, "--out" if args.out is not None
                          else "the site folder (default --out)")
        info = build(args.runs, out, copy_images=args.copy_images,
                     processes=args.processes, shard_size=args.shard_size,
                     overwrite=args.overwrite)
    except ViewerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    benches = dict.fromkeys(b for b in info.benchmarks if b)
    if len(benches) > 1:  # shown together by design; said, so it is never a surprise
        print(f"note: the runs are of different benchmarks ({', '.join(benches)}): each "
              "has its own header; 'where models disagree' pairs runs of one benchmark "
              "only (heritage-eval compare refuses such a mix)", file=sys.stderr)
    for note in info.problems[:20]:
        print(f"warning: {note}", file=sys.stderr)
    if len(info.problems) > 20:
        print(f"warning: … and {len(info.problems) - 20} more (listed on the page)",
              file=sys.stderr)
    kib = (info.sizes.get("index", 0) + info.sizes.get("pages", 0)) / 1024
    print(f"{info.n_samples} samples, {info.sizes.get('n_pages', 0)} data page(s), "
          f"{kib:.0f} KiB of data; thumbnails: {info.made} made, {info.reused} reused "
          f"({info.seconds:.1f} s)")
    print(f"open {info.index.resolve().as_uri()}")
    if args.serve:
        from heritage_eval.cli.interrupts import received_signal
        from heritage_eval.viewer.serve import serve

        try:
            stopped = serve(info.index.parent, args.port)
        except OSError as exc:
            print(f"error: cannot serve on 127.0.0.1:{args.port}: {exc}", file=sys.stderr)
            return 2
        if stopped:  # Ctrl-C, or SIGTERM turned into Ctrl-C by cli.interrupts
            return 128 + (received_signal() or signal.SIGINT)  # 130 / 143
    return 0


VIEW = Command(
    name="view", help="browse the samples of runs in a static HTML site (images, diffs, "
                      "options, filters, models side by side)",
    add_args=_add_args, handler=_handler,
    description=(
        "Build a static site of one or several run folders and print its address. It\n"
        "opens from disk (file://) with no server and no network:\n"
        "  index.html     per run: metrics with 95 % intervals, per-group tables,\n"
        "                 provenance, state counts, PARTIAL badge, plots, problems\n"
        "  sample list    filters by state, group, score range, text search; sorting;\n"
        "                 'where models disagree' when several runs of one benchmark\n"
        "  sample view    per benchmark: Ancient-Bench character diff, HCSU candidates\n"
        "                 and descriptions, MUSE boxes, options, jigsaw pieces; every\n"
        "                 turn of the conversation; images zoomable\n"
        "Images are thumbnailed once (cached in DIR/thumbs) and linked, never inlined.\n"
        "Missing images, truncated samples.jsonl lines and unknown schema versions are\n"
        "shown on the page; the site still builds. --serve serves it on 127.0.0.1.\n"
        "Runs of different benchmarks are shown together, each under its own header.\n"
        "Exit status 2 when a RUN is not a run folder (an interrupted run with no\n"
        "record yet included: run its command again to resume it), when it holds the\n"
        "old results of an unfinished --resume with new settings, or when --out is a\n"
        "file or a non-empty folder that is not an earlier site (without --overwrite);\n"
        "130 / 143 when --serve is stopped by Ctrl-C / SIGTERM."))
