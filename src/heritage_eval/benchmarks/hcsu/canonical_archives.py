"""Archives inside a canonicalize source folder: which are refused and which are noted.

``hcsu canonicalize`` reads image files only. A top-level ``bei.zip`` / ``tie.zip`` whose
folder is absent, or a split Wild archive with no release folder beside it, would leave
all their images out: refused (extract first). Any other archive is named as not read.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: The stage-image folder canonicalize writes (never listed as source).
STAGES_DIR = "_stages"

#: archive names (lower case) canonicalize never opens: ``x.zip``, split parts
#: ``x.zip.001`` / ``x.z01``, 7-Zip, RAR and tar files
_ARCHIVE = re.compile(r"\.(zip|7z|rar|tar|tgz|tar\.(gz|bz2|xz))(\.\d+)?$|\.z\d\d$")


def is_archive(name: str) -> bool:
    """Whether the file name ``name`` is an archive (:data:`_ARCHIVE`, any case)."""
    return _ARCHIVE.search(name.lower()) is not None


def archives_not_read(src: Path) -> tuple[list[str], list[str]]:
    """``(refusals, notes)`` for the archives under ``src`` (module docstring, Archives):
    a refusal for a top-level domain zip whose folder is absent or a Wild archive with no
    release folder beside it (their images would all be left out), a note for every other
    archive (relative POSIX path and why it is not read)."""
    refusals: list[str] = []
    notes: list[str] = []
    top_folders = {p.name.casefold() for p in src.iterdir() if p.is_dir()}
    own_layout = bool({"bei", "tie"} & top_folders)
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if d != STAGES_DIR)
        for name in sorted(filenames):
            if not is_archive(name):
                continue
            rel = (Path(dirpath) / name).relative_to(src).as_posix()
            stem = name.casefold().split(".", 1)[0]
            top = Path(dirpath) == src
            if top and name.casefold() in ("bei.zip", "tie.zip") and stem not in top_folders:
                refusals.append(
                    f"{src / name}: the {stem.title()} images are zipped and canonicalize "
                    f"reads image files only, so all of them would be left out; extract it "
                    f"first so that {src / stem}/ holds them, then run again")
            elif top and stem == "wild" and not own_layout:
                if any("Wild images" in r for r in refusals):
                    continue  # one refusal for all the parts
                refusals.append(
                    f"{src / name}: the Wild images are in a split archive that canonicalize "
                    "does not open; extract it first (the HCSU run commands do that "
                    "themselves and take the Wild-Resize variant), then run again")
            else:
                notes.append(f"{rel}: an archive, not read (only image files are "
                             "canonicalized)")
    return refusals, notes
