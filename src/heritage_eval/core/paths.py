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
import stat
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
    return _resolve_with_mode(path)[0]


def _resolve_with_mode(path: str) -> tuple[str, int | None]:
    """:func:`_resolve` and what its one ``lstat`` of the last component showed: the
    file's ``st_mode`` when it exists and is no symbolic link, ``0`` when ``lstat``
    failed (missing, unreadable: ``os.path.islink``'s test, which calls that no link),
    ``None`` when it cannot tell (a link, followed; a name ``""`` / ``.`` / ``..``,
    resolved whole)."""
    parent, name = os.path.split(path)
    if name in ("", ".", ".."):
        return os.path.realpath(path), None
    return _resolve_in(_resolved_dir(parent), name)


def _resolve_in(real_parent: str, name: str) -> tuple[str, int | None]:
    """:func:`_resolve_with_mode` of ``name`` (one component) in the resolved folder
    ``real_parent``."""
    candidate = os.path.join(real_parent, name)
    try:
        mode = os.lstat(candidate).st_mode
    except (OSError, ValueError):
        return candidate, 0
    if stat.S_ISLNK(mode):
        return os.path.realpath(candidate), None
    return candidate, mode


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


def regular_files_inside(roots: Path | str | Sequence[Path | str], reference: str,
                         bases: Sequence[str], allow_outside: bool | None = None
                         ) -> list[bool | None]:
    """:func:`joined_inside` of ``reference`` under each of ``bases`` in turn (raising
    :class:`PathOutsideRoot` at the first joined path outside ``roots``), and for each
    whether ``path_text(base, reference)`` is a regular file — as ``os.path.isfile``
    answers — where the check's own ``lstat`` already tells: ``True`` / ``False`` for a
    file that is there and no symbolic link (its mode) or that ``lstat`` could not find,
    ``None`` where it cannot tell (a link, whose target ``os.path.isfile`` follows; the
    check skipped by ``allow_outside``; a relative path; a name that ``path_text``
    writes otherwise). So a loader that checks two candidate places of an image and then
    looks for the one that exists makes two ``lstat`` calls instead of four system calls
    (issue 23). ``bases`` must be as ``str(Path(...))`` writes them."""
    root_list = ((os.fspath(roots),) if isinstance(roots, str | Path)
                 else tuple(os.fspath(r) for r in roots))
    if allow_outside is None:
        allow_outside = outside_allowed()
    if allow_outside or not root_list or not all(map(os.path.isabs, root_list)):
        for base in bases:
            joined_inside(root_list, reference, allow_outside, base=base)
        return [None] * len(bases)
    resolved_roots = _resolved_roots(root_list)
    plain = "/" not in reference and reference not in ("", ".", "..") and os.sep == "/"
    kinds: list[bool | None] = []
    for base in bases:
        real_base = _plain_base(base) if plain else None
        if real_base is not None:
            # what the general way below computes for a plain name under a folder
            # written as pathlib writes it: joined = base/name = path_text(base, name),
            # split back into (base, name), the folder resolved once (issue 23)
            joined = base + "/" + reference
            resolved, mode = _resolve_in(real_base, reference)
        else:
            joined = os.path.join(base, reference)
            if not os.path.isabs(joined):
                joined_inside(root_list, reference, allow_outside, base=base)
                kinds.append(None)
                continue
            resolved, mode = _resolve_with_mode(joined)
        if not _inside(resolved, resolved_roots):
            raise PathOutsideRoot(reference, Path(resolved),
                                  [Path(r) for r in resolved_roots])
        if mode is not None and resolved == joined and (
                real_base is not None or path_text(base, reference) == joined):
            # the lstat was of this very path and found no link: stat says the same
            # (a path lstat cannot reach, stat cannot either)
            kinds.append(stat.S_ISREG(mode))
        else:
            kinds.append(None)
    return kinds


@functools.lru_cache(maxsize=4096)
def _plain_base(base: str) -> str | None:
    """The resolved folder (:func:`_resolved_dir`) of ``base`` when ``base`` is absolute
    and written as ``os.path.normpath`` writes it, not ending in a separator (then
    ``base + "/" + name`` is the joined, normalised path of a plain ``name``), else
    ``None``."""
    if not os.path.isabs(base) or base.endswith("/") or os.path.normpath(base) != base:
        return None
    return _resolved_dir(base)
