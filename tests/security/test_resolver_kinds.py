"""Issue 22: one rule for every path user data names (docs/paths.md), checked over the kind.

Every reader × every hostile kind, generated as a grid: a FIFO, a socket, a folder where a
file is expected, a symbolic link leading out of the data root to a real image, a ``../``
reference and an absolute reference. Each case must finish within the watchdog's limit (a
FIFO opened for reading blocks until a writer comes: the watchdog fails the test and
unblocks it), end with exit status 0, 1 or 2, name the path and the kind in what it says,
print no traceback, and never use the image outside the root (its distinctive colour never
reaches the model). The export read-back and the core functions: test_resolver_core.py.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from heritage_eval.cli.main import main
from heritage_eval.core import engine
from heritage_eval.core.paths import ALLOW_ENV, set_outside_allowed
from tests.security.hostile_kinds import (
    ALL_KINDS,
    DEMO,
    FILE_KINDS,
    KIND_WORDS,
    Recorder,
    outside_image,
    plant,
    reference_for,
    run_watched,
    sent_outside_colour,
    texts_under,
)


@pytest.fixture(autouse=True)
def _default_policy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    monkeypatch.setenv("HERITAGE_EVAL_HF_CACHE", str(tmp_path / "hf-cache"))
    set_outside_allowed(None)
    yield
    set_outside_allowed(None)


# ---------------------------------------------------------------------- the readers

@dataclass
class Case:
    """One reader set up on a copy of the demo data."""

    argv: list[str]
    victim: Path  # the path the hostile kind stands at (or that names the reference)
    out: Path  # where the reader writes (searched for the message)
    fifos_at: list[Path]


Arrange = Callable[[Path, str, str, Path], Case]


def _copy(name: str, tmp_path: Path) -> Path:
    dst = tmp_path / "data" / name
    shutil.copytree(DEMO / name, dst)
    return dst


def _rewrite_first_line(conv: Path, image: str) -> None:
    lines = conv.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["image"] = image
    lines[0] = json.dumps(first, ensure_ascii=False)
    conv.write_text("\n".join(lines) + "\n", encoding="utf-8")


def ab_data(tmp_path: Path, target: str, kind: str, outside: Path) -> tuple[Path, Path]:
    """A copy of the seals category with ``kind`` at the data file or its first image;
    returns (release root, victim)."""
    root = _copy("ancient_bench", tmp_path)
    for cat in [p for p in root.iterdir() if p.is_dir() and p.name != "seals"]:
        shutil.rmtree(cat)
    conv = root / "seals" / "conv.jsonl"
    if target == "file":
        plant(conv, kind, outside)
        return root, conv
    image = json.loads(conv.read_text(encoding="utf-8").splitlines()[0])["image"]
    victim = root / "seals" / "images" / image
    if kind in FILE_KINDS:
        plant(victim, kind, outside)
        return root, victim
    _rewrite_first_line(conv, reference_for(kind, outside, root / "seals"))
    return root, conv


def arrange_ab_run(tmp_path: Path, target: str, kind: str, outside: Path) -> Case:
    root, victim = ab_data(tmp_path, target, kind, outside)
    out = tmp_path / "run"
    return Case(["run", "ancient-bench", "--data", str(root), "--model", "openai:x",
                 "--no-cache", "--out", str(out)], victim, out, [victim])


def arrange_ab_validate(tmp_path: Path, target: str, kind: str, outside: Path) -> Case:
    root, victim = ab_data(tmp_path, target, kind, outside)
    out = tmp_path / "report"
    return Case(["validate", "ancient-bench", "--data", str(root), "--no-progress",
                 "--json", str(out / "report.json")], victim, out, [victim])


def hcsu_data(tmp_path: Path, target: str, kind: str, outside: Path) -> tuple[Path, Path]:
    root = _copy("hcsu", tmp_path)
    ann = root / "bei_annotations.json"
    if target == "file":
        plant(ann, kind, outside)
        return root, ann
    records = json.loads(ann.read_text(encoding="utf-8"))
    victim = root / "bei" / records[0]["filename"]
    if kind in FILE_KINDS:
        plant(victim, kind, outside)
        return root, victim
    records[0]["filename"] = reference_for(kind, outside, root / "bei")
    ann.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return root, ann


def arrange_hcsu_run(tmp_path: Path, target: str, kind: str, outside: Path) -> Case:
    root, victim = hcsu_data(tmp_path, target, kind, outside)
    out = tmp_path / "run"
    return Case(["run", "hcsu-discrimination", "--data", str(root), "--model", "openai:x",
                 "--k", "2", "--per-class", "1", "--no-cache", "--out", str(out)],
                victim, out, [victim])


def arrange_hcsu_validate(tmp_path: Path, target: str, kind: str, outside: Path) -> Case:
    root, victim = hcsu_data(tmp_path, target, kind, outside)
    out = tmp_path / "report"
    return Case(["validate", "hcsu", "--data", str(root), "--no-progress", "--k", "2",
                 "--json", str(out / "report.json")], victim, out, [victim])


def muse_data(tmp_path: Path, target: str, kind: str, outside: Path) -> tuple[Path, Path]:
    """(annotations export, victim)."""
    root = _copy("muse", tmp_path)
    export = root / "annotations.json"
    if target == "file":
        plant(export, kind, outside)
        return export, export
    tasks = json.loads(export.read_text(encoding="utf-8"))
    image = tasks[0]["data"]["image"]
    victim = root / image
    if kind in FILE_KINDS:
        plant(victim, kind, outside)
        return export, victim
    tasks[0]["data"]["image"] = reference_for(kind, outside, root)
    export.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    return export, export


def arrange_muse_generate(tmp_path: Path, target: str, kind: str, outside: Path) -> Case:
    export, victim = muse_data(tmp_path, target, kind, outside)
    out = tmp_path / "gen"
    return Case(["muse", "generate", "--annotations", str(export), "--images",
                 str(export.parent), "--tasks", "object_count", "--out",
                 str(out / "q.jsonl"), "--no-progress"], victim, out, [victim])


def arrange_muse_validate(tmp_path: Path, target: str, kind: str, outside: Path) -> Case:
    export, victim = muse_data(tmp_path, target, kind, outside)
    out = tmp_path / "report"
    return Case(["validate", "muse", "--export", str(export), "--no-progress",
                 "--json", str(out / "report.json")], victim, out, [victim])


@pytest.fixture(scope="module")
def muse_questions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Questions generated once from the demo export (object count only: quick)."""
    folder = tmp_path_factory.mktemp("muse-q")
    shutil.copytree(DEMO / "muse", folder / "muse")
    q = folder / "muse" / "q.jsonl"
    assert main(["muse", "generate", "--annotations", str(folder / "muse" / "annotations.json"),
                 "--images", str(folder / "muse"), "--tasks", "object_count",
                 "--out", str(q), "--no-progress"]) == 0
    return folder / "muse"


