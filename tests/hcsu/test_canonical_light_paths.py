"""The light paths of ``hcsu canonicalize`` (issue 23): the command module imports no
model-running code, and each shortcut gives what the code it replaces gives."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from heritage_eval.benchmarks.hcsu import canonical_steps, png_io
from heritage_eval.benchmarks.hcsu.canonical_batch import _suffix, settings_hash
from heritage_eval.core import images
from heritage_eval.core.types import stable_hash


def test_canonicalize_command_imports_no_model_code() -> None:
    # resolving the command (what `hcsu canonicalize` does) in a fresh interpreter
    code = ("import sys\n"
            "from heritage_eval.benchmarks.hcsu.cli_tools import CANONICALIZE\n"
            "heavy = [m for m in ('heritage_eval.benchmarks.hcsu.option_models',\n"
            "         'heritage_eval.benchmarks.hcsu.cli_args', 'heritage_eval.core.types',\n"
            "         'pydantic', 'PIL', 'torch') if m in sys.modules]\n"
            "print(CANONICALIZE.name, heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "canonicalize []"


def test_png_io_pixel_cap_is_the_loaders() -> None:
    assert png_io.MAX_PIXELS == images.MAX_PIXELS


@given(st.dictionaries(st.text(max_size=8), st.one_of(
    st.integers(), st.floats(allow_nan=False), st.text(max_size=8), st.booleans(),
    st.none()), max_size=6))
def test_settings_hash_is_stable_hash(values: dict[str, object]) -> None:
    assert settings_hash(values) == stable_hash(values)


def test_suffix_is_purepath_suffix() -> None:
    from pathlib import PurePath

    for name in ("a.PNG", ".png", "a.tar.png", "x", "a.", "..png", "a.b.JPG", "...",
                 ".a.b", "a..", "不_1.png"):
        assert _suffix(name) == PurePath(name).suffix, name


@settings(max_examples=60, deadline=None)
@given(arrays(np.uint8, st.tuples(st.integers(1, 9), st.integers(1, 9), st.integers(1, 4))))
def test_channel_sums_and_medians_match_numpy(image: np.ndarray) -> None:
    sums = canonical_steps._channel_sums(image)
    reference = image.sum(axis=2, dtype=np.int64)  # numpy's own reduction
    assert np.array_equal(sums, reference)
    for axis in (0, 1):
        # np.median: the middle value, or the float mean of the two middle ones
        assert np.array_equal(canonical_steps._medians(sums, axis),
                              np.median(reference, axis=axis))
