"""``release_ids``: the engine drops a ReiterableSamples' kept ids once the run folder is
checked; the ids then come from the data again (same strings, same order)."""

from __future__ import annotations

from types import SimpleNamespace

from heritage_eval.core.compact_ids import CompactIds
from heritage_eval.core.lazy_samples import ReiterableSamples, release_ids, sample_ids


def _samples(kept: bool) -> tuple[ReiterableSamples[SimpleNamespace], list[int]]:
    reads = [0]
    names = ["a/1", "b/2", "a/3"]

    def factory():  # type: ignore[no-untyped-def]
        reads[0] += 1
        return iter(SimpleNamespace(id=n) for n in names)

    return ReiterableSamples(factory, 3, CompactIds(names) if kept else None), reads


def test_kept_ids_are_answered_without_a_pass_then_released() -> None:
    samples, reads = _samples(kept=True)
    assert list(sample_ids(samples)) == ["a/1", "b/2", "a/3"] and reads == [0]
    release_ids(samples)
    assert samples.ids is None
    # read from the data again: one pass, the same ids in the same order
    assert list(sample_ids(samples)) == ["a/1", "b/2", "a/3"] and reads == [1]


def test_anything_else_is_left_alone() -> None:
    held = [SimpleNamespace(id="x")]
    release_ids(held)  # a list: nothing to drop, nothing changed
    assert sample_ids(held) == ["x"]
    samples, reads = _samples(kept=False)
    release_ids(samples)
    assert samples.ids is None and reads == [0]
