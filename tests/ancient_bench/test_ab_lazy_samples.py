"""``run ancient-bench`` holds no per-sample list: ``LoadedData.samples`` is a
:class:`~heritage_eval.core.lazy_samples.ReiterableSamples` re-reading the release on
each pass. The run folder, the warnings and the stderr notes are the same as with the
former in-memory load (a list of every ``Sample``, rebuilt here from the loader's public
functions as the old ``AncientBench.load`` did), and the memory of loading + one pass is
flat in the number of lines."""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from tests.run_folder_files import run_files

from heritage_eval.benchmarks.ancient_bench import benchmark as ab_benchmark
from heritage_eval.benchmarks.ancient_bench.benchmark import (
    AncientBench,
    data_counts,
    reject_empty_references,
)
from heritage_eval.benchmarks.ancient_bench.loader import load_release
from heritage_eval.benchmarks.ancient_bench.options import RunOptions, flags_from_args
from heritage_eval.benchmarks.ancient_bench.prompts import load_prompts
from heritage_eval.cli.main import main
from heritage_eval.cli.run_cmd import benchmark_command
from heritage_eval.cliargs.run_options import run_config_from_args
from heritage_eval.core import engine
from heritage_eval.core.benchmark import LoadedData, UsageError
from heritage_eval.core.config import RunConfig
from heritage_eval.core.lazy_samples import ReiterableSamples, sample_ids
from heritage_eval.core.types import GenerationSettings, Message, Response
from heritage_eval.models.base import ModelBackend

# one line per entry: (image, ground truth) or a raw line (str) written as is
LINES: dict[str, list[Any]] = {
    "seals": [("a.png", "王未央印"), ("b.png", "。"), ("a.png", "平舆令印"),  # dup, empty
              "{not json", "", ("gone.png", "失"), ("c.png", "長樂"),   # bad, blank, missing
              {"image": "d.png"}, ("e.png", "?!")],           # no human_gt, empty after norm.
    "calligraphys": [("c.png", "永和九年"), ("d.png", "暮春之初"), ("c.png", "會稽")],
    "mystery": [("m.png", "未知"), ("n.png", "!")],                 # unknown folder
}


class Echo(ModelBackend):
    """Answers ``<res>`` + the sample id's last character + ``</res>``; fails one."""

    backend = "echo"

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        sid = str(payload["sample_id"])
        if sid == "calligraphys/d":
            return Response(text=None, error="HTTP 500 after 5 retries", attempts=6)
        return Response(text=f"<res>{sid[-1]}王</res>", latency_s=0.25)


def _release(root: Path, lines: dict[str, list[Any]]) -> Path:
    for cat, rows in lines.items():
        folder = root / cat
        folder.mkdir(parents=True)
        text = []
        for row in rows:
            if isinstance(row, str):
                text.append(row)
                continue
            item = row if isinstance(row, dict) else {"image": row[0], "human_gt": row[1]}
            if item["image"] != "gone.png":
                Image.new("RGB", (8, 8), (len(text), 0, 0)).save(folder / item["image"])
            text.append(json.dumps(item, ensure_ascii=False))
        (folder / "conv.jsonl").write_text("\n".join(text) + "\n", encoding="utf-8")
    return root


