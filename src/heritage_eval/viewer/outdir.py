"""The site folder of ``heritage-eval view``: which folders a build may write into.

The rule of every command (docs/reference/conventions.md, "Files the commands write"):
an output folder that is not empty is refused unless the command resumes there or
``--overwrite`` is given. For the viewer, "resumes there" means the folder is an earlier
viewer site: building again refreshes it (thumbnails are reused). A site is recognised
by :data:`MARKER`, written first by every build (so an interrupted build is recognised
too), or, for sites built before the marker existed, by ``data/index.js`` starting with
:data:`INDEX_PREFIX`.
"""

from __future__ import annotations

from pathlib import Path

from heritage_eval.viewer.runs import ViewerError

#: the file every build writes first into its site folder
MARKER = ".heritage-eval-viewer"
MARKER_TEXT = "a site written by heritage-eval view; building again refreshes it\n"
#: how the manifest of every site (marker or not) begins
INDEX_PREFIX = b"window.HE_INDEX="


def is_site(folder: Path) -> bool:
    """Whether ``folder`` holds an earlier viewer site (:data:`MARKER`, or a
    ``data/index.js`` that starts with :data:`INDEX_PREFIX`)."""
    if (folder / MARKER).is_file():
        return True
    try:
        with (folder / "data" / "index.js").open("rb") as fh:
            return fh.read(len(INDEX_PREFIX)) == INDEX_PREFIX
    except OSError:
        return False


def check_site_folder(out: Path, overwrite: bool, name: str = "site folder") -> None:
    """Raise :class:`ViewerError` when ``out`` cannot take a site: a file, or a folder
    below a file (a path that cannot be a folder), or a non-empty folder that is not an
    earlier viewer site (:func:`is_site`) when ``overwrite`` is false. ``name`` opens the
    message (``"--out"`` on the command line). Nothing is written either way."""
    if out.exists() and not out.is_dir():
        raise ViewerError(f"{name} {out} exists and is not a folder: give a folder for "
                          "the site (a new or empty one, or an earlier site)")
    blocker = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
    if not out.exists() and blocker is not None:
        raise ViewerError(f"{name} {out} cannot be made: {blocker} is a file, not a folder")
    if out.is_dir() and not overwrite and not is_site(out) and any(out.iterdir()):
        raise ViewerError(f"{name} {out} is not empty and holds no earlier viewer site; "
                          "nothing was written. Give another (new or empty) folder, or "
                          "--overwrite to build into it anyway (the site's files are "
                          "replaced, other files kept)")


def mark_site(out: Path) -> None:
    """Write :data:`MARKER` into ``out`` (an existing folder)."""
    (out / MARKER).write_text(MARKER_TEXT, encoding="utf-8")
