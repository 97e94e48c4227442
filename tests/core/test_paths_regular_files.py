"""``paths.regular_files_inside`` answers as ``joined_inside`` + ``os.path.isfile`` do.

Issue 23: the Ancient-Bench loader checks two candidate places of each image against
the release root and then looks for the one that is a regular file; the check's own
``lstat`` now answers the second question where it can. The reference here is the two
calls it replaces (``joined_inside`` per base, then ``os.path.isfile``), run on a grid
of every kind of entry a release can hold (file, folder, FIFO, missing, links inside,
outside, to a folder, dangling, looping), under a real and a symlinked base folder,
with plain names and names holding ``/``, ``.``, ``..`` or an absolute path.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from heritage_eval.core.paths import PathOutsideRoot, joined_inside, regular_files_inside

NAMES = ["file.png", "missing.png", "folder", "fifo", "in_link.png", "out_link.png",
         "dir_link", "dangling.png", "loop.png", "sub/deep.png", "./file.png",
         "sub/../file.png", "../outside.png", "..", ".", "", "/etc/hostname"]


def _release(tmp: Path) -> tuple[Path, list[str]]:
    root = tmp / "release"
    outside = tmp / "outside"
    outside.mkdir()
    (outside / "secret.png").write_bytes(b"x")
    (tmp / "outside.png").write_bytes(b"x")
    bases = []
    for name in ("cat", "cat/images"):
        base = root / name
        (base / "sub").mkdir(parents=True)
        (base / "file.png").write_bytes(b"x")
        (base / "sub" / "deep.png").write_bytes(b"x")
        (base / "folder").mkdir()
        os.mkfifo(base / "fifo")
        os.symlink(base / "file.png", base / "in_link.png")
        os.symlink(outside / "secret.png", base / "out_link.png")
        os.symlink(base / "folder", base / "dir_link")
        os.symlink(base / "nothing.png", base / "dangling.png")
        os.symlink(base / "loop.png", base / "loop.png")
        bases.append(str(base))
    (root / "cat" / "images" / "file.png").unlink()  # the two places differ
    os.symlink(root / "cat", root / "linked_cat")  # a base folder reached by a link
    bases.append(str(root / "linked_cat"))
    return root, bases


def _reference(root: Path | str, name: str, bases: list[str],
               allow: bool | None) -> tuple[str, list[bool]] | tuple[str, str]:
    try:
        for base in bases:
            joined_inside(root, name, allow, base=base)
    except PathOutsideRoot as exc:
        return "outside", str(exc)
    from heritage_eval.core.paths import path_text
    return "ok", [os.path.isfile(path_text(base, name)) for base in bases]


def _fast(root: Path | str, name: str, bases: list[str],
          allow: bool | None) -> tuple[str, list[bool]] | tuple[str, str]:
    from heritage_eval.core.paths import path_text
    try:
        kinds = regular_files_inside(root, name, bases, allow)
    except PathOutsideRoot as exc:
        return "outside", str(exc)
    return "ok", [os.path.isfile(path_text(b, name)) if k is None else k
                  for b, k in zip(bases, kinds, strict=True)]


@pytest.mark.parametrize("allow", [None, False, True])
def test_same_answers_as_joined_inside_and_isfile(tmp_path: Path, allow: bool | None) -> None:
    root, bases = _release(tmp_path)
    checked = 0
    for name in NAMES:
        for pair in itertools.permutations(bases, 2):
            assert _fast(root, name, list(pair), allow) == \
                _reference(root, name, list(pair), allow), (name, pair)
            checked += 1
    assert checked == len(NAMES) * 6


def test_lstat_answers_plain_names(tmp_path: Path) -> None:
    # a plain name under the real folders is answered without os.path.isfile: a file,
    # a missing file, a folder, a FIFO; links are left to os.path.isfile
    root, bases = _release(tmp_path)
    here, images = bases[0], bases[1]
    assert regular_files_inside(root, "file.png", (here, images), False) == [True, False]
    assert regular_files_inside(root, "folder", (here, images), False) == [False, False]
    assert regular_files_inside(root, "fifo", (here, images), False) == [False, False]
    assert regular_files_inside(root, "in_link.png", (here, images), False) == [None, None]
    assert regular_files_inside(root, "file.png", (here, images), True) == [None, None]
    with pytest.raises(PathOutsideRoot):
        regular_files_inside(root, "out_link.png", (here, images), False)


def test_relative_roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _release(tmp_path)
    monkeypatch.chdir(tmp_path)
    rel_bases = ["release/cat", "release/cat/images"]
    for name in NAMES:
        assert _fast("release", name, rel_bases, False) == \
            _reference("release", name, rel_bases, False), name


def test_no_roots() -> None:
    with pytest.raises(ValueError):
        regular_files_inside([], "a.png", ["/tmp"], False)
