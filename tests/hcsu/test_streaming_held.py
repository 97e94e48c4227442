"""The held-back queue of the streamed description run keeps first-in first-out order
whether its records sit in memory or in its temporary file."""

from __future__ import annotations

from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.benchmarks.hcsu.held_records import HeldRecords
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.types import Outcome


def _record(n: int) -> SampleRecord:
    return SampleRecord(schema="heritage-eval/sample/1", id=f"s{n}", benchmark="hcsu-description",
                        model="m",
                        groups={"domain": "Bei"}, state=Outcome.UNPARSED,
                        scores={"bertscore_x10": 0.1 * n, "terminology": None},
                        answer="", details={"words": n, "flags": ["a", "宋"]})


@settings(max_examples=60, deadline=None)
@given(limit=st.integers(1, 4), ops=st.lists(st.booleans(), max_size=40))
def test_held_records_are_a_fifo_across_memory_and_file(limit: int, ops: list[bool]) -> None:
    # reference: a plain deque; True pushes the next record, False pops (when any)
    queue, model, n = HeldRecords(limit), deque[tuple[SampleRecord, int]](), 0
    for push in ops:
        if push:
            queue.push(_record(n), n % 3)
            model.append((_record(n), n % 3))
            n += 1
        elif model:
            want, tag = model.popleft()
            assert queue.head_tag() == tag
            assert queue.pop().to_json_line() == want.to_json_line()  # same line back
        assert len(queue) == len(model)
    while model:
        assert queue.pop().to_json_line() == model.popleft()[0].to_json_line()
    assert queue.head_tag() is None
    queue.close()
