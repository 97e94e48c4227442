"""A large release is not held (``loader.LAZY_FROM``): ``Release.samples`` re-reads the
JSONL on each pass. The reference is the list path (one read, every sample held — what
the loader always did): with the threshold at 0 every release takes the lazy path, and
its samples, counts, warnings, digest and ids, and the files of ``run`` /
``score chronicles-ocr``, must equal the list path's over generated releases holding
every kind of bad line (``lazy_data``). The SHA-256 reference is ``hashlib`` over the
decoded text (universal newlines), as the list path has always computed it."""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from chronicles_ocr import loader
from chronicles_ocr.benchmark import ChroniclesOCR
from chronicles_ocr.loader import Release, load_release
from chronicles_ocr.options import Options

from heritage_eval.cli.main import main
from heritage_eval.core.benchmark import UsageError
from heritage_eval.core.config import build_run_config
from heritage_eval.plugin import DataChangedError, ReiterableSamples
from tests.chronicles.lazy_data import spoilt_release
from tests.chronicles.stream_data import JSONL, write_predictions
from tests.chronicles.test_streaming import _files


def _both(monkeypatch: pytest.MonkeyPatch, data: Path, **kw: Any) -> tuple[Release, Release]:
    """``(lazy, listed)`` loads of ``data``."""
    with monkeypatch.context() as m:
        m.setattr(loader, "LAZY_FROM", 0)
        lazy = load_release(data, seed=42, **kw)
    listed = load_release(data, seed=42, **kw)
    return lazy, listed


SELECTIONS: list[dict[str, Any]] = [
    {}, {"tasks": ("parsing",)}, {"scripts": ("oracle_bone", "regular")},
    {"tasks": ("recognition", "classification"), "scripts": ("seal",)}]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("selection", range(len(SELECTIONS)))
