"""A record's image path never depends on the working directory (reviewer's bug: samples
that failed to load recorded ``os.path.abspath(<image name>)``, the working directory
joined with the name, and had the size of a same-named file there read).

The rule (``loader.error_image_path``, ``envelope._image``, docs/reference/run-folder.md):
an error sample with an image name records the image's place in the release — where
``run`` finds it (``<category>/<name>`` or ``<category>/images/<name>``), else
``<category>/<name>`` — a reference refused as leading outside the release the category
folder joined with it as text, a line without a usable name no image; an error sample's
file is never measured (width / height null). Expected strings below are written by hand
from the layout each test builds.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from heritage_eval.benchmarks.ancient_bench.loader import error_image_path, iter_category
from heritage_eval.cli.main import main
from heritage_eval.core import engine
from heritage_eval.core.sizecap import MAX_LINE
from heritage_eval.core.store import read_jsonl
from heritage_eval.core.types import GenerationSettings, Message, Response
from heritage_eval.models.base import ModelBackend

#: size of every decoy file put in the working directory; no release image has it
DECOY = (31, 17)


class Fixed(ModelBackend):
    """Answers the same transcription to every request (no network, no model)."""

    backend = "fixed"

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        return Response(text="<res>王印</res>")


def _release(base: Path) -> Path:
    """A one-category release with every kind of load error; line numbers as commented."""
    data = base / "data"
    seals = data / "seals"
    (seals / "images" / "sub").mkdir(parents=True)
    for name in ("a.png", "b.png", "g.png", "sub/k.png", "m.png"):
        Image.new("RGB", (8, 6)).save(seals / "images" / name)
    Image.new("RGB", (5, 5)).save(seals / "l.png")  # beside conv.jsonl
    (base / "outside.png").write_bytes(b"not an image")
    lines = [
        json.dumps({"image": "a.png", "human_gt": "王印"}),  # 1 good
        json.dumps({"image": "b.png", "human_gt": "  "}),  # 2 empty ground truth
        json.dumps({"image": "c.png"}),  # 3 no human_gt, no file
        '{"image": "d.png", "human_gt": "\\ud800x"}',  # 4 lone surrogate
        json.dumps({"image": "../../outside.png", "human_gt": "x"}),  # 5 climbs out
        json.dumps({"image": str(base / "outside.png"), "human_gt": "x"}),  # 6 absolute
        '{"image": "n\\u0000.png", "human_gt": "x"}',  # 7 unusable name (NUL)
        '{"image": "broken',  # 8 malformed JSON
        json.dumps({"human_gt": "x"}),  # 9 no image field
        json.dumps({"image": "e.png", "human_gt": "x"}),  # 10 image not found
        json.dumps({"image": "f.png", "human_gt": "壽" * 200}),  # 11 over the line cap
        json.dumps({"image": "g.png", "human_gt": "。，"}),  # 12 empty once normalised
        json.dumps({"image": "sub/k.png"}),  # 13 no human_gt, name with a folder
        json.dumps({"image": "l.png", "human_gt": ""}),  # 14 empty, image beside conv
        json.dumps({"image": "./m.png", "human_gt": ""}),  # 15 empty, "./" name
    ]
    (seals / "conv.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data


#: id -> the record's ``images[0].path`` (None: no image), written by hand: relative to the
#: release root where the place lies under it; "OUT" stands for the absolute
#: ``<tmp>/outside.png`` (``data/seals/../../outside.png`` as text, ``..`` collapsed)
EXPECTED = {
    "seals/a": "seals/images/a.png",
    "seals/b": "seals/images/b.png",
    "seals/c": "seals/c.png",
    "seals/d": "seals/d.png",
    "seals/../../outside": "OUT",
    "seals/line7": None, "seals/line8": None, "seals/line9": None,
    "seals/e": "seals/e.png",
    "seals/f": "seals/f.png",
    "seals/g": "seals/images/g.png",
    "seals/sub/k": "seals/images/sub/k.png",
    "seals/l": "seals/l.png",
    "seals/./m": "seals/images/m.png",
}


def _decoys(cwd: Path) -> str:
    """Same-named files in ``cwd``; returns the sha256 of one of them (all equal)."""
    (cwd / "sub").mkdir(parents=True)
    for name in ("b.png", "c.png", "d.png", "e.png", "f.png", "l.png", "m.png", "sub/k.png",
                 "outside.png"):
        Image.new("RGB", DECOY).save(cwd / name, format="PNG")
    return hashlib.sha256((cwd / "b.png").read_bytes()).hexdigest()


def _run(data: Path, cwd: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(cwd)
    assert main(["run", "ancient-bench", "--data", str(data), "--out", str(out),
                 "--no-cache"]) == 0
    return (out / "samples.jsonl").read_text(encoding="utf-8")


def test_run_records_the_same_image_paths_from_any_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_LINE.env, "300")  # line 11 (~1.2 kB) is over it, others under
    monkeypatch.setattr(engine, "backend_from_config", lambda model: Fixed())
    data = _release(tmp_path)
    texts, digests = [], []
    for name in ("here", "there"):
        cwd = tmp_path / name
        digests.append(_decoys(cwd))
        texts.append(_run(data, cwd, tmp_path / f"run_{name}", monkeypatch))
    assert texts[0] == texts[1]  # byte for byte
    assert not any(d in texts[0] for d in digests)
    rows = read_jsonl(tmp_path / "run_here" / "samples.jsonl")
    paths = {r["id"]: (r["turns"][0]["images"][0]["path"] if r["turns"][0]["images"]
                       else None) for r in rows if r["id"] != f"seals/{tmp_path}/outside"}
    out = Path(tmp_path, "outside.png").as_posix()
    assert paths == {k: out if v == "OUT" else v for k, v in EXPECTED.items()}
    # the absolute reference (line 6) is itself
    absolute = next(r for r in rows if r["id"] == f"seals/{tmp_path}/outside")
    assert absolute["turns"][0]["images"][0]["path"] == out
    for row in rows:
        for image in row["turns"][0]["images"]:
            assert (image["width"], image["height"]) != DECOY
            if row["state"] == "error":  # never measured
                assert (image["width"], image["height"]) == (None, None)
            if image["path"] != out:  # textually under the release folder
                assert not os.path.isabs(image["path"]) and ".." not in image["path"]
    good = next(r for r in rows if r["id"] == "seals/a")
    assert (good["state"], good["turns"][0]["images"][0]["width"]) == ("scored", 8)


def test_score_records_the_same_image_paths_from_any_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_LINE.env, "300")
    data = _release(tmp_path)
    pred = tmp_path / "pred" / "m1" / "seals" / "results"
    pred.mkdir(parents=True)
    (pred / "a.json").write_text(json.dumps({"answer": "<res>王印</res>"}), encoding="utf-8")
    texts = []
    for name in ("here", "there"):
        cwd = tmp_path / name
        _decoys(cwd)
        monkeypatch.chdir(cwd)
        out = tmp_path / f"score_{name}"
        assert main(["score", "ancient-bench", "--data", str(data), "--predictions",
                     str(tmp_path / "pred"), "--out", str(out)]) == 0
        texts.append((out / "samples.jsonl").read_text(encoding="utf-8"))
    assert texts[0] == texts[1]
    rows = read_jsonl(tmp_path / "score_here" / "samples.jsonl")
    out = Path(tmp_path, "outside.png").as_posix()
    # the same places as run's: score looks for the image (confined) as run does
    paths = {r["id"]: (r["turns"][0]["images"][0]["path"] if r["turns"][0]["images"]
                       else None) for r in rows if r["id"] != f"seals/{tmp_path}/outside"}
    assert paths == {k: out if v == "OUT" else v for k, v in EXPECTED.items()}
    sizes = {r["id"]: (r["turns"][0]["images"][0]["width"], r["turns"][0]["images"][0]["height"])
             for r in rows if r["turns"][0]["images"]}
    # measured: the good image, and line 12 — score finds its empty reference when
    # scoring, not at load, so it is no load-error sample and its image (in the release)
    # is read as a good sample's; every other image is an error sample's, or not there
    assert {k: v for k, v in sizes.items() if v != (None, None)} == {
        "seals/a": (8, 6), "seals/g": (8, 6)}
    assert [r["state"] for r in rows if r["id"] == "seals/a"] == ["scored"]


@pytest.mark.parametrize("name, locate, expected", [
    # hand-written: folder "<root>/seals"; located where run finds the file
    ("b.png", True, "seals/images/b.png"),
    ("l.png", True, "seals/l.png"),
    ("c.png", True, "seals/c.png"),  # nowhere: the first place
    ("./m.png", True, "seals/images/m.png"),  # pathlib drops the "./"
    ("b.png", False, "seals/b.png"),  # a pass reading no image path: not looked for
    ("../../outside.png", True, "seals/../../outside.png"),  # refused: the join as text
    ("../../outside.png", False, "seals/../../outside.png"),
])
def test_error_image_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
                          locate: bool, expected: str) -> None:
    data = _release(tmp_path)
    _decoys(tmp_path / "cwd")
    monkeypatch.chdir(tmp_path / "cwd")
    got = error_image_path(data / "seals", name, data, False, locate)
    assert got == str(data / expected)


def test_error_image_path_without_locate_looks_at_no_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a file was looked at")

    for fn in ("stat", "lstat", "open"):
        monkeypatch.setattr(os, fn, refuse)
    monkeypatch.setattr(os.path, "isfile", refuse)
    monkeypatch.setattr(os.path, "exists", refuse)
    folder = tmp_path / "data" / "seals"
    assert error_image_path(folder, "x/../y.png", folder.parent, False, False) == \
        f"{folder}/x/../y.png"  # pathlib keeps ".." (it cannot know x is no link)


def test_loader_samples_do_not_depend_on_the_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_LINE.env, "300")
    data = _release(tmp_path)
    images = []
    for name in ("here", "there"):
        _decoys(tmp_path / name)
        monkeypatch.chdir(tmp_path / name)
        images.append([s.image for s in iter_category(data / "seals", root=data)])
    assert images[0] == images[1]
    # by hand, line by line (see _release); a place is the category folder joined with
    # the name as pathlib writes it; line 6 is an absolute name: itself
    seals = f"{data}/seals"
    assert images[0] == [
        f"{seals}/images/a.png", f"{seals}/images/b.png", f"{seals}/c.png",
        f"{seals}/d.png", f"{seals}/../../outside.png", f"{tmp_path}/outside.png",
        None, None, None, f"{seals}/e.png", f"{seals}/f.png", f"{seals}/images/g.png",
        f"{seals}/images/sub/k.png", f"{seals}/l.png", f"{seals}/images/m.png"]
