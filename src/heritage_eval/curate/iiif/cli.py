"""``heritage-eval ingest iiif MANIFEST --out DIR`` (declared in ``curate/commands.py``).

Light at import: httpx, Pillow and the ingester are imported in the handler.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from heritage_eval.benchmarks.registry import Command
from heritage_eval.cliargs.option_types import float_option, int_option, positive_int
from heritage_eval.core import option_checks as checks

DESCRIPTION = (
    "Read a IIIF Presentation 3 manifest (a file or an http(s) URL) and fetch the image of\n"
    "every canvas through its IIIF Image API 2 or 3 service, at most --max-size pixels on\n"
    "the longest side (the service's info.json limits and listed sizes are respected),\n"
    "or from the painting body's own URL when there is no service. Writes to DIR:\n"
    "  images/<n>_<label>.jpg   the images (<n> = canvas position, 001…)\n"
    "  manifest.jsonl           one line per image: canvas id and label, rights,\n"
    "                           requiredStatement, metadata, source URL, fetch time,\n"
    "                           sha256, or the reason it failed\n"
    "  provenance.json          the manifest's rights and attribution, settings, counts\n"
    "  labelstudio_tasks.json   a Label Studio import list, to annotate for MUSE\n"
    "  conv.jsonl               an Ancient-Bench skeleton: fill in each 'human_gt'\n"
    "Run it again on the same DIR to resume: images already fetched (file present, sha256\n"
    "as recorded) are not requested again, whatever --max-size (use a new DIR for another\n"
    "size). A re-run never loses what is there: every line of conv.jsonl (a filled-in\n"
    "'human_gt') and every task of labelstudio_tasks.json is kept, only new images are\n"
    "added; records of images fetched earlier but not asked for now (a smaller --limit,\n"
    "other --regions) stay in manifest.jsonl. DIR must be new, empty or an earlier ingest\n"
    "of the same manifest (by its provenance.json); anything else is refused unless\n"
    "--overwrite. A failing image (HTTP 404, timeout, a body that is not an image) is\n"
    "recorded and the run goes on. Exit status: 0 all images fetched, 1 some failed,\n"
    "2 unusable input (manifest without images, regions file, --out).")


def _add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("manifest", metavar="MANIFEST",
                   help="a IIIF Presentation 3 manifest: a file path or an http(s) URL")
    p.add_argument("--out", required=True, type=Path, metavar="DIR",
                   help="folder to write: new, empty, or an earlier ingest of the same "
                        "manifest (resumed and merged)")
    p.add_argument("--max-size", type=positive_int, default=2048, metavar="PX",
                   help="longest side of a fetched image in pixels (default 2048: Image "
                        "API size !2048,2048; never upscaled)")
    p.add_argument("--regions", type=Path, default=None, metavar="FILE",
                   help="crop regions instead of whole images: CSV with columns "
                        "canvas,region or JSON {canvas: region or [regions]}; canvas = "
                        "its id or 1-based position, region = IIIF x,y,w,h (pixels) or "
                        "pct:x,y,w,h, quoted in CSV (1,\"0,0,100,100\"); a canvas the "
                        "manifest lacks is an error; canvases not listed are fetched whole")
    p.add_argument("--timeout", type=float_option(checks.TIMEOUT_S, "timeout"),
                   default=30.0, metavar="S",
                   help="seconds per HTTP request (default 30)")
    p.add_argument("--retries", type=int_option(checks.RETRIES, "retries"), default=3, metavar="N",
                   help="retries of a request answered 429 / 5xx or timed out, with "
                        "doubling waits from --backoff seconds, or the server's "
                        "Retry-After (default 3)")
    p.add_argument("--backoff", type=float_option(checks.BACKOFF_S, "backoff"),
                   default=1.0, metavar="S",
                   help="first wait before a retry in seconds, doubled at each retry "
                        "(default 1)")
    p.add_argument("--limit", type=positive_int, default=None, metavar="N",
                   help="only the first N canvases (for a quick try)")
    p.add_argument("--overwrite", action="store_true",
                   help="write into a non-empty DIR that is not an earlier ingest of this "
                        "manifest, and start afresh: the ingest files there (manifest.jsonl, "
                        "conv.jsonl with any filled-in human_gt, labelstudio_tasks.json, "
                        "provenance.json, images/ of the same names) are replaced, other "
                        "files left alone")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar on stderr")


def _handler(args: argparse.Namespace) -> int:
    from heritage_eval.core.extras import extra_problem

    if (missing := extra_problem("curate", ("httpx",), "ingest iiif")) is not None:
        print(missing, file=sys.stderr)
        return 2
    import httpx

    from heritage_eval.benchmarks.hcsu.runio import redacted_command
    from heritage_eval.curate.iiif.http import FetchError
    from heritage_eval.curate.iiif.ingest import Settings, ingest
    from heritage_eval.curate.iiif.manifest import ManifestError
    from heritage_eval.curate.iiif.outputs import OutError
    from heritage_eval.curate.iiif.regions import Regions, RegionsError, load_regions

    out: Path = args.out
    if out.exists() and not out.is_dir():
        print(f"error: --out {out} exists and is not a folder", file=sys.stderr)
        return 2
    if args.timeout <= 0 or args.retries < 0 or args.backoff < 0:
        print("error: --timeout must be above 0, --retries and --backoff at least 0",
              file=sys.stderr)
        return 2
    try:
        regions = load_regions(args.regions) if args.regions else Regions()
    except RegionsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    settings = Settings(max_size=args.max_size, timeout=args.timeout, retries=args.retries,
                        backoff=args.backoff,
                        limit=args.limit, regions=regions, progress=not args.no_progress,
                        overwrite=args.overwrite)
    with httpx.Client(headers={"User-Agent": "heritage-eval ingest iiif"}) as client:
        try:
            result = ingest(args.manifest, out, settings, client, redacted_command())
        except (ManifestError, FetchError, RegionsError, OutError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except (OSError, UnicodeDecodeError) as exc:
            print(f"error: cannot read manifest {args.manifest}: {exc}", file=sys.stderr)
            return 2
    for line in result.lines:
        if line.get("status") != "ok":
            print(f"error: canvas {line['n']} ({line['canvas_id']}) region {line['region']}: "
                  f"{line.get('error')} [{line.get('source_url')}]", file=sys.stderr)
    ok = len(result.lines) - result.errors + len(result.kept)
    kept = f", {len(result.kept)} kept from earlier runs" if result.kept else ""
    print(f"{ok} image(s) in {out / 'images'} ({result.fetched} fetched, {result.reused} "
          f"already there{kept}), {result.errors} failed; records: {out / 'manifest.jsonl'}")
    print(f"next: annotate for MUSE by importing {out / 'labelstudio_tasks.json'} into Label "
          f"Studio, or fill 'human_gt' in {out / 'conv.jsonl'} for Ancient-Bench",
          file=sys.stderr)
    return 1 if result.errors else 0


INGEST_IIIF = Command(
    name="iiif", help="read a IIIF Presentation 3 manifest and fetch its images "
                      "(size cap, regions)",
    add_args=_add_args, handler=_handler, description=DESCRIPTION)
