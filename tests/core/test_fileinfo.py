"""File facts remembered by file identity (issue 11, goal 2: a cached re-run does not read
every image again)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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


# --- bounded memory (issue 23: 100,000 images must not keep 200,000 facts in memory) ---

_OPS = st.lists(st.tuples(st.sampled_from(["ask", "ask", "ask", "change", "restart"]),
                          st.integers(0, 5)), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(ops=_OPS, memo_max=st.integers(1, 4), bulk_max=st.integers(0, 4))
def test_facts_match_the_file_and_are_computed_once_per_identity(
        ops: list[tuple[str, int]], memo_max: int, bulk_max: int) -> None:
    """Reference model: a fact is ``compute()`` of the file as it is now, and compute runs
    once per (file, version) ever seen while the same cache file is attached — whatever
    memory forgets (MEMO_MAX) and whether the table is loaded whole (BULK_MAX)."""
    with tempfile.TemporaryDirectory() as tmp, \
            pytest.MonkeyPatch.context() as mp:
        mp.setattr(fileinfo, "MEMO_MAX", memo_max)
        mp.setattr(fileinfo, "BULK_MAX", bulk_max)
        root = Path(tmp)
        db = root / "cache.sqlite"
        version = [0] * 6
        stamp = [10**9]

        def write(i: int) -> None:
            stamp[0] += 1000
            path = root / f"f{i}.bin"
            path.write_bytes(b"x" * (version[i] + 1) + bytes([i]))
            os.utime(path, ns=(stamp[0], stamp[0]))

        for i in range(6):
            write(i)
        fileinfo.clear_memory()
        fileinfo.attach(db)
        computed: list[tuple[int, int]] = []
        try:
            for op, i in ops:
                path = root / f"f{i}.bin"
                if op == "change":
                    version[i] += 1
                    write(i)
                elif op == "restart":  # a new process on the same cache file
                    fileinfo.detach()
                    fileinfo.clear_memory()
                    fileinfo.attach(db)
                else:
                    def compute(i: int = i, path: Path = path) -> str:
                        computed.append((i, version[i]))
                        return hashlib.sha256(path.read_bytes()).hexdigest()
                    got = fileinfo.remembered("sha256", path, 0, compute, str, str)
                    assert got == hashlib.sha256(path.read_bytes()).hexdigest()
                    # memory keeps MEMO_MAX facts, or a table loaded whole (<= BULK_MAX)
                    assert len(fileinfo._memo) <= max(memo_max, bulk_max)
            # once per identity: no (file, version) computed twice
            assert len(computed) == len(set(computed))
        finally:
            fileinfo.detach()
            fileinfo.clear_memory()


def test_a_large_table_is_not_loaded_whole(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fileinfo, "BULK_MAX", 3)
    files = []
    for i in range(5):
        f = tmp_path / f"{i}.bin"
        f.write_bytes(bytes([i]) * (i + 1))
        files.append(f)
    db = tmp_path / "cache.sqlite"
    fileinfo.attach(db)
    for f in files:  # 5 facts stored, more than BULK_MAX
        fileinfo.remembered("sha256", f, 0, lambda f=f: f.name, str, str)
    fileinfo.detach()
    fileinfo.clear_memory()
    fileinfo.attach(db)
    try:
        assert len(fileinfo._memo) == 0  # nothing bulk-loaded: the table has 5 > 3 rows
        # each is read from the table by its key: compute is never called
        got = [fileinfo.remembered("sha256", f, 0, lambda: pytest.fail("computed"), str, str)
               for f in files]
        assert got == ["0.bin", "1.bin", "2.bin", "3.bin", "4.bin"]
    finally:
        fileinfo.detach()
        fileinfo.clear_memory()


def test_a_file_name_that_is_not_utf8_never_fails_a_batch(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    # a file named with the byte 0x80 (not UTF-8): os.fsdecode gives the lone surrogate
    # U+DC80, which SQLite's TEXT cannot hold; its facts stay in memory, the other
    # files' facts of the same batch are stored, and nothing raises later
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/odd\x80.png"))
    plain = tmp_path / "plain.png"
    _png(odd, (7, 5))
    _png(plain, (9, 4))
    monkeypatch.setattr(fileinfo, "MEMO_MAX", 1)  # forgotten at once: read per fact
    db = tmp_path / "cache.sqlite"
    with ResponseCache(db):
        assert image_size(odd) == (7, 5) and image_size(plain) == (9, 4)
        assert image_size(odd) == (7, 5)  # the per-fact look-up skips it too
    fileinfo.clear_memory()
    with ResponseCache(db):  # flushed at close: the plain file's fact was stored
        calls: list[int] = []
        stored = fileinfo.remembered("size", plain, 0, lambda: str(calls.append(1)),
                                     str, str)
        assert calls == [] and stored == "9x4"  # the stored text of the 9 x 4 header
