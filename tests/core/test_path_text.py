"""``core.paths.path_text(folder, name)`` is ``str(Path(folder, name))`` (the reference:
pathlib itself) for any folder written as pathlib writes it and any name — plain file
names, names with separators, ``.`` / ``..`` parts, doubled or trailing slashes,
absolute names — while building no ``Path`` when the plain join is already that text."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from heritage_eval.core.paths import path_text

_PART = st.sampled_from(["a.png", "甲骨文", ".", "..", "", "x y", "b.jpg", "..a", "a.."])
_NAME = st.lists(_PART, min_size=1, max_size=4).map("/".join) | st.sampled_from(
    ["/abs/a.png", "//x", "a//b", "a/", "./a", "images/./a.png"])
_FOLDER = st.sampled_from(["/data/rel", "rel", ".", "", "/", "//srv/x", "a/b"])


@given(folder=_FOLDER, name=_NAME)
def test_path_text_is_what_pathlib_writes(folder: str, name: str) -> None:
    base = str(Path(folder)) if folder else folder
    assert path_text(base, name) == str(Path(base, name))
