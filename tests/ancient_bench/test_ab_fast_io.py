"""The scoring path's short cuts (issue 23) give what the code they replace gives:
prediction files read in one sized read, the planning pass that does not look for
images, the envelope of an absent image without a header read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from heritage_eval.benchmarks.ancient_bench.envelope import _image
from heritage_eval.benchmarks.ancient_bench.loader import load_release
from heritage_eval.benchmarks.ancient_bench.predictions import read_prediction
from heritage_eval.core.record import image_ref
from heritage_eval.core.sizecap import MAX_LINE, read_capped
from heritage_eval.core.types import Sample


def test_prediction_file_kinds(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"answer": "<res>甲乙</res>"}), encoding="utf-8")
    assert read_prediction(good).answer == "<res>甲乙</res>"
    folder = tmp_path / "folder.json"
    folder.mkdir()
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # never opened for a blocking read: this test would hang
    link = tmp_path / "loop.json"
    link.symlink_to(link)
    for path in (tmp_path / "absent.json", tmp_path / "a\x00b.json"):  # nothing there
        pred = read_prediction(path)
        assert pred.missing and pred.answer is None and pred.error is None, path
    # something stands where the file should be, but no prediction can be read from it:
    # an error naming it (the official evaluator would crash on it), never "missing"
    for path, why in ((folder, "it is a folder"), (fifo, "FIFO (named pipe)"),
                      (link, "symbolic links")):
        pred = read_prediction(path)
        assert not pred.missing and pred.answer is None, path
        assert pred.error is not None and pred.error.startswith(f"{path}: "), pred.error
        assert why in pred.error, pred.error


@pytest.mark.parametrize("size", [0, 9, 10, 11, 40])
def test_prediction_cap_as_read_capped(tmp_path: Path, size: int,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # a 10-byte cap: files of 0 .. 10 bytes are read whole, longer ones refused with
    # read_capped's own message (the code this read replaces)
    monkeypatch.setenv(MAX_LINE.env, "10")
    path = tmp_path / "p.json"
    path.write_bytes(b'{"answer": "' + b"x" * 40 + b'"}' if size == 40 else b" " * size)
    pred = read_prediction(path)
    with open(path, "rb") as fh:
        try:
            read_capped(fh, MAX_LINE, str(path), "prediction file")
        except Exception as exc:  # the expected refusal
            assert pred.error == str(exc)
        else:
            assert pred.error is not None and "malformed JSON" in pred.error


def test_planning_pass_does_not_change_samples(tmp_path: Path) -> None:
    cat = tmp_path / "seals"
    (cat / "images").mkdir(parents=True)
    (cat / "images" / "b.png").write_bytes(b"not an image")
    lines = [{"image": "a.png", "human_gt": "甲"}, {"image": "b.png", "human_gt": "乙"},
             {"image": "c.png", "human_gt": " "}, {"nothing": 1}]
    (cat / "conv.jsonl").write_text("\n".join(json.dumps(x, ensure_ascii=False)
                                              for x in lines) + "\n", encoding="utf-8")
    release = load_release(tmp_path, check_images=False, keep_samples=False)
    located = list(release.iter_samples(notes=False))
    light = list(release.iter_samples(notes=False, locate=False))
    assert [(s.id, s.load_error, s.metadata, s.target) for s in located] == \
        [(s.id, s.load_error, s.metadata, s.target) for s in light]
    # only the image path may differ: b.png lies in images/, which locate=False skips
    assert located[1].image == str(cat / "images" / "b.png")
    assert light[1].image == str(cat / "b.png")


def test_absent_image_envelope_is_image_refs(tmp_path: Path) -> None:
    folder = tmp_path / "d.png"
    folder.mkdir()
    for image in (str(tmp_path / "absent.png"), str(folder), str(tmp_path / "x\x00.png")):
        sample = Sample(id="s/1", category="s", image=image)
        for sent in (None, [[30, 40]]):
            size = sent[0] if sent else None
            assert _image(sample, tmp_path, sent) == [
                image_ref(image, tmp_path, role="artifact", sent=size)]
