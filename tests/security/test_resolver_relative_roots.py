"""Issue 22, item 3, over the kind "how the data root is written": the same reader ×
hostile-kind grid as test_resolver_kinds.py, with every path on the command line written
*relative* to the working directory (``data/hcsu``, ``./data/hcsu``, ``data/hcsu/``,
``data/../data/hcsu``) instead of absolute.

Found by the issue-22 audit: with a relative ``--data``, the HCSU loader joined the root
to an already-joined image path (``h3/h3/bei/…``), a path that does not exist and so is
no symbolic link, and a link leading out of the data was followed and its outside image
used (``run hcsu-discrimination --data h3`` scored ``target_image: /tmp/…/outside.png``;
the same command with an absolute ``--data`` refused it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from heritage_eval.core import engine
from tests.security.hostile_kinds import (
    ALL_KINDS,
    FILE_KINDS,
    KIND_WORDS,
    Recorder,
    outside_image,
    run_watched,
    sent_outside_colour,
    texts_under,
)
from tests.security.test_resolver_kinds import READERS, _default_policy  # noqa: F401

#: four spellings of one relative folder (``{}`` is the path relative to the cwd)
SPELLINGS = ("{}", "./{}", "{}/", "{}/../{}")
#: readers whose data root is a folder (muse generate / validate take files: a file
#: named on the command line is the user's choice and not confined, by the rule)
FOLDER_READERS = ("ancient-bench run", "ancient-bench validate", "hcsu run",
                  "hcsu validate")
GRID = [(reader, target, kind, spelling) for reader in FOLDER_READERS
        for target in ("file", "image")
        for kind in (FILE_KINDS if target == "file" else ALL_KINDS)
        for spelling in SPELLINGS]


def _relative(argv: list[str], cwd: Path, spelling: str) -> list[str]:
    """``argv`` with each absolute path under ``cwd`` rewritten relative to it, the data
    folder in ``spelling`` (``{}/../{}`` becomes ``data/../data/hcsu``)."""
    out = []
    for word in argv:
        if word.startswith(str(cwd) + os.sep):
            rel = os.path.relpath(word, cwd)
            if rel.startswith("data" + os.sep) and "." not in Path(rel).name:
                first, _, rest = rel.partition(os.sep)
                rel = (f"{first}/../{first}/{rest}" if spelling == "{}/../{}"
                       else spelling.format(rel))
            word = rel
        out.append(word)
    return out


@pytest.mark.parametrize(("reader", "target", "kind", "spelling"), GRID,
                         ids=[f"{r}|{t}|{k}|{s}" for r, t, k, s in GRID])
def test_every_reader_refuses_every_kind_under_a_relative_root(
        reader: str, target: str, kind: str, spelling: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: a relative --data joined twice, so that a link out of the data is
    # not seen as a link and is followed (HCSU loader, issue 22 audit)
    recorder = Recorder()
    monkeypatch.setattr(engine, "backend_from_config", lambda model: recorder)
    outside = outside_image(tmp_path)
    case = READERS[reader](tmp_path, target, kind, outside)
    monkeypatch.chdir(tmp_path)
    argv = _relative(case.argv, tmp_path, spelling)
    if "--per-class" in argv:  # every image a target: the victim is surely used
        at = argv.index("--per-class")
        del argv[at:at + 2]
    assert not any(w.startswith(str(tmp_path)) for w in argv)  # the premise
    rc = run_watched(argv, case.fifos_at)
    captured = capsys.readouterr()
    said = captured.out + captured.err + texts_under(case.out)
    assert rc in (0, 1, 2), said[-2000:]
    assert "Traceback" not in said
    assert case.victim.name in said, said[-2000:]
    assert KIND_WORDS[kind] in said, said[-2000:]
    sent = b"".join(recorder.seen)
    assert str(outside).encode() not in sent
    assert not sent_outside_colour(recorder.seen)


# ------------------------------------------- the resolver's caches after a chdir

def _two_trees(tmp_path: Path, sub: str) -> tuple[Path, Path]:
    """``a/data/SUB/img.png`` a regular file, ``b/data/SUB/img.png`` a link to
    ``outside.png``: the same relative names, opposite answers."""
    outside = tmp_path / "outside.png"
    outside.write_bytes(b"x")
    for tree in ("a", "b"):
        (tmp_path / tree / "data" / sub).mkdir(parents=True)
    (tmp_path / "a" / "data" / sub / "img.png").write_bytes(b"x")
    (tmp_path / "b" / "data" / sub / "img.png").symlink_to(outside)
    return tmp_path / "a", tmp_path / "b"


@pytest.mark.parametrize("sub", ["", "s", "s/t"])
@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("first", ["a", "b"])
def test_relative_answers_follow_the_working_directory(
        sub: str, spelling: str, first: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # guards against: realpath caches keyed by relative strings, which kept the answer of
    # the first working directory after a chdir (a link out accepted, or a file inside
    # refused as "outside", in notebooks, the API and in-process tests)
    from heritage_eval.core.paths import PathOutsideRoot, joined_inside

    trees = dict(zip("ab", _two_trees(tmp_path, sub), strict=True))
    root = spelling.format("data") if spelling != "{}/../{}" else "data/../data"
    ref = f"{sub}/img.png" if sub else "img.png"
    for tree in (first, "b" if first == "a" else "a"):
        monkeypatch.chdir(trees[tree])
        if tree == "a":  # a regular file inside the root: accepted
            assert joined_inside(root, ref, False).endswith("img.png")
        else:  # a link leading out of the root: refused, naming where it leads
            with pytest.raises(PathOutsideRoot, match=r"outside\.png"):
                joined_inside(root, ref, False)
