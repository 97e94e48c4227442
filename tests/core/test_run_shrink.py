"""A run folder never shrinks silently (README "Run folder"): a second run into the same
``--out`` with a smaller ``--limit`` is refused (exit 2, naming the rows that would be
lost and the options) unless ``--overwrite``; a larger ``--limit`` (or none) resumes and
grows the folder; a ``--limit`` that leaves no sample out is not PARTIAL.

Tested over the whole grid of (first limit, second limit, mode) for the toy benchmark
(a global limit: the first N lines) and Ancient-Bench (a limit per category). The
expected row counts are computed here from the data sizes alone (min(limit, n) per
group), independently of the code under test."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from heritage_eval.cli.main import main
from heritage_eval.core import engine
from heritage_eval.core.rundir import rows_lost
from heritage_eval.core.types import GenerationSettings, Message, Response
from heritage_eval.models.base import ModelBackend

pytestmark = pytest.mark.usefixtures("toy_registered")

#: toy rows: 9 countries (one group, since the toy limit is global)
TOY = [f"c{i}" for i in range(9)]
#: Ancient-Bench categories and their sizes (the limit applies to each)
AB_SIZES = {"seals": 3, "calligraphys": 2, "inscription_rubbings": 4}
LIMITS: list[int | None] = [None, 2, 3, 4, 9, 12]
MODES = ["refuse", "resume", "overwrite"]


class Echo(ModelBackend):
    """Answers every request with the same text (no network)."""

    backend = "echo"

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        return Response(text="<res>永</res>")


@pytest.fixture()
def toy_data(tmp_path: Path) -> Path:
    p = tmp_path / "capitals.jsonl"
    p.write_text("".join(json.dumps({"id": c, "country": c, "continent": "X",
                                     "capital": "Y"}) + "\n" for c in TOY))
    return p


@pytest.fixture()
def ab_data(tmp_path: Path) -> Path:
    root = tmp_path / "ab"
    for cat, n in AB_SIZES.items():
        (root / cat / "images").mkdir(parents=True)
        lines = []
        for i in range(n):
            Image.new("RGB", (16, 16), (i * 20, 0, 0)).save(root / cat / "images" / f"{i}.png")
            lines.append(json.dumps({"image": f"{i}.png", "human_gt": "永"}) + "\n")
        (root / cat / "conv.jsonl").write_text("".join(lines), encoding="utf-8")
    return root


def expected_ids(bench: str, limit: int | None) -> list[str]:
    """The sample ids a run with ``limit`` writes, from the data sizes alone."""
    if bench == "toy":
        return TOY[:limit]
    order = ["seals", "inscription_rubbings", "calligraphys"]  # the paper's order of media
    return [f"{cat}/{i}" for cat in order for i in range(AB_SIZES[cat])[:limit]]


def expected_partial(bench: str, limit: int | None) -> bool:
    total = len(TOY) if bench == "toy" else sum(AB_SIZES.values())
    return len(expected_ids(bench, limit)) < total


def _run(monkeypatch: pytest.MonkeyPatch, bench: str, data: Path, out: Path,
         limit: int | None, mode: str) -> int:
    monkeypatch.setattr(engine, "backend_from_config", lambda model: Echo())
    args = ["--limit", str(limit)] if limit is not None else []
    args += {"refuse": [], "resume": ["--resume"], "overwrite": ["--overwrite"]}[mode]
    name = "toy-capitals" if bench == "toy" else "ancient-bench"
    if bench == "toy":
        args += ["--model", "openai:echo"]  # required by the toy; the backend is Echo
    return main(["run", name, "--data", str(data), "--out", str(out), *args])


def _ids(out: Path) -> list[str]:
    return [json.loads(line)["id"] for line in
            (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


GRID = list(itertools.product(["toy", "ab"], LIMITS, LIMITS, MODES))


@pytest.mark.parametrize(("bench", "first", "second", "mode"), GRID)
def test_limit_up_down_equal(bench: str, first: int | None, second: int | None, mode: str,
                             toy_data: Path, ab_data: Path, tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    data = toy_data if bench == "toy" else ab_data
    out = tmp_path / "run"
    assert _run(monkeypatch, bench, data, out, first, "refuse") == 0
    before = (out / "samples.jsonl").read_bytes()
    run_before = json.loads((out / "run.json").read_text())
    assert _ids(out) == expected_ids(bench, first)
    assert json.loads((out / "summary.json").read_text())["partial"] is \
        expected_partial(bench, first)
    capsys.readouterr()

    status = _run(monkeypatch, bench, data, out, second, mode)
    err = capsys.readouterr().err
    old_rows, new_rows = len(expected_ids(bench, first)), len(expected_ids(bench, second))
    if new_rows < old_rows and mode != "overwrite":
        assert status == 2
        assert f"{old_rows - new_rows} row(s) would be lost" in err
        assert "--overwrite" in err and "--limit" in err
        # nothing changed: same rows, same run.json
        assert (out / "samples.jsonl").read_bytes() == before
        assert json.loads((out / "run.json").read_text()) == run_before
        return
    assert status == 0, err
    assert _ids(out) == expected_ids(bench, second)
    summary = json.loads((out / "summary.json").read_text())
    partial = expected_partial(bench, second)
    assert summary["partial"] is partial
    state = json.loads((out / "run.json").read_text())
    assert state["status"] == ("partial" if partial else "complete")
    assert state["n_samples"] == new_rows
    assert ("PARTIAL" in (out / "summary.md").read_text()) is partial


def test_rows_lost_counts_by_sample(tmp_path: Path) -> None:
    """Record ids ``<sample>#<suffix>`` belong to their sample; unreadable-line rows and
    non-record lines count in neither number (values counted by hand)."""
    lines = [
        {"schema": "heritage-eval/sample/1", "id": "q1#0"},
        {"schema": "heritage-eval/sample/1", "id": "q1#1"},
        {"schema": "heritage-eval/sample/1", "id": "q2#0"},
        {"schema": "heritage-eval/sample/1", "id": "a\"b"},
        {"schema": "heritage-eval/sample/1", "id": "qs.jsonl:7",
         "details": {"unreadable_line": True}},
    ]
    (tmp_path / "samples.jsonl").write_text(
        "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in lines) + "not json\n")
    # id_parts: the benchmark's records add "#<part>" to their sample's id (MUSE, HCSU)
    assert rows_lost(tmp_path, {"q1", "q2", 'a"b'}, id_parts=True) == (0, 4)
    assert rows_lost(tmp_path, {"q1"}, id_parts=True) == (2, 4)
    assert rows_lost(tmp_path, set(), id_parts=True) == (4, 4)
    assert rows_lost(tmp_path / "absent", {"q1"}, id_parts=True) == (0, 0)
    # without it a "#" is part of the id: q1#0 and q1#1 are not rows of sample q1
    assert rows_lost(tmp_path, {"q1", "q2", 'a"b'}) == (3, 4)
