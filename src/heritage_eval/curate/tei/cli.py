"""``heritage-eval export tei --data DIR --out DIR`` (declared in ``curate/commands.py``).

Light at import: lxml and the loader are imported in the handler.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.registry import Command

DEFAULT_LICENCE = "Licence of the source images and transcriptions: not stated."


def _add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, type=Path, metavar="DIR",
                   help="Ancient-Bench release root (<medium>/conv.jsonl), or an "
                        "'export hf ancient-bench' folder")
    p.add_argument("--out", required=True, type=Path, metavar="DIR",
                   help="folder to write: OUT/<medium>/<image stem>.xml, one TEI P5 "
                        "document per image")
    p.add_argument("--categories", nargs="+", default=None, metavar="MEDIUM",
                   help="only these media (folder or paper names, e.g. seals Stele)")
    p.add_argument("--license", default=None, metavar="TEXT",
                   help="licence statement for each teiHeader's availability/licence "
                        "(default: 'not stated', with a warning)")
    p.add_argument("--copy-images", action="store_true",
                   help="copy each image to OUT/<medium>/images/ and point the facsimile "
                        "there (default: a relative path to the source image)")
    p.add_argument("--overwrite", action="store_true",
                   help="write into a non-empty --out (documents of the same name are "
                        "replaced)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _handler(args: argparse.Namespace) -> int:
    import datetime as dt
    import os
    import shutil

    from tqdm import tqdm

    from heritage_eval import __version__
    from heritage_eval.benchmarks.ancient_bench.categories import medium_name
    from heritage_eval.benchmarks.ancient_bench.loader import METADATA_FIELDS, load_release
    from heritage_eval.core.store import atomic_write_text
    from heritage_eval.curate.tei.document import Entry, build, check, serialise

    out: Path = args.out
    if out.exists() and not out.is_dir():
        print(f"error: --out {out} exists and is not a folder", file=sys.stderr)
        return 2
    if out.is_dir() and any(out.iterdir()) and not args.overwrite:
        print(f"error: --out {out} is not empty; nothing was written. Use another --out, "
              "or --overwrite to write into it anyway", file=sys.stderr)
        return 2
    try:
        release = load_release(args.data, args.categories)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.license is None:
        print("warning: no --license given: each teiHeader says the licence is not "
              "stated", file=sys.stderr)
    licence = args.license or DEFAULT_LICENCE
    date = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    publisher = f"heritage-eval {__version__} (export tei)"
    skipped: list[str] = []
    written = 0
    tty = sys.stderr.isatty()
    for s in tqdm(release.samples, desc="export tei", unit="doc", file=sys.stderr,
                  disable=args.no_progress or not release.samples,
                  mininterval=0.1 if tty else 30.0):
        if s.load_error:
            skipped.append(s.load_error)
            continue
        name = str(s.metadata["image_name"])
        stem = os.path.splitext(name)[0]
        folder = out / s.category
        image = Path(str(s.image))
        if args.copy_images:
            target = folder / "images" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(image, target)
            image = target
        doc = folder / f"{stem}.xml"
        meta: dict[str, Any] = {k: s.metadata[k] for k in METADATA_FIELDS if k in s.metadata}
        url = Path(os.path.relpath(image.resolve(), folder.resolve())).as_posix()
        entry = Entry(s.id, s.category, medium_name(s.category), name, url, str(s.target),
                      meta)
        try:
            data = serialise(build(entry, licence, publisher, date))
            check(data)
        except ValueError as exc:
            skipped.append(f"{s.source}: cannot be written as TEI ({exc})")
            continue
        atomic_write_text(doc, data.decode("utf-8"))
        written += 1
    for why in skipped[:20]:
        print(f"warning: not exported: {why}", file=sys.stderr)
    if len(skipped) > 20:
        print(f"warning: … and {len(skipped) - 20} more not exported", file=sys.stderr)
    print(f"wrote {written} TEI document(s) under {out}"
          + (f"; {len(skipped)} sample(s) not exported" if skipped else ""))
    return 1 if skipped else 0


EXPORT_TEI = Command(
    name="tei", help="Ancient-Bench transcriptions as TEI P5 documents, one per image",
    add_args=_add_args, handler=_handler,
    description=(
        "Write each Ancient-Bench ground truth as a TEI P5 document\n"
        "OUT/<medium>/<image stem>.xml (lxml; re-parsed after writing): teiHeader (title,\n"
        "licence, medium), facsimile/surface/graphic pointing at the image by a relative\n"
        "path, and the text as one ab with lb per column. Symbols: □ -> gap\n"
        "reason=illegible, <unrecognizable> -> g, <space> -> space, <note> -> note\n"
        "place=margin, <ignore> (centre seam, book ears) -> fw type=ignore.\n"
        "Samples that cannot be loaded are skipped with a warning (exit status 1).\n"
        "Refuses a non-empty --out without --overwrite (exit status 2)."))
