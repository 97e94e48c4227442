"""Issue 22: the core of the path rule (docs/paths.md) over every hostile kind, and the
``export hf`` read-back refusing a hostile shard. Expected values are by hand: the kind
planted decides the message word for word."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from heritage_eval.cli.main import main
from heritage_eval.core import engine
from heritage_eval.core.datapath import (
    NotARegularFile,
    check_regular_file,
    file_kind,
    open_regular,
    resolve_data_path,
)
from heritage_eval.core.paths import ALLOW_ENV, PathOutsideRoot, set_outside_allowed
from tests.security.hostile_kinds import (
    DEMO,
    FILE_KINDS,
    KIND_WORDS,
    Recorder,
    outside_image,
    plant,
    run_watched,
)


@pytest.fixture(autouse=True)
def _default_policy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    monkeypatch.setenv("HERITAGE_EVAL_HF_CACHE", str(tmp_path / "hf-cache"))
    set_outside_allowed(None)
    yield
    set_outside_allowed(None)


# --------------------------------------------------------------- export hf read-back

@pytest.fixture(scope="module")
def ab_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("export")
    out = folder / "export"
    assert main(["export", "hf", "ancient-bench", str(DEMO / "ancient_bench"),
                 "--out", str(out), "--no-progress"]) == 0
    return out


@pytest.mark.parametrize("kind", FILE_KINDS)
def test_export_read_back_refuses_a_hostile_shard(kind: str, ab_export: Path,
                                                  tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]
                                                  ) -> None:
    # guards against: a parquet shard that is a FIFO (hangs), a link out (read from
    # outside the export), a socket or a folder
    monkeypatch.setattr(engine, "backend_from_config", lambda model: Recorder())
    export = tmp_path / "export"
    shutil.copytree(ab_export, export, symlinks=True)
    shard = sorted(export.rglob("*.parquet"))[0]
    outside = tmp_path / "outside" / shard.name
    outside.parent.mkdir()
    shutil.copyfile(shard, outside)
    plant(shard, kind, outside)
    rc = run_watched(["run", "ancient-bench", "--data", str(export), "--model", "openai:x",
                      "--out", str(tmp_path / "run")], [shard])
    said = "".join(capsys.readouterr())
    assert rc in (1, 2) and "Traceback" not in said
    if kind != "folder":  # a folder named *.parquet is not taken for a shard: "missing"
        assert shard.name in said and KIND_WORDS[kind] in said, said[-2000:]


# ------------------------------------------------------------------- the core rule

@pytest.mark.parametrize("kind", FILE_KINDS)
def test_core_rule_over_the_kinds(kind: str, tmp_path: Path) -> None:
    # guards against: a check that opens what it checks (a FIFO blocks) or lets a
    # non-regular file or a link out through; values by hand from the kind planted
    root = tmp_path / "root"
    root.mkdir()
    outside = outside_image(tmp_path)
    victim = root / "x.png"
    plant(victim, kind, outside)
    if kind == "symlink-out":
        with pytest.raises(PathOutsideRoot):
            resolve_data_path(root, "x.png")
        # allowed outside: the link is followed to a regular file and accepted
        assert resolve_data_path(root, "x.png", allow_outside=True) == str(victim)
        return
    words = {"fifo": "FIFO (named pipe)", "socket": "socket", "folder": "folder"}[kind]
    assert file_kind(os.stat(victim).st_mode) == words
    for check in (check_regular_file, open_regular,
                  lambda p: resolve_data_path(root, "x.png"),
                  lambda p: resolve_data_path(root, "x.png", allow_outside=True)):
        with pytest.raises(NotARegularFile) as exc:
            check(victim)
        assert str(exc.value) == f"{victim}: it is a {words}, not a regular file"
        assert isinstance(exc.value, OSError)


def test_open_regular_reads_a_regular_file_and_a_link_inside(tmp_path: Path) -> None:
    # guards against: the guard refusing ordinary data (a file, a link inside the root)
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_bytes(b"abc\r\ndef")
    (root / "link.txt").symlink_to(root / "a.txt")
    assert resolve_data_path(root, "link.txt") == str(root / "link.txt")
    with open_regular(root / "link.txt") as fh:
        assert fh.read() == b"abc\r\ndef"
    with open_regular(root / "a.txt", "r", encoding="utf-8") as fh:
        assert fh.read() == "abc\ndef"  # universal newlines, as Path.read_text
    with pytest.raises(FileNotFoundError):
        resolve_data_path(root, "missing.txt")
    assert resolve_data_path(root, "missing.txt", must_exist=False) == str(root / "missing.txt")
