"""``heritage-eval export tei SOURCE --out DIR`` (or ``--data SOURCE``: one form with
``export hf``, :mod:`heritage_eval.curate.source_option`; declared in
``curate/commands.py``).

Light at import: lxml and the loader are imported in the handler.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.registry import Command
from heritage_eval.cliargs.common import add_allow_outside_option
from heritage_eval.curate.source_option import add_source_args, resolve_source

DEFAULT_LICENCE = "Licence of the source images and transcriptions: not stated."


def _add_args(p: argparse.ArgumentParser) -> None:
    add_source_args(p, "Ancient-Bench release root (<medium>/conv.jsonl), or an "
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
    add_allow_outside_option(p)


#: Temporary files of the atomic writer (``core.store``): ``.<name>.xml.XXXX.tmp``.
_TEMP = re.compile(r"^\..+\.xml\..+\.tmp$")


def stale_temps(out: Path) -> list[Path]:
    """Temporary document files a killed ``export tei`` left in ``out`` or its medium
    folders (names ``.<stem>.xml.XXXX.tmp`` of :func:`heritage_eval.core.store.
    atomic_write_text`); nothing else matches."""
    if not out.is_dir():
        return []
    found = [p for p in out.iterdir() if _TEMP.match(p.name) and p.is_file()]
    for folder in out.iterdir():
        if folder.is_dir() and not folder.is_symlink():
            found += [p for p in folder.iterdir() if _TEMP.match(p.name) and p.is_file()]
    return found


def _inside_name(name: str) -> str:
    """``name`` (an image reference of conv.jsonl) as a path that stays in its medium
    folder: as written when relative without ``..``, else its last part (a reference
    leading out, allowed by --allow-outside-paths, must not place a document outside
    --out)."""
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if name.startswith(("/", "\\")) or ".." in parts or (parts and ":" in parts[0]):
        return parts[-1] if parts and parts[-1] != ".." else "image"
    return "/".join(parts) or "image"


def _is_empty(out: Path) -> bool:
    """``out`` holds nothing but :func:`stale_temps` (and the folders holding them)."""
    temps = set(stale_temps(out))
    for entry in out.iterdir():
        if entry in temps:
            continue
        if entry.is_dir() and not entry.is_symlink() and all(
                p in temps for p in entry.iterdir()):
            continue
        return False
    return True


def _handler(args: argparse.Namespace) -> int:
    import datetime as dt
    import os
    import shutil

    from tqdm import tqdm

    from heritage_eval.core.extras import extra_problem

    if (missing := extra_problem("curate", ("lxml",), "export tei")) is not None:
        print(missing, file=sys.stderr)
        return 2

    from heritage_eval import __version__
    from heritage_eval.benchmarks.ancient_bench.categories import medium_name
    from heritage_eval.benchmarks.ancient_bench.loader import METADATA_FIELDS, load_release
    from heritage_eval.core.store import atomic_write_text
    from heritage_eval.curate.tei.document import Entry, build, check, serialise
    from heritage_eval.curate.tei.markup import markup_problems

    if (problem := resolve_source(args)) is not None:
        print(f"error: export tei: {problem}", file=sys.stderr)
        return 2
    out: Path = args.out
    if out.exists() and not out.is_dir():
        print(f"error: --out {out} exists and is not a folder", file=sys.stderr)
        return 2
    if out.is_dir() and not _is_empty(out) and not args.overwrite:
        print(f"error: --out {out} is not empty; nothing was written. Use another --out, "
              "or --overwrite to write into it anyway", file=sys.stderr)
        return 2
    try:
        release = load_release(args.source, args.categories)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.license is None:
        print("warning: no --license given: each teiHeader says the licence is not "
              "stated", file=sys.stderr)
    for temp in stale_temps(out):  # a killed run's half-written documents
        temp.unlink(missing_ok=True)
    licence = args.license or DEFAULT_LICENCE
    date = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    publisher = f"heritage-eval {__version__} (export tei)"
    skipped: list[str] = []
    flagged: list[str] = []
    written = 0
    tty = sys.stderr.isatty()
    for s in tqdm(release.samples, desc="export tei", unit="doc", file=sys.stderr,
                  disable=args.no_progress or not release.samples,
                  mininterval=0.1 if tty else 30.0):
        if s.load_error:
            skipped.append(s.load_error)
            continue
        name = str(s.metadata["image_name"])
        local = _inside_name(name)
        stem = os.path.splitext(local)[0]
        folder = out / s.category
        image = Path(str(s.image))
        if args.copy_images:
            target = folder / "images" / local
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
        odd = markup_problems(str(s.target))
        if odd:
            flagged.append(f"{s.source}: {'; '.join(odd)}; written to {doc}")
    _warn("not exported", skipped)
    _warn("markup kept as text", flagged)
    print(f"wrote {written} TEI document(s) under {out}"
          + (f"; {len(skipped)} sample(s) not exported" if skipped else "")
          + (f"; {len(flagged)} document(s) with unmatched or nested <note>/<ignore>"
             if flagged else ""))
    return 1 if skipped or flagged else 0


def _warn(what: str, items: list[str], most: int = 20) -> None:
    """``warning: WHAT: item`` on stderr for the first ``most`` items, then a count."""
    for why in items[:most]:
        print(f"warning: {what}: {why}", file=sys.stderr)
    if len(items) > most:
        print(f"warning: … and {len(items) - most} more ({what})", file=sys.stderr)


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
        "A <note>/<ignore> without its partner is written as literal text, and one\n"
        "nested in a tag of the same name as nested markup; such documents are\n"
        "written and listed (conv.jsonl:LINE) with exit status 1.\n"
        "Refuses a non-empty --out without --overwrite (exit status 2); temporary\n"
        "files a killed run left there do not count and are removed."))
