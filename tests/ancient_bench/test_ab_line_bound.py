"""The sample bound that decides, before any line is parsed, whether ``run ancient-bench``
holds a release's samples (one read) or re-reads it per pass (flat memory):
``line_bound.samples_bound`` must never be below the number of samples the loader
yields, whatever the lines are, and a held release is read exactly once."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.benchmarks.ancient_bench import benchmark as ab_benchmark
from heritage_eval.benchmarks.ancient_bench import loader
from heritage_eval.benchmarks.ancient_bench.benchmark import AncientBench
from heritage_eval.benchmarks.ancient_bench.line_bound import file_lines, samples_bound
from heritage_eval.benchmarks.ancient_bench.loader import CONV_FILE, load_release
from heritage_eval.benchmarks.ancient_bench.options import RunOptions
from heritage_eval.core.config import build_run_config
from heritage_eval.core.lazy_samples import ReiterableSamples

_LINE = st.one_of(
    st.builds(lambda i, gt: json.dumps({"image": f"i{i}.png", "human_gt": gt}),
              st.integers(0, 5), st.text(min_size=0, max_size=4)),  # valid, dup, empty gt
    st.sampled_from(["", "   ", "\t", "{not json", "[]", '{"image": "x.png"}', "\r"]),
    st.text(max_size=6).filter(lambda t: "\n" not in t),
)
_FILE = st.tuples(st.lists(_LINE, max_size=12), st.booleans())  # lines, trailing newline


def _write(root: Path, files: dict[str, tuple[list[str], bool]]) -> None:
    for cat, (lines, trailing) in files.items():
        (root / cat).mkdir(parents=True)
        text = "\n".join(lines) + ("\n" if trailing and lines else "")
        (root / cat / CONV_FILE).write_text(text, encoding="utf-8", errors="surrogatepass")


@settings(max_examples=150, deadline=None)
@given(files=st.dictionaries(st.sampled_from(["seals", "steles", "bronzes"]), _FILE,
                             min_size=1, max_size=3),
       limit=st.one_of(st.none(), st.integers(0, 6)), stop=st.one_of(st.none(),
                                                                    st.integers(0, 20)))
def test_bound_is_never_below_the_samples_yielded(files: dict[str, tuple[list[str], bool]],
                                                  limit: int | None,
                                                  stop: int | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write(root, files)
        release = load_release(root, limit=limit, check_images=False)
        actual = len(release.samples)
        bound = samples_bound(release.root, release.categories, CONV_FILE, limit, stop)
        # the rule: at least the samples yielded, or at least ``stop`` once reached
        assert bound >= (actual if stop is None else min(actual, stop))
        if stop is None:
            # and at most one per line (per category, capped at the limit)
            lines = sum(min(len(ls), limit) if limit is not None else len(ls)
                        for ls, _ in files.values())
            assert bound <= lines


def test_file_lines_by_hand(tmp_path: Path) -> None:
    f = tmp_path / CONV_FILE
    # counted by hand: 3 line breaks; a last line with no break counts once more
    f.write_bytes(b'a\n\nb\n')
    assert file_lines(f, tmp_path) == 3
    f.write_bytes(b'a\n\nb\nc')
    assert file_lines(f, tmp_path) == 4
    f.write_bytes(b'')
    assert file_lines(f, tmp_path) == 0
    assert file_lines(f.with_name("missing.jsonl"), tmp_path) == 1  # one error sample
    assert file_lines(tmp_path, tmp_path) == 1  # a folder: one error sample


def test_a_held_release_is_read_once_a_large_one_is_not_held(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    _write(data, {"seals": ([json.dumps({"image": f"{i}.png", "human_gt": "王"})
                             for i in range(6)], True)})
    reads: list[str] = []
    original = loader.iter_category

    def counted(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        reads.append("read")
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(loader, "iter_category", counted)
    config = build_run_config("ancient-bench", RunOptions, {
        "data": data, "out": tmp_path / "out", "model": "baseline:random"})
    loaded = AncientBench().load(config)
    assert isinstance(loaded.samples, list) and len(loaded.samples) == 6
    assert reads == ["read"]  # one category, read once: count and samples together
    monkeypatch.setattr(ab_benchmark, "LAZY_FROM", 6)  # 6 lines: may reach it
    reads.clear()
    loaded = AncientBench().load(config)
    assert isinstance(loaded.samples, ReiterableSamples) and len(loaded.samples) == 6
    assert reads == ["read"]  # the counting pass only; each later pass reads again
