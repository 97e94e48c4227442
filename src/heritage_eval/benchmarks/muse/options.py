"""Multiple-choice option assembly shared by the generators.

A :class:`Candidate` is one possible option (text, box and/or image) with its distractor
type. :func:`pick_distractors` draws distractors round-robin over the allowed distractor
types (random type order, one candidate per type per round), so a question mixes types
before repeating one; :func:`assemble` shuffles the options (``none`` options last),
labels them A, B, … and returns the correct label.
"""

from __future__ import annotations

import random
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from heritage_eval.benchmarks.muse.annotation import Box
from heritage_eval.benchmarks.muse.questions import OptionRecord

CORRECT = "correct"
NONE_TEXT = "None of the above"
#: Distractor types always placed after the shuffled options.
LAST_TYPES = ("none",)


@dataclass(frozen=True)
class Candidate:
    """A possible option; ``box`` normalized COCO, ``image`` a relative path."""

    distractor_type: str
    text: str | None = None
    box: Box | None = None
    image: str | None = None

    def key(self) -> tuple[object, ...]:
        """Identity used to drop duplicate options (case-folded text, box to 3 decimals)."""
        text = " ".join(self.text.casefold().split()) if self.text else None
        box = tuple(round(v, 3) for v in self.box.coco()) if self.box else None
        return (text, box, self.image)


def pick_distractors(pools: Mapping[str, Sequence[Candidate]], allowed: Sequence[str],
                     n: int, rng: random.Random,
                     taken: Sequence[Candidate] = ()) -> list[Candidate]:
    """Up to ``n`` distractors from ``pools`` (distractor type → candidates).

    Types are visited in a random order, one candidate each per round (candidates of a type
    in random order); a candidate whose :meth:`Candidate.key` equals an option already
    taken (``taken`` or earlier picks) is skipped. Returns fewer than ``n`` when the pools
    run out.
    """
    types = [t for t in allowed if pools.get(t)]
    rng.shuffle(types)
    queues = {t: rng.sample(list(pools[t]), len(pools[t])) for t in types}
    seen = {c.key() for c in taken}
    out: list[Candidate] = []
    while len(out) < n and any(queues.values()):
        for t in types:
            queue = queues[t]
            while queue:
                cand = queue.pop()
                if cand.key() not in seen:
                    seen.add(cand.key())
                    out.append(cand)
                    break
            if len(out) >= n:
                break
    return out


def assemble(correct: Candidate, distractors: Sequence[Candidate],
             rng: random.Random) -> tuple[list[OptionRecord], str]:
    """Shuffle ``correct`` with ``distractors`` (types in :data:`LAST_TYPES` go last),
    label them A, B, …; returns the option records and the correct label."""
    main = [correct, *[d for d in distractors if d.distractor_type not in LAST_TYPES]]
    rng.shuffle(main)
    ordered = main + [d for d in distractors if d.distractor_type in LAST_TYPES]
    records: list[OptionRecord] = []
    answer = ""
    for label, cand in zip(string.ascii_uppercase, ordered, strict=False):
        records.append(OptionRecord(label=label, text=cand.text, image=cand.image,
                                    box=cand.box.coco() if cand.box else None,
                                    distractor_type=cand.distractor_type))
        if cand is correct:
            answer = label
    return records, answer


def none_candidate() -> Candidate:
    """The "None of the above" distractor."""
    return Candidate("none", text=NONE_TEXT)
