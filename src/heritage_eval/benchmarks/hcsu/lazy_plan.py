"""A run's planned questions built when they are read: :class:`LazyPlan`.

A planned item (a K-way question, an N-shot request) holds a few kB of texts and paths;
planned up front, 100,000 samples held several hundred MB for the whole run. Every
choice in an item is seeded from (seed, sample id, purpose) (DESIGN.md, rule 3), so an
item built again is the same item: the plan keeps only the targets (references to the
loaded images) and builds item ``i`` from target ``i`` each time it is read — once
when the engine sends it, once when it is scored. Checks that must stop a run before
anything is written (K too large, the anti-leakage rule) are made on the whole plan
when it is made (:func:`~.pipeline.lazy_discrimination_plan`,
:func:`~.pipeline.lazy_description_plan`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar, overload

from heritage_eval.benchmarks.hcsu.schema import HcsuImage
from heritage_eval.core.lazy_samples import ReiterableSamples

T = TypeVar("T")


class LazyPlan(ReiterableSamples[T]):
    """The items ``build(t)`` of ``targets``, in order, made when read.

    ``targets``: the planned targets (kept, never copied); ``build``: a pure function
    of one target (same target, equal item). ``ids``: the targets' sample ids (the
    engine reads them without building anything). ``plan[i]`` builds item ``i`` alone
    (O(1)); a slice returns a list of built items; negative indices count from the
    end; an index outside ``[-n, n)`` raises ``IndexError``.
    """

    __slots__ = ("build", "targets")

    def __init__(self, targets: Sequence[HcsuImage], build: Callable[[HcsuImage], T]
                 ) -> None:
        super().__init__(lambda: map(build, targets), len(targets),
                         ids=[t.id for t in targets])
        self.targets = targets
        self.build = build

    def __iter__(self) -> Iterator[T]:
        return map(self.build, self.targets)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self.build(t) for t in self.targets[index]]
        n = len(self.targets)
        if not -n <= index < n:
            raise IndexError(f"sample index {index} out of range (length {n})")
        return self.build(self.targets[index])

    def __repr__(self) -> str:
        return f"LazyPlan(n={len(self.targets)})"
