"""Ancient-Bench's re-read samples (``LAZY_FROM`` patched to 0) are guarded by the
identity of every category's ``conv.jsonl``: one replaced in place between passes by a
file of the same size and lines (other ground truths) stops the next pass with
:class:`~heritage_eval.core.lazy_samples.DataChangedError` naming that file; an untouched
release passes every time."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from PIL import Image

from heritage_eval.benchmarks.ancient_bench import benchmark as ab_benchmark
from heritage_eval.benchmarks.ancient_bench.benchmark import AncientBench
from heritage_eval.benchmarks.ancient_bench.options import RunOptions
from heritage_eval.core.config import RunConfig, build_run_config
from heritage_eval.core.lazy_samples import DataChangedError, ReiterableSamples

ROWS = {"seals": ["王未央印", "平舆令印"], "calligraphys": ["永和九年", "暮春之初", "會稽山陰"]}


def _conv(rows: list[str]) -> str:
    return "".join(json.dumps({"image": f"i{k}.png", "human_gt": gt}, ensure_ascii=False)
                   + "\n" for k, gt in enumerate(rows))


def _release(root: Path) -> Path:
    for cat, rows in ROWS.items():
        (root / cat).mkdir(parents=True)
        for k in range(len(rows)):
            Image.new("RGB", (8, 8), (k, 0, 0)).save(root / cat / f"i{k}.png")
        (root / cat / "conv.jsonl").write_text(_conv(rows), encoding="utf-8")
    return root


def _config(data: Path) -> RunConfig:
    return build_run_config("ancient-bench", RunOptions, {
        "data": data, "out": data.parent / "out", "model": "baseline:random"})


def test_a_conv_file_replaced_between_passes_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ab_benchmark, "LAZY_FROM", 0)  # the re-read path at any size
    data = _release(tmp_path / "release")
    samples = AncientBench().load(_config(data)).samples
    assert isinstance(samples, ReiterableSamples)
    first = [(s.id, s.target) for s in samples]
    assert len(first) == 5 and [(s.id, s.target) for s in samples] == first
    conv = data / "calligraphys" / "conv.jsonl"
    before = conv.stat()
    # the same ids and byte length, reversed ground truths ("cp other.jsonl conv.jsonl")
    conv.write_text(_conv(ROWS["calligraphys"][::-1]), encoding="utf-8")
    os.utime(conv, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))
    assert conv.stat().st_size == before.st_size
    with pytest.raises(DataChangedError, match=rf"{conv} was replaced or modified") as got:
        list(samples)
    assert "seals" not in str(got.value)  # only the changed category's file is named
