"""Which rows of a run folder a new run would lose (``core.rundir.rows_lost``), checked
against a reference written here from the rule (README "Run folder"):

- a row belongs to a planned sample when its id is planned, or — only for a benchmark
  whose records add ``#<part>`` to their sample's id (``id_parts``: MUSE, HCSU) — when
  the part before the first ``#`` is planned; an Ancient-Bench image named ``x#1.jpg``
  is its own sample, not a part of ``x``;
- an ``error`` row none of whose turns has a response holds no answer: it is not counted
  (fixing a malformed line renames its sample from ``seals/line2`` to the image's name).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.cli.main import main
from heritage_eval.core.rundir import rows_lost

_ID = st.sampled_from(["a", "b", "a#1", "a#x=1", "b#2", "c", "seals/line2", "x#y#z"])
_ROW = st.tuples(_ID, st.sampled_from(["ok", "error-answered", "error-unanswered"]))


def _line(ident: str, kind: str) -> str:
    response = None if kind == "error-unanswered" else {"text": "<res>永</res>"}
    return json.dumps({"schema": "heritage-eval/sample/1", "id": ident,
                       "state": "ok" if kind == "ok" else "error",
                       "turns": [{"prompt": "p", "response": response}]})


def _reference(rows: list[tuple[str, str]], planned: set[str], id_parts: bool
               ) -> tuple[int, int]:
    lost = total = 0
    for ident, kind in rows:
        covered = ident in planned or (id_parts and ident.split("#", 1)[0] in planned)
        if covered:
            total += 1
        elif kind != "error-unanswered":
            total += 1
            lost += 1
    return lost, total


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(_ROW, max_size=12), planned=st.sets(_ID, max_size=5),
       id_parts=st.booleans())
def test_rows_lost_follows_the_rule(rows: list[tuple[str, str]], planned: set[str],
                                    id_parts: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "samples.jsonl").write_text(
            "".join(_line(i, k) + "\n" for i, k in rows), encoding="utf-8")
        assert rows_lost(root, planned, id_parts) == _reference(rows, planned, id_parts)
        assert rows_lost(root, sorted(planned), id_parts) == _reference(rows, planned,
                                                                         id_parts)


@pytest.fixture()
def release(tmp_path: Path) -> Path:
    root = tmp_path / "rel" / "seals"
    (root / "images").mkdir(parents=True)
    src = Path(__file__).resolve().parents[2] / "data" / "demo" / "ancient_bench" / "seals"
    images = sorted((src / "images").iterdir())[:3]
    names = ["s1.jpg", "s1#1.jpg", "s3.jpg"]
    for img, name in zip(images, names, strict=True):
        shutil.copy(img, root / "images" / name)
    (root / "conv.jsonl").write_text("".join(
        json.dumps({"image": n, "human_gt": "長樂"}, ensure_ascii=False) + "\n"
        for n in names), encoding="utf-8")
    return tmp_path / "rel"


def _run(data: Path, out: Path) -> int:
    return main(["run", "ancient-bench", "--data", str(data), "--model", "rapidocr",
                 "--out", str(out)])


def test_a_fixed_line_resumes(release: Path, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    conv = release / "seals" / "conv.jsonl"
    good = conv.read_text(encoding="utf-8").splitlines()
    conv.write_text("\n".join([good[0], "{not json", good[2]]) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert _run(release, out) == 0
    ids = [json.loads(x)["id"] for x in (out / "samples.jsonl").read_text().splitlines()]
    assert ids == ["seals/s1", "seals/line2", "seals/s3"]
    conv.write_text("\n".join(good) + "\n", encoding="utf-8")  # the line fixed
    capsys.readouterr()
    assert _run(release, out) == 0  # resumes: the error row held no answer
    ids = [json.loads(x)["id"] for x in (out / "samples.jsonl").read_text().splitlines()]
    assert ids == ["seals/s1", "seals/s1#1", "seals/s3"]
    said = capsys.readouterr()
    assert "answers from the cache (cache.sqlite): 2 of 3" in said.out + said.err


def test_an_image_named_with_a_hash_is_its_own_sample(release: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    out = tmp_path / "out"
    assert _run(release, out) == 0
    conv = release / "seals" / "conv.jsonl"
    lines = conv.read_text(encoding="utf-8").splitlines()
    conv.write_text("\n".join([lines[0], lines[2]]) + "\n", encoding="utf-8")
    capsys.readouterr()
    # the row of s1#1.jpg would be lost: refused, as for any other image left out
    assert _run(release, out) == 2
    assert "1 row(s) would be lost" in capsys.readouterr().err
    assert len((out / "samples.jsonl").read_text().splitlines()) == 3


def test_a_second_question_about_the_same_file_is_not_read_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # RowLossMemo (one per open_run): the same file (size, mtime, inode) -> the answer of
    # the first read; the file changed -> read again; a new memo (a new open_run, maybe
    # with other ids) never answers from an old one (counted here).
    from heritage_eval.core import row_loss

    root = tmp_path / "run"
    root.mkdir()

    def _write(rows: list[tuple[str, str]]) -> None:
        (root / "samples.jsonl").write_text(
            "".join(_line(i, k) + "\n" for i, k in rows), encoding="utf-8")

    _write([("a", "ok"), ("b", "ok")])
    reads = []
    real = row_loss.rows_lost
    monkeypatch.setattr(row_loss, "rows_lost",
                        lambda *a, **k: reads.append(1) or real(*a, **k))
    memo = row_loss.RowLossMemo()
    assert memo.rows_lost(root, {"a"}, False) == (1, 2)
    assert memo.rows_lost(root, {"a"}, False) == (1, 2)
    assert len(reads) == 1
    assert row_loss.RowLossMemo().rows_lost(root, {"a", "b"}, False) == (0, 2)
    assert len(reads) == 2
    _write([("a", "ok"), ("b", "ok"), ("c", "ok")])
    assert memo.rows_lost(root, {"a"}, False) == (2, 3)
    assert len(reads) == 3


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["a", "b", "c"]),
                               st.sampled_from(["m", "n", "o"])), max_size=10),
       planned=st.sets(st.sampled_from(["a", "b", "c"])),
       models=st.sets(st.sampled_from(["m", "n", "o"])))
def test_rows_of_models_left_out_are_lost(rows: list[tuple[str, str]], planned: set[str],
                                          models: set[str]) -> None:
    # the rule with ``models`` (a folder of several models' rows): a row is written
    # again only when its sample AND its model are planned; by hand: lost = rows whose
    # id or model is not planned (all rows here hold an answer)
    root = Path(tempfile.mkdtemp())
    try:
        (root / "samples.jsonl").write_text("".join(
            json.dumps({"schema": "heritage-eval/sample/1", "id": i, "model": m,
                        "state": "ok", "turns": []}) + "\n" for i, m in rows),
            encoding="utf-8")
        want = sum(1 for i, m in rows if i not in planned or m not in models)
        assert rows_lost(root, planned, False, models) == (want, len(rows))
        # without models: any model's row of a planned sample counts as written again
        assert rows_lost(root, planned, False) == (
            sum(1 for i, _ in rows if i not in planned), len(rows))
    finally:
        shutil.rmtree(root)
