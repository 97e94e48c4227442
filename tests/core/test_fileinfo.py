"""File facts remembered by file identity (issue 11, goal 2: a cached re-run does not read
every image again)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from PIL import Image

from heritage_eval.core import fileinfo
from heritage_eval.core.cache import ResponseCache, _digest
from heritage_eval.core.record import image_size


def _png(path: Path, size: tuple[int, int]) -> None:
    Image.new("RGB", size, (200, 10, 10)).save(path)


def test_facts_survive_a_new_process_and_follow_file_changes(tmp_path: Path) -> None:
    img = tmp_path / "a.png"
    _png(img, (30, 20))
    db = tmp_path / "cache.sqlite"
    with ResponseCache(db):
        assert image_size(img) == (30, 20)  # from the PNG header
        first = _digest(str(img), 0)
    fileinfo.clear_memory()  # as a new process would start
    calls: list[str] = []

    def counted() -> str:
        calls.append("x")
        return "recomputed"

    with ResponseCache(db):
        # loaded from the file_facts table: compute is not called
        assert fileinfo.remembered("sha256", str(img), 0, counted, str, str) == first
        assert calls == []
        # the file is replaced (new size, new mtime): its facts are computed again
        _png(img, (31, 20))
        os.utime(img, ns=(1, 1))
        assert image_size(img) == (31, 20)
        assert fileinfo.remembered("sha256", str(img), 0, counted, str, str) == "recomputed"
        assert calls == ["x"]


def test_digest_is_the_sha256_of_the_bytes(tmp_path: Path) -> None:
    img = tmp_path / "b.png"
    _png(img, (5, 5))
    # hashlib over the file's bytes: what file_digest computes for a raster image page 0
    assert _digest(str(img), 0) == hashlib.sha256(img.read_bytes()).hexdigest()


def test_missing_file_is_not_remembered(tmp_path: Path) -> None:
    missing = tmp_path / "none.png"
    assert image_size(missing) is None
    _png(missing, (7, 3))
    assert image_size(missing) == (7, 3)


def test_read_only_cache_keeps_facts_in_memory(tmp_path: Path) -> None:
    db = tmp_path / "ro.sqlite"
    db.write_bytes(b"not a database")
    fileinfo.attach(db)  # cannot be used: nothing attached, no exception
    img = tmp_path / "c.png"
    _png(img, (4, 4))
    assert image_size(img) == (4, 4)
    fileinfo.detach()
