"""``muse generate`` with memory flat in the corpus (issue 11): questions go to disk as
they are made, cross-image pools are views instead of per-image lists — and the question
file is the same, byte for byte."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

from heritage_eval.benchmarks.muse.generate import GenerationFailed, generate_benchmark
from heritage_eval.benchmarks.muse.generators.base import Without, others_than
from heritage_eval.benchmarks.muse.questions import (
    read_questions,
    write_question_lines,
    write_questions,
)

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "muse"
# SHA-256 and length of every line after the header of the demo's question file (seed 0,
# all 12 tasks), as written by the generator of commit 0c393db, which kept every
# question in a list and wrote the file as one string.
DEMO_BODY_SHA256 = "db8478d1b0fe83de4ad35e6ebc0ee180088e9326fb67fe00de4b24074e8b0ab7"
DEMO_BODY_BYTES = 142284


def test_demo_question_file_is_unchanged_and_leaves_no_temporary_file(tmp_path: Path
                                                                       ) -> None:
    out = tmp_path / "q.jsonl"
    report = generate_benchmark(DEMO / "annotations.json", DEMO, out, seed=0, progress=False)
    header, body = out.read_bytes().split(b"\n", 1)
    assert hashlib.sha256(body).hexdigest() == DEMO_BODY_SHA256
    assert len(body) == DEMO_BODY_BYTES
    assert report.n_questions == 66 == body.count(b"\n")  # 11 dialogues + 55 single
    # the header's counts come from the tally kept instead of the questions
    assert json.loads(header)["source"]["turns_per_task"] == report.turns_per_task
    assert sum(report.turns_per_task.values()) == sum(
        len(q.turns) for q in read_questions(out)[1])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.jsonl", "q_assets"]


def test_a_killed_runs_leftover_lines_are_replaced(tmp_path: Path) -> None:
    # a generation killed midway leaves its streamed lines under a fixed name; the next
    # run writes over that name and removes it (nothing accumulates run after run)
    out = tmp_path / "q.jsonl"
    leftover = tmp_path / ".q.questions.tmp"
    leftover.write_text("half a question\n", encoding="utf-8")
    generate_benchmark(DEMO / "annotations.json", DEMO, out, seed=0, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.jsonl", "q_assets"]
    assert hashlib.sha256(out.read_bytes().split(b"\n", 1)[1]).hexdigest() \
        == DEMO_BODY_SHA256


def test_failed_generation_removes_the_streamed_lines(tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    # one task whose image is missing: no question can be made
    export.write_text(json.dumps([{"id": 1, "data": {"image": "missing.png"},
                                   "annotations": [{"id": 1, "result": []}]}]), "utf-8")
    with pytest.raises(GenerationFailed):
        generate_benchmark(export, tmp_path, tmp_path / "q.jsonl", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.json"]


def test_streamed_writer_gives_the_bytes_of_one_string(tmp_path: Path) -> None:
    header, questions = read_questions(_demo_file(tmp_path))
    # reference: the former writer, one string of sorted-key JSON lines
    text = "".join(json.dumps(r.model_dump(mode="json"), ensure_ascii=False,
                              sort_keys=True) + "\n" for r in [header, *questions])
    write_questions(tmp_path / "a.jsonl", header, iter(questions))
    assert (tmp_path / "a.jsonl").read_text("utf-8") == text
    lines = text.splitlines()[1:]
    write_question_lines(tmp_path / "b.jsonl", header, iter(lines))
    assert (tmp_path / "b.jsonl").read_text("utf-8") == text


def _demo_file(tmp_path: Path) -> Path:
    out = tmp_path / "demo" / "q.jsonl"
    generate_benchmark(DEMO / "annotations.json", DEMO, out, seed=0, progress=False,
                       tasks=["object_count", "relative_position"])
    return out


@pytest.mark.parametrize("ids", [[], ["a"], ["a", "b"], [f"img{i:02d}" for i in range(7)],
                                 ["a", "b", "b", "c"]])
def test_without_view_equals_the_filtered_list(ids: list[str]) -> None:
    for own in [*ids, "absent", "img00a", "", "bb"]:
        want = [i for i in ids if i != own]  # the list the view replaces
        view = others_than(ids, own)
        assert len(view) == len(want) and list(view) == want
        assert view[-1:] == want[-1:] and view[::2] == want[::2]
        for seed in range(25):  # the same seeded draws as from the list
            a, b = random.Random(seed), random.Random(seed)
            if want:
                assert a.choice(view) == b.choice(want)
            k = min(3, len(want))
            assert a.sample(view, k) == b.sample(want, k)
    with pytest.raises(IndexError):
        Without(["a", "b"], 0, 1)[1]