def arrange_muse_run(tmp_path: Path, target: str, kind: str, outside: Path,
                     source: Path) -> Case:
    root = tmp_path / "data" / "muse"
    shutil.copytree(source, root)
    q = root / "q.jsonl"
    out = tmp_path / "run"
    argv = ["run", "muse", "--questions", str(q), "--model", "openai:x", "--no-cache",
            "--out", str(out)]
    lines = q.read_text(encoding="utf-8").splitlines()
    header, first = json.loads(lines[0]), json.loads(lines[1])
    if target == "file":
        plant(q, kind, outside)
        return Case(argv, q, out, [q])
    ref = first["turns"][0]["images"][0]
    images = root / str(header["source"].get("images_dir_relative") or ".")
    victim = images / ref.removeprefix("@images/")
    if kind in FILE_KINDS:
        plant(victim, kind, outside)
        return Case(argv, victim, out, [victim])
    for turn in first["turns"]:
        turn["images"] = [reference_for(kind, outside, q.parent)]
    lines[1] = json.dumps(first, ensure_ascii=False)
    q.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Case(argv, q, out, [])


READERS: dict[str, Arrange] = {
    "ancient-bench run": arrange_ab_run,
    "ancient-bench validate": arrange_ab_validate,
    "hcsu run": arrange_hcsu_run,
    "hcsu validate": arrange_hcsu_validate,
    "muse generate": arrange_muse_generate,
    "muse validate": arrange_muse_validate,
}
#: (reader, target) pairs whose "file" is a command-line argument, not confined (the rule).
TOP_LEVEL = {("muse generate", "file"), ("muse validate", "file"), ("muse run", "file")}
GRID = [(reader, target, kind) for reader in [*READERS, "muse run"]
        for target in ("file", "image")
        for kind in (FILE_KINDS if target == "file" else ALL_KINDS)]


@pytest.mark.parametrize(("reader", "target", "kind"), GRID,
                         ids=[f"{r}|{t}|{k}" for r, t, k in GRID])
def test_every_reader_refuses_every_kind(reader: str, target: str, kind: str,
                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str],
                                         request: pytest.FixtureRequest) -> None:
    # guards against: a FIFO / socket / folder / link out / ../ / absolute path that hangs
    # a reader, crashes it, or is read as data (issue 22)
    recorder = Recorder()
    monkeypatch.setattr(engine, "backend_from_config", lambda model: recorder)
    outside = outside_image(tmp_path)
    if reader == "muse run":
        source = request.getfixturevalue("muse_questions")
        case = arrange_muse_run(tmp_path, target, kind, outside, source)
    else:
        case = READERS[reader](tmp_path, target, kind, outside)
    rc = run_watched(case.argv, case.fifos_at)
    captured = capsys.readouterr()
    said = captured.out + captured.err + texts_under(case.out)
    assert rc in (0, 1, 2), said[-2000:]
    assert "Traceback" not in said
    # the message names the path (or, for a reference, the file holding it) and the kind
    assert case.victim.name in said, said[-2000:]
    if not (kind == "symlink-out" and (reader, target) in TOP_LEVEL):
        assert KIND_WORDS[kind] in said, said[-2000:]
    # else: a command-line file is the user's choice and may lie anywhere; the link is
    # followed, and the PNG it leads to is refused as not a question file / export
    # the image outside the root was never sent (its colour would be in a request)
    sent = b"".join(recorder.seen)
    assert str(outside).encode() not in sent
    assert not sent_outside_colour(recorder.seen)