def test_lazy_load_equals_the_list(seed: int, selection: int, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    data = spoilt_release(tmp_path / "data", 2, seed)
    lazy, listed = _both(monkeypatch, data, **SELECTIONS[selection])
    assert isinstance(lazy.samples, ReiterableSamples)
    assert isinstance(listed.samples, list)
    assert list(lazy.samples) == listed.samples
    assert list(lazy.samples) == listed.samples  # a second pass gives them again
    assert lazy.info() == listed.info()
    assert lazy.warnings == listed.warnings
    assert lazy.samples.ids is not None
    assert list(lazy.samples.ids) == [s.id for s in listed.samples]
    text = (data / JSONL).read_bytes().decode("utf-8").replace("\r\n", "\n")
    assert lazy.digest == hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    # the generated errors are there (a check that the data exercises the rules; rows
    # outside --scripts, the unknown script's among them, are passed over unread)
    words = "\n".join(listed.warnings)
    whys = ["not valid JSON", "not a JSON object"]
    if "scripts" not in SELECTIONS[selection]:
        whys += ["no image_path", "is not one of", "already on line", "itself a data error",
                 "missing.png"]
    for why in whys:
        assert why in words, why


def test_unreadable_files_are_worded_as_on_the_list_path(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    folder = spoilt_release(tmp_path / "data", 1, 0)
    path = folder / JSONL
    only_oracle = '{"image_path": "a.png", "font_type": "甲骨文"}\n'.encode()
    cases: dict[str, tuple[bytes, dict[str, Any]]] = {
        "bad byte": (path.read_bytes() + b"\n\xff{}\n", {}), "blank": (b"\n \n", {}),
        "nothing chosen": (only_oracle, {"scripts": ("cursive",)})}
    for name, (body, kw) in cases.items():
        path.write_bytes(body)
        messages = []
        for lazy_from in (0, loader.LAZY_FROM):
            with monkeypatch.context() as m, pytest.raises(UsageError) as err:
                m.setattr(loader, "LAZY_FROM", lazy_from)
                load_release(folder, seed=42, **kw)
            messages.append(str(err.value))
        assert messages[0] == messages[1], name
    with pytest.raises(UsageError, match="cannot read"):
        _both(monkeypatch, tmp_path / "nowhere")


def test_a_file_changed_after_load_stops_the_pass(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    data = spoilt_release(tmp_path / "data", 1, 0)
    lazy, _ = _both(monkeypatch, data)
    with (data / JSONL).open("ab") as fh:
        fh.write(b"\n")
    with pytest.raises(DataChangedError, match="replaced or modified"):
        list(lazy.samples)


def _run_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              capsys: pytest.CaptureFixture[str], argv: list[str]
              ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``argv`` on the lazy path, then on the list path: the run folders' files, the exit
    status and the warnings and notes printed (paths replaced)."""
    out = []
    for name, lazy_from in (("lazy", 0), ("listed", loader.LAZY_FROM)):
        folder = tmp_path / name
        with monkeypatch.context() as m:
            m.setattr(loader, "LAZY_FROM", lazy_from)
            code = main([*argv, "--out", str(folder)])
        err = capsys.readouterr().err.replace(str(folder), "OUT")
        out.append({**_files(folder), "code": code,
                    "err": [line for line in err.splitlines()
                            if line.startswith(("note:", "warning:"))]})
    return out[0], out[1]


RUN_OPTIONS = [[], ["--limit", "2"], ["--tasks", "recognition", "parsing", "--scripts",
                                      "oracle_bone", "running"]]


@pytest.mark.parametrize("options", range(len(RUN_OPTIONS)))
def test_run_lazy_writes_what_the_list_writes(options: int, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    data = spoilt_release(tmp_path / "data", 2, options)
    lazy, listed = _run_both(tmp_path, monkeypatch, capsys, [
        "run", "chronicles-ocr", "--data", str(data), "--model", "baseline:random",
        "--no-cache", *RUN_OPTIONS[options]])
    assert lazy == listed
    assert '"error_kind": "data"' in lazy["samples"]  # the bad lines are records


def test_score_lazy_writes_what_the_list_writes(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    data = spoilt_release(tmp_path / "data", 3, 7)
    preds = write_predictions(tmp_path / "preds", 3, {"gen-a": 3, "gen-b": 4})
    lazy, listed = _run_both(tmp_path, monkeypatch, capsys, [
        "score", "chronicles-ocr", "--data", str(data), "--predictions", str(preds)])
    assert lazy == listed
    assert len(lazy["summary"]["official_summary"]) == 2


def _held_after_load(data: Path) -> tuple[int, int]:
    """``(bytes the loaded data holds, samples)`` (tracemalloc, around ``load``)."""
    config = build_run_config("chronicles-ocr", Options, {
        "data": data, "out": data.parent / "run", "model": "baseline:random"})
    bench = ChroniclesOCR()
    bench.load(config)  # first use: lazy imports and caches, not counted
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        loaded = bench.load(config)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return held, len(loaded.samples)


def test_memory_held_after_load_is_small_per_image(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # raising=False: the list-only loader (no LAZY_FROM) is measured as it is, and fails
    monkeypatch.setattr(loader, "LAZY_FROM", 0, raising=False)
    small, n_small = _held_after_load(spoilt_release(tmp_path / "s", 4, 0))
    large, n_large = _held_after_load(spoilt_release(tmp_path / "l", 40, 0))
    images = 21 * (40 - 4)  # 21 demo images per copy
    # measured (tracemalloc, Python 3.11): 200 B more per image from 4 to 40 copies on
    # the lazy path (each id in CompactIds: ~3 ids of ~45 bytes an image, +8 bytes
    # each), 3,145 B on the list path (every sample held with its row): 8 times the bound
    assert n_large - n_small == 60 * (40 - 4)  # 60 samples per copy of the demo
    assert large - small < 400 * images, (small, large)


def test_a_line_boundary_inside_a_json_string_does_not_cut_the_row(tmp_path: Path) -> None:
    # JSON Lines rows end at line feeds only: U+2028, U+2029 and U+0085 are valid raw
    # inside a JSON string (str.splitlines used to cut the row in two invalid lines)
    from chronicles_ocr.loader import load_release

    from tests.chronicles.stream_data import JSONL, write_release

    folder = write_release(tmp_path / "rel", 1)
    path = folder / JSONL
    lines = [x for x in path.read_text(encoding="utf-8").split("\n") if x]
    row = json.loads(lines[0])
    row["annotation"] = "天\u2028下\u2029地\x85玄"
    lines[0] = json.dumps(row, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    release = load_release(folder, seed=0)
    assert release.rows == len(lines)  # one row per line, as written
    assert not [s.load_error for s in release.samples
                if s.load_error and "JSON" in s.load_error]


@pytest.mark.parametrize("root", ["/data/rel", "/data/rel/", "rel", "/"])
@pytest.mark.parametrize("rel", ["images/甲骨文/a.png", "./images/a.png", "images//a.png",
                                 "images/../a.png", "a.png/", "/abs/a.png", "images/./a.png"])
def test_image_text_is_what_pathlib_writes(root: str, rel: str) -> None:
    from heritage_eval.plugin import path_text

    base = str(Path(root))  # the caller passes str of a Path
    assert path_text(base, rel) == str(Path(base) / rel)  # the reference: pathlib