def _old_load(self: AncientBench, config: RunConfig) -> LoadedData:
    """The former ``AncientBench.load``: every sample in a list."""
    opts = config.options
    assert isinstance(opts, RunOptions)
    protocol, flags = flags_from_args(opts)
    try:
        release = load_release(opts.data, list(opts.categories) if opts.categories
                               else None, config.output.limit)
        prompts = load_prompts(opts.prompts)
    except (FileNotFoundError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    self._out = config.output.out
    for note in reject_empty_references(release, flags):
        print(f"warning: {note}", file=sys.stderr)
        release.warnings.append(note)
    counts = data_counts(release)
    return LoadedData(samples=release.samples, image_root=str(release.root.resolve()),
                      warnings=list(release.warnings),
                      info={"data": str(release.root.resolve()), **counts},
                      extra={"release": release, "prompts": prompts, "flags": flags,
                             "protocol": protocol, "counts": counts})


def _files(out: Path) -> dict[str, Any]:
    return run_files(out)


def _run(argv: list[str], out: Path, capsys: pytest.CaptureFixture[str],
         caplog: pytest.LogCaptureFixture) -> tuple[int, str, list[str]]:
    caplog.clear()
    capsys.readouterr()
    status = main([*argv, "--out", str(out)])
    err = capsys.readouterr().err
    # the progress bar's frames carry timings: left out
    err = "\n".join(p for p in re.split(r"[\r\n]", err) if "%|" not in p)
    return status, err, [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize("lazy_from", [0, 10**9])  # lazy at any size / held in one read
@pytest.mark.parametrize("extra", [[], ["--limit", "1"], ["--limit", "2"],
                                   ["--limit", "9"], ["--categories", "seals", "mystery"],
                                   ["--categories", "calligraphys", "--limit", "1"]])
def test_lazy_run_equals_list_run(tmp_path: Path, extra: list[str], lazy_from: int,
                                  monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str],
                                  caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    monkeypatch.setattr(ab_benchmark, "LAZY_FROM", lazy_from)
    data = _release(tmp_path / "data", LINES)
    monkeypatch.setattr(engine, "backend_from_config", lambda model: Echo())
    argv = ["run", "ancient-bench", "--data", str(data), *extra]
    out = tmp_path / "out"
    lazy = _run(argv, out, capsys, caplog)
    lazy_files = _files(out)
    out.rename(tmp_path / "lazy")  # the list run writes the same folder name afresh
    monkeypatch.setattr(AncientBench, "load", _old_load)
    listed = _run(argv, out, capsys, caplog)
    assert lazy == listed  # exit status, stderr, log records (text and order)
    assert lazy_files == _files(out)  # samples.jsonl, summary.json, summary.md, tables
    if extra:
        return
    # by hand from LINES: the unknown folder, the per-file notes (duplicates: seals
    # line 3, calligraphys line 3), then the ground truths empty after normalisation in
    # release order (seals lines 2 and 9, mystery line 2), as the former load gave them
    notes = [w.split(": ", 1)[1][:28] if "conv.jsonl:" in w else w[:28]
             for w in lazy_files["summary"]["warnings"]]
    assert notes == ["unknown category folder 'mys", "duplicate image; sample id s",
                     "duplicate image; sample id c", "ground truth '。' is empty af",
                     "ground truth '?!' is empty a", "ground truth '!' is empty af"]
    counts = lazy_files["summary"]["provenance"]["data_counts"]
    assert counts == {"samples": 13, "load_errors": 6,  # 3 bad + missing + 2 empty
                      "per_category": {"seals": 8, "calligraphys": 3, "mystery": 2}}


def _config(data: Path) -> RunConfig:
    bench = AncientBench()
    p = argparse.ArgumentParser(prog="run")
    benchmark_command(bench).add_args(p)
    args = p.parse_args(["--data", str(data), "--out", str(data.parent / "out")])
    return run_config_from_args(args, bench.name, bench.Options,
                                defaults=bench.platform_defaults(),
                                required=bench.required_options())


def _peak(data: Path) -> tuple[int, int]:
    """(tracemalloc peak bytes of ``load`` + one pass over the samples, samples seen)."""
    bench = AncientBench()
    config = _config(data)
    tracemalloc.start()
    try:
        loaded = bench.load(config)
        seen = sum(1 for _ in loaded.samples)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert seen == len(loaded.samples)
    return peak, seen


def _many(root: Path, n: int) -> Path:
    """``n`` lines per category (2 categories), every image missing: error samples."""
    for cat in ("seals", "calligraphys"):
        (root / cat).mkdir(parents=True)
        (root / cat / "conv.jsonl").write_text("".join(
            json.dumps({"image": f"img_{i:06d}.png", "human_gt": "王未央印" * 8},
                       ensure_ascii=False) + "\n" for i in range(n)), encoding="utf-8")
    return root


def test_load_memory_is_flat_in_the_lines(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ab_benchmark, "LAZY_FROM", 0)  # the lazy path at any size
    small, n_small = _peak(_many(tmp_path / "small", 1_000))
    big, n_big = _peak(_many(tmp_path / "big", 10_000))
    assert (n_small, n_big) == (2_000, 20_000)
    # the former list held every Sample (measured with it: ~2 KB a line here, 28 B now); what
    # still grows is the loader's set of the ids seen in one category (duplicate check,
    # ~60 B a line): bound the growth per added line well below one Sample
    assert (big - small) / (n_big - n_small) < 200, (small, big)


def test_reiterable_samples_rules() -> None:
    seq = ReiterableSamples(lambda: iter(range(5)), 5)
    assert list(seq) == list(seq) == [0, 1, 2, 3, 4] and len(seq) == 5
    assert (seq[0], seq[-1], seq[1:3]) == (0, 4, [1, 2])
    with pytest.raises(IndexError):
        seq[5]
    with pytest.raises(RuntimeError):
        list(ReiterableSamples(lambda: iter(range(4)), 5))
    with pytest.raises(ValueError):
        ReiterableSamples(lambda: iter(()), -1)
    assert not ReiterableSamples(lambda: iter(()), 0)


def test_sample_ids_come_from_the_counting_pass_without_a_read() -> None:
    # ids kept by the counting pass are answered without calling the factory; a sequence
    # without them (or a list) is read once
    calls: list[int] = []

    def factory() -> Iterator[Any]:
        calls.append(1)
        return iter([])

    assert sample_ids(ReiterableSamples(factory, 2, ["a", "b"])) == ["a", "b"]
    assert calls == []
    with pytest.raises(ValueError):
        ReiterableSamples(factory, 3, ["a"])

    class S:
        def __init__(self, i: str) -> None:
            self.id = i

    assert sample_ids([S("x"), S("y")]) == ["x", "y"]
