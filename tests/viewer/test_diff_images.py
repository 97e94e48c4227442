"""Diff operations and thumbnails, with values worked out by hand."""

from __future__ import annotations

import os
import time
from pathlib import Path

from PIL import Image

from heritage_eval.viewer.diff import char_ops, cost, op_counts, st_equivalent, tokens
from heritage_eval.viewer.images import ImageStore
from tests.viewer.conftest import make_image


def test_diff_example_by_hand() -> None:
    # 天地 equal; 玄->元 substitution; 黃->黄 only a traditional/simplified difference;
    # 宇 inserted. Distance 3 (two substitutions + one insertion).
    ops = char_ops("天地玄黃", "天地元黄宇")
    assert ops == [["=", "天地", "天地"], ["s", "玄", "元"], ["t", "黃", "黄"], ["i", "", "宇"]]
    assert cost(ops) == 3
    assert op_counts(ops) == {"equal": 2, "substitutions": 2, "st_only": 1,
                              "insertions": 1, "deletions": 0}


def test_diff_deletions_and_empty_sides() -> None:
    assert char_ops("癸卯卜", "癸卜") == [["=", "癸", "癸"], ["d", "卯", ""], ["=", "卜", "卜"]]
    assert char_ops("", "ab") == [["i", "", "a"], ["i", "", "b"]]
    assert char_ops("ab", "") == [["d", "a", ""], ["d", "b", ""]]
    assert char_ops("", "") == []
    assert char_ops("山水", "山水") == [["=", "山水", "山水"]]


def test_diff_prefers_variant_pairs_only_when_optimal() -> None:
    # raw optimum of 後面 vs 后 is 2 either way; the variant pair 後/后 is aligned
    assert char_ops("後面", "后") == [["t", "後", "后"], ["d", "面", ""]]
    assert st_equivalent("發", "发") and not st_equivalent("发", "发")
    assert not st_equivalent("玄", "元")


def test_tokens_keep_placeholder() -> None:
    assert tokens("天<unrecognizable>地") == ["天", "<unrecognizable>", "地"]
    assert char_ops("天<unrecognizable>", "天x") == [["=", "天", "天"],
                                                   ["s", "<unrecognizable>", "x"]]


def test_thumbnail_view_and_cache(tmp_path: Path) -> None:
    small = make_image(tmp_path / "src" / "small.png", (200, 100))
    big = make_image(tmp_path / "src" / "big.jpg", (3000, 600))
    site = tmp_path / "site"
    store = ImageStore(site)
    es, eb = store.entry(small), store.entry(big)
    store.make_all()
    assert store.made == 2 and store.reused == 0
    # small: thumbnail never upscaled, no zoom copy, original linked relatively
    with Image.open(site / str(es.thumb)) as im:
        assert im.size == (200, 100) and im.format == "JPEG"
    assert es.view is None and es.orig == "../src/small.png" and es.full == es.orig
    # big: thumbnail 320 px on the longest side, zoom copy 2048 px
    with Image.open(site / str(eb.thumb)) as im:
        assert im.size == (320, 64)
    with Image.open(site / str(eb.view)) as im:
        assert im.size == (2048, 409)
    assert (eb.width, eb.height) == (3000, 600)
    # a second store reuses both; a changed file gets a new key
    again = ImageStore(site)
    e2 = again.entry(small)
    again.entry(big)
    again.make_all()
    assert again.made == 0 and again.reused == 2 and e2.key == es.key
    make_image(small, (50, 50))
    later = time.time() + 5
    os.utime(small, (later, later))
    third = ImageStore(site)
    assert third.entry(small).key != es.key


def test_missing_and_broken_images(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not an image")
    store = ImageStore(tmp_path / "site")
    missing = store.entry(tmp_path / "nope.jpg")
    bad = store.entry(broken)
    store.make_all()
    assert missing.missing and "nope.jpg" in missing.missing and missing.thumb is None
    assert bad.missing and "unreadable" in bad.missing and bad.thumb is None
    assert store.failed == [bad.missing]


def test_copy_images_option(tmp_path: Path) -> None:
    src = make_image(tmp_path / "a.png", (40, 30))
    store = ImageStore(tmp_path / "site", copy_images=True)
    e = store.entry(src)
    store.make_all()
    assert e.orig.startswith("images/") and (tmp_path / "site" / e.orig).read_bytes() == \
        src.read_bytes()
