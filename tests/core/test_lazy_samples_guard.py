"""``ReiterableSamples(..., guard=file_identities(paths))``: a file the passes read,
replaced or modified during the run (same size, only its modification time differs),
stops the next pass boundary with :class:`DataChangedError` naming the file; unchanged
files pass. The rule is checked against a reference model over generated sequences of
passes and file operations: a pass fails exactly when some file's (size, mtime_ns,
inode) differs from the one taken at construction, and names exactly those files."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.core.lazy_samples import (
    MISSING,
    DataChangedError,
    ReiterableSamples,
    describe_change,
    file_identities,
)

LINES = ["a1\n", "b22\n", "c333\n"]
#: a fixed modification time (2020-09-13 12:26:40 UTC in ns) so that every change below
#: is a known, different time
BASE_NS = 1_600_000_000 * 10**9


def _write(path: Path, text: str, ns: int) -> None:
    with open(path, "w", encoding="utf-8") as fh:  # in place, as `cp other q.jsonl`
        fh.write(text)
    os.utime(path, ns=(ns, ns))


def _lines_of(paths: list[Path]) -> Iterator[str]:
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            yield from fh


def _make(tmp: Path, k: int) -> tuple[list[Path], ReiterableSamples[str]]:
    paths = [tmp / f"f{i}.jsonl" for i in range(k)]
    for p in paths:
        _write(p, "".join(LINES), BASE_NS)
    seq: ReiterableSamples[str] = ReiterableSamples(
        lambda: _lines_of(paths), k * len(LINES), guard=lambda: file_identities(paths))
    return paths, seq


def test_unchanged_files_pass_every_time(tmp_path: Path) -> None:
    _, seq = _make(tmp_path, 2)
    for _ in range(3):
        assert list(seq) == LINES * 2
    assert seq[4] == LINES[1] and seq[1:3] == LINES[1:3]


def test_a_file_replaced_between_passes_with_the_same_size_is_named(tmp_path: Path) -> None:
    paths, seq = _make(tmp_path, 2)
    assert list(seq) == LINES * 2
    # same size, same line count, other content; only the mtime tells (1 s later)
    _write(paths[1], "".join(x.upper() for x in LINES), BASE_NS + 10**9)
    assert paths[1].stat().st_size == paths[0].stat().st_size
    with pytest.raises(DataChangedError,
                       match=rf"^the data changed while running: {paths[1]} was replaced "
                             "or modified$") as got:
        list(seq)
    assert isinstance(got.value, RuntimeError)  # the kind the count check raises
    with pytest.raises(DataChangedError, match=str(paths[1])):
        seq[0]


def test_a_change_during_a_pass_fails_at_its_end(tmp_path: Path) -> None:
    paths, seq = _make(tmp_path, 1)
    it = iter(seq)
    assert next(it) == LINES[0]
    _write(paths[0], "".join(LINES), BASE_NS + 5)  # 5 ns later, same bytes
    with pytest.raises(DataChangedError, match=str(paths[0])):
        list(it)


def test_a_removed_file_is_named_as_removed(tmp_path: Path) -> None:
    paths, seq = _make(tmp_path, 2)
    paths[0].unlink()
    assert file_identities(paths)[0] == (str(paths[0]), MISSING)
    with pytest.raises(DataChangedError, match=rf"{paths[0]} was removed"):
        list(seq)


def test_describe_change_without_file_identities() -> None:
    assert describe_change(1, 1) is None
    assert describe_change(1, 2) == "its source changed"
    assert describe_change((("a", 1),), (("b", 1),)) == "its source changed"


def test_the_count_check_raises_the_same_kind() -> None:
    seq: ReiterableSamples[int] = ReiterableSamples(lambda: iter(range(2)), 3)
    with pytest.raises(DataChangedError, match="a pass gave 2 samples, the first gave 3"):
        list(seq)


OPS = st.lists(st.one_of(st.just(("pass", 0)),
                         st.tuples(st.sampled_from(("modify", "restore", "remove")),
                                   st.integers(0, 2))), max_size=12)


@settings(max_examples=40, deadline=None)
@given(k=st.integers(1, 3), ops=OPS)
def test_passes_fail_exactly_when_the_model_says(k: int, ops: list[tuple[str, int]]
                                                 ) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        paths, seq = _make(Path(tmp), k)
        # reference model: per file, "same" (as at construction), "changed", "removed"
        state = ["same"] * k
        stamp = 0
        for op, i in ops:
            i %= k
            if op == "pass":
                off = [str(paths[j]) for j in range(k) if state[j] != "same"]
                if not off:
                    assert list(seq) == LINES * k
                    continue
                with pytest.raises(DataChangedError) as got:
                    list(seq)
                msg = str(got.value)
                assert msg.startswith("the data changed while running: ")
                for j in range(k):  # exactly the changed files are named
                    assert (str(paths[j]) in msg) == (state[j] != "same"), (msg, state)
                    if state[j] == "removed":
                        assert f"{paths[j]} was removed" in msg
            elif op == "modify" and state[i] != "removed":
                stamp += 1  # a new, unique time; same size
                _write(paths[i], "".join(LINES[::-1]), BASE_NS + stamp * 1000)
                state[i] = "changed"
            elif op == "restore" and state[i] != "removed":
                _write(paths[i], "".join(LINES), BASE_NS)  # the same bytes, size, time
                state[i] = "same"
            elif op == "remove" and state[i] != "removed":
                paths[i].unlink()
                state[i] = "removed"
