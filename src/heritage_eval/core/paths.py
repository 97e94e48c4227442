"""Data references that must stay inside their data folder.

A release or question file names its images by reference (``stele/0001.jpg``,
``@images/paintings/a.jpg``, ``q_assets/jigsaw_0_A.png``). A reference that resolves
outside the data root — ``../..``, an absolute path, ``@images/../..``, or a symbolic link
whose target lies outside — would make the toolkit read and upload files it was never
given. :func:`resolve_inside` is the one check every loader uses: it resolves the
reference (following symlinks, also for a file that does not exist yet) and raises
:class:`PathOutsideRoot` unless the result lies inside one of the allowed roots, or
outside references are explicitly allowed.

Allowing them: pass ``allow_outside=True``, or set the process-wide policy with
:func:`set_outside_allowed` (what ``--allow-outside-paths`` does, via
:class:`~heritage_eval.core.config.OutputConfig`), or set the environment variable
``HERITAGE_EVAL_ALLOW_OUTSIDE_PATHS=1``. The policy in force is recorded in every run's
provenance (``allow_outside_paths``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path

#: Environment variable that allows outside references when set to 1 / true / yes.
ALLOW_ENV = "HERITAGE_EVAL_ALLOW_OUTSIDE_PATHS"
#: The command-line option that allows them.
ALLOW_OPTION = "--allow-outside-paths"

_policy: bool | None = None


class PathOutsideRoot(ValueError):
    """A data reference resolves outside every allowed root.

    ``reference``: the text as written in the data; ``resolved``: where it points (symlinks
    followed); ``roots``: the allowed folders (resolved). The message names all three and
    the option that allows it; callers prefix ``file:line``.
    """

    def __init__(self, reference: str, resolved: Path, roots: Sequence[Path]) -> None:
        self.reference = reference
        self.resolved = resolved
        self.roots = tuple(roots)
        where = " or ".join(str(r) for r in self.roots) or "(no data folder)"
        super().__init__(f"image reference {reference!r} resolves outside the data folder "
                         f"{where} (to {resolved}); refused — pass {ALLOW_OPTION} to allow "
                         "references outside the data folder")


def set_outside_allowed(flag: bool | None) -> None:
    """Set the process-wide policy (``None``: back to the default, which reads
    :data:`ALLOW_ENV`)."""
    global _policy
    _policy = flag


def outside_allowed() -> bool:
    """Whether references outside the data root are allowed now: the policy set with
    :func:`set_outside_allowed`, else :data:`ALLOW_ENV` (``1``/``true``/``yes``), else
    ``False``."""
    if _policy is not None:
        return _policy
    return os.environ.get(ALLOW_ENV, "").strip().lower() in ("1", "true", "yes")


def is_inside(path: Path, roots: Sequence[Path]) -> bool:
    """Whether ``path`` (already resolved) lies in or under one of ``roots`` (resolved)."""
    return any(path == r or path.is_relative_to(r) for r in roots)


# The caches below are keyed by *absolute* paths: a relative key would keep the answer
# for the working directory of its first call after a chdir (notebooks, the API, tests).


@functools.lru_cache(maxsize=256)
def _resolved_root_str(root: str) -> str:
    """A root folder (absolute) resolved once (10,000 samples under one root share it)."""
    return str(Path(root).resolve())


@functools.lru_cache(maxsize=256)
def _resolved_roots(roots: tuple[str, ...]) -> tuple[str, ...]:
    """Each root (absolute) resolved (as a string), once per tuple of roots."""
    return tuple(_resolved_root_str(r) for r in roots)


@functools.lru_cache(maxsize=4096)
def _resolved_dir(folder: str) -> str:
    """``os.path.realpath`` of a folder (absolute), once per folder (10,000 images share
    a few)."""
    return os.path.realpath(folder)


def _resolve(path: str) -> str:
    """``str(Path(path).resolve())`` of an absolute ``path`` (symlinks followed, ``..``
    collapsed, missing files allowed), with the parent folder resolved once per folder:
    only the last component is looked at per file (one ``lstat``), so resolving 10,000
    images of one folder costs 10,000 ``lstat`` calls instead of one per path component
    each."""
    parent, name = os.path.split(path)
    if name in ("", ".", ".."):
        return os.path.realpath(path)
    candidate = os.path.join(_resolved_dir(parent), name)
    if os.path.islink(candidate):
        return os.path.realpath(candidate)
    return candidate


def _inside(resolved: str, roots: Sequence[str]) -> bool:
    for r in roots:
        if resolved == r or resolved.startswith(r if r.endswith(os.sep) else r + os.sep):
            return True
    return False


def resolve_inside(roots: Path | str | Sequence[Path | str], reference: str | Path,
                   allow_outside: bool | None = None, *, base: Path | str | None = None
                   ) -> Path:
    """The path ``reference`` names, joined to ``base`` (default: the first root), checked
    to lie inside one of ``roots``.

    The returned path is the joined path as written (not resolved), so records keep the
    layout's own names; the check uses the fully resolved path (``..`` collapsed,
    symlinks followed, ``strict=False`` so a missing file is checked too). An absolute
    ``reference`` is taken as is. ``allow_outside``: ``True`` skips the check, ``None``
    uses :func:`outside_allowed`. Raises :class:`PathOutsideRoot` when the path is
    outside every root; ``ValueError`` when ``roots`` is empty.
    """
    return Path(joined_inside(roots, reference, allow_outside, base=base))


def path_text(folder: str, name: str) -> str:
    """``str(Path(folder, name))`` — the path as pathlib writes it (``.`` parts and
    doubled separators dropped) — without building a ``Path`` when the joined path is
    already written that way (on Python 3.11 every ``Path`` interns its components for
    the rest of the process: one more name held per image of a large run). ``name`` may
    hold separators (``images/a.png``). ``folder`` must already be as pathlib writes it
    (``str`` of a ``Path``)."""
    joined = os.path.join(folder, name)
    if folder in ("", ".") or os.path.normpath(joined) != joined:
        return str(Path(folder, name))  # ".", "..", "//", a trailing "/": pathlib's way
    return joined


def joined_inside(roots: Path | str | Sequence[Path | str], reference: str | Path,
                  allow_outside: bool | None = None, *, base: Path | str | None = None
                  ) -> str:
    """:func:`resolve_inside` without building a ``Path``: the joined path as a plain
    ``os.path.join`` string (not normalised: ``str(Path(...))`` of it is what
    :func:`resolve_inside` returns). For loops over many files: on Python 3.11 every
    ``Path`` built interns its components for the rest of the process. Raises as
    :func:`resolve_inside`."""
    root_list = ((os.fspath(roots),) if isinstance(roots, str | Path)
                 else tuple(os.fspath(r) for r in roots))
    if not root_list:
        raise ValueError("resolve_inside needs at least one root folder")
    start = os.fspath(base) if base is not None else root_list[0]
    joined = os.path.join(start, os.fspath(reference))
    if allow_outside is None:
        allow_outside = outside_allowed()
    if allow_outside:
        return joined
    if os.path.isabs(joined) and all(map(os.path.isabs, root_list)):
        resolved_roots, resolved = _resolved_roots(root_list), _resolve(joined)
    else:  # absolute keys for the caches (one getcwd per call)
        cwd = os.getcwd()
        resolved_roots = _resolved_roots(tuple(os.path.join(cwd, r) for r in root_list))
        resolved = _resolve(os.path.join(cwd, joined))
    if not _inside(resolved, resolved_roots):
        raise PathOutsideRoot(str(reference), Path(resolved),
                              [Path(r) for r in resolved_roots])
    return joined
