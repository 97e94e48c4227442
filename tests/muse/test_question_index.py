"""The compact facts ``run muse`` keeps of its question file
(``benchmarks/muse/question_index.py``, ``chance_options.py``) give what the functions
over the whole list gave: the turn plan (``plan_turns``), the prompt hash
(``stable_hash`` of every prompt), the chance baseline's open answers (a filter of the
whole reference list), the question id lookups, and the distinct-artwork count of the
summary (a set). Inputs are generated; the references are those functions."""

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.benchmarks.muse.analysis.summary_fold import DistinctCount
from heritage_eval.benchmarks.muse.chance_options import ChanceOptions, turn_options
from heritage_eval.benchmarks.muse.question_index import (
    InOrder,
    PromptHash,
    index_questions,
)
from heritage_eval.benchmarks.muse.questions import Question, QuestionTurn
from heritage_eval.benchmarks.muse.run import load_question_set, plan_turns, select
from heritage_eval.core.types import stable_hash
from tests.muse.streaming_data import CHOICE_TASKS, OPEN_TASKS, write_file

TASK_CHOICES = (None, ["object_count"], list(OPEN_TASKS),
                ["object_classification", "emotion_detection", "remote_interaction"])
ATTEMPTED: tuple[frozenset[str] | None, ...] = (
    None, frozenset(), frozenset({"object_classification", OPEN_TASKS[1]}),
    frozenset({"remote_interaction", "object_count", *CHOICE_TASKS}))


@pytest.mark.parametrize("seed", range(4))
def test_facts_give_the_plan_of_the_whole_list(seed: int, tmp_path: Path) -> None:
    qfile = write_file(tmp_path, n=120, seed=40 + seed, bad_lines=2, missing=3)
    qs = load_question_set(qfile)
    for tasks in TASK_CHOICES:
        for limit in (None, 3):
            index = index_questions(qfile, None, tasks, limit, lazy_from=0)
            questions = select(qs, tasks, limit)
            assert [q.id for q in index.samples] == index.ids == [q.id for q in questions]
            assert list(index.samples) == questions  # read again: the same questions
            assert index.prompt_hash == stable_hash([t.prompt for q in questions
                                                     for t in q.turns])
            assert dict(index.qs.lines) == {q.id: qs.lines[q.id] for q in questions}
            for attempted in ATTEMPTED:
                want = plan_turns(qs, questions, attempted, tasks)
                got = index.turn_plan(attempted, tasks)
                assert {q.id: got.keep[q.id] for q in questions} == want.keep
                assert list(got.skipped.items()) == list(want.skipped.items())
                assert list(got.load_errors.items()) == list(want.load_errors.items())


@given(st.lists(st.text(alphabet=string.printable + "é漢\u2028\"\\", max_size=12),
                max_size=8))
@settings(max_examples=200, deadline=None)
def test_prompt_hash_is_stable_hash_of_the_list(prompts: list[str]) -> None:
    folded = PromptHash()
    for p in prompts:
        folded.add(p)
    assert folded.hexdigest() == stable_hash(prompts)


def _open(task: str, answer: str) -> QuestionTurn:
    return QuestionTurn(task=task, prompt="?", answer_format="open", answer=answer)


@pytest.mark.parametrize("seed", range(6))
def test_open_answers_offered_are_those_of_the_list_filter(seed: int) -> None:
    """Questions with 0-3 open turns of two tasks, some sharing an id (not next to each
    other: a file's duplicates are dropped, a list given in Python may hold them)."""
    rng = random.Random(seed)
    questions = []
    for k in range(rng.randrange(1, 400)):
        qid = f"q{rng.randrange(k + 1)}" if rng.random() < 0.1 else f"q{k}"
        turns = [_open(rng.choice(OPEN_TASKS), f"ref {k} {j}" if rng.random() < 0.9 else "")
                 for j in range(rng.randrange(0, 4))] or [QuestionTurn(
                     task="object_count", prompt="?", answer_format="number",
                     answer=rng.randrange(30))]
        questions.append(Question(id=qid, image_id="a", turns=turns))
    chance = ChanceOptions.from_questions(questions)
    pairs = [(q.id, t.task, str(t.answer)) for q in questions for t in q.turns
             if t.answer_format == "open" and t.answer]
    for q in questions:
        for i, t in enumerate(q.turns):
            if t.answer_format != "open":
                continue
            others = [ref for qid, task, ref in pairs if task == t.task and qid != q.id]
            assert list(chance.others(t.task, q.id)) == others
            # the same draws from the same population: turn_options as it was
            rng2 = random.Random(int(stable_hash([seed, q.id, i, "random-open"]), 16))
            want = [f"[{t.tag}] {r}" if t.tag else r
                    for r in rng2.sample(others, min(32, len(others)))]
            assert turn_options(q, i, t, chance, seed) == want


@pytest.mark.parametrize("seed", range(5))
def test_in_order_lookups_match_a_dictionary(seed: int) -> None:
    rng = random.Random(seed)
    ids = [f"id{k}" for k in rng.sample(range(10_000), rng.randrange(1, 300))]
    table = InOrder(ids, lambda i: i * 7)
    want = {qid: i * 7 for i, qid in enumerate(ids)}
    # two passes a window apart (planning and scoring), then random lookups
    lag = rng.randrange(1, 40)
    order = [ids[j] for k in range(len(ids) + lag)
             for j in (k, k - lag) if 0 <= j < len(ids)]
    for qid in order + rng.choices(ids, k=50):
        assert table[qid] == want[qid] and table.get(qid) == want[qid] and qid in table
    assert table.get("absent") is None and "absent" not in table
    assert dict(table) == want


@given(st.lists(st.sampled_from([f"art{k}" for k in range(40)] + ["", "é", "漢字"]),
                max_size=3000))
@settings(max_examples=60, deadline=None)
def test_distinct_count_is_the_size_of_the_set(names: list[str]) -> None:
    count = DistinctCount()
    for name in names:
        count.add(name)
    assert len(count) == len(set(names))
    count.add("one more")
    assert len(count) == len(set(names) | {"one more"})
