"""Multiple-choice option assembly shared by the generators.

A :class:`Candidate` is one possible option (text, box and/or image) with its distractor
type. :func:`pick_distractors` draws distractors round-robin over the allowed distractor
types (random type order, one candidate per type per round), so a question mixes types
before repeating one; :func:`assemble` shuffles the options ("None of the above" last),
labels them A, B, … and returns the correct label.

"None of the above" (tasks 5 and 6, distractor type ``none``): when allowed it is always
the last option, and with probability ``none_correct_rate`` (default ``1 / n_options``,
so it is right as often as any other position) it is the *correct* answer: the true
option is left out and ``n_options - 1`` real distractors are shown
(:func:`choose_with_none`).

Box distractors must be really wrong: :func:`too_close` rejects a box whose IoU with the
true box, or whose coverage of the true box (the share of the true box inside it), is
above a limit (default :data:`MAX_OVERLAP`), so a box containing the answer is never a
wrong option.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from heritage_eval.benchmarks.muse.annotation import Box
from heritage_eval.benchmarks.muse.questions import OptionRecord

CORRECT = "correct"
NONE_TEXT = "None of the above"
#: Distractor types always placed after the shuffled options.
LAST_TYPES = ("none",)
#: Default limit of IoU and of coverage of the true box for a box distractor.
MAX_OVERLAP = 0.5


def too_close(box: Box, truth: Box, limit: float = MAX_OVERLAP) -> bool:
    """True when ``box`` cannot be a wrong answer for ``truth``: IoU above ``limit`` or
    more than ``limit`` of the true box's area inside ``box`` (e.g. it contains it)."""
    return box.iou(truth) > limit or box.coverage(truth) > limit


@dataclass(frozen=True)
class Candidate:
    """A possible option; ``box`` normalized COCO, ``image`` a relative path."""

    distractor_type: str
    text: str | None = None
    box: Box | None = None
    image: str | None = None

    @property
    def is_none(self) -> bool:
        """True for a "None of the above" option (correct or not)."""
        return self.text == NONE_TEXT and self.box is None and self.image is None

    def key(self) -> tuple[object, ...]:
        """Identity used to drop duplicate options (case-folded text, box to 3 decimals)."""
        text = " ".join(self.text.casefold().split()) if self.text else None
        box = tuple(round(v, 3) for v in self.box.coco()) if self.box else None
        return (text, box, self.image)


Compatible = Callable[[Candidate, Sequence[Candidate]], bool]


def pick_distractors(pools: Mapping[str, Sequence[Candidate]], allowed: Sequence[str],
                     n: int, rng: random.Random,
                     taken: Sequence[Candidate] = (),
                     compatible: Compatible | None = None) -> list[Candidate]:
    """Up to ``n`` distractors from ``pools`` (distractor type → candidates).

    Types are visited in a random order, one candidate each per round (candidates of a type
    in random order); a candidate whose :meth:`Candidate.key` equals an option already
    taken (``taken`` or earlier picks), or for which ``compatible(candidate, chosen)`` is
    false (``chosen`` = ``taken`` + earlier picks), is skipped. Returns fewer than ``n``
    when the pools run out.
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
                if cand.key() not in seen and (
                        compatible is None or compatible(cand, [*taken, *out])):
                    seen.add(cand.key())
                    out.append(cand)
                    break
            if len(out) >= n:
                break
    return out


def assemble(correct: Candidate, distractors: Sequence[Candidate],
             rng: random.Random) -> tuple[list[OptionRecord], str]:
    """Shuffle ``correct`` with ``distractors`` ("None of the above" goes last, correct or
    not), label them A, B, …; returns the option records and the correct label."""
    everything = [correct, *distractors]
    main = [c for c in everything if not c.is_none]
    rng.shuffle(main)
    ordered = main + [c for c in everything if c.is_none]
    records: list[OptionRecord] = []
    answer = ""
    for label, cand in zip(string.ascii_uppercase, ordered, strict=False):
        records.append(OptionRecord(label=label, text=cand.text, image=cand.image,
                                    box=cand.box.coco() if cand.box else None,
                                    distractor_type=cand.distractor_type))
        if cand is correct:
            answer = label
    return records, answer


def none_candidate(distractor_type: str = "none") -> Candidate:
    """The "None of the above" option (a distractor, or ``CORRECT`` when it is the
    answer)."""
    return Candidate(distractor_type, text=NONE_TEXT)


def none_rate(rate: float | None, n_options: int) -> float:
    """Probability that "None of the above" is the answer: ``rate``, or ``1 / n_options``
    when ``None``."""
    return 1.0 / n_options if rate is None else rate


def _pick(pools: Mapping[str, Sequence[Candidate]], allowed: Sequence[str], n: int,
          rng: random.Random, taken: Sequence[Candidate], compatible: Compatible | None,
          fill: Compatible | None) -> list[Candidate]:
    picked = pick_distractors(pools, allowed, n, rng, taken, compatible)
    if fill is not None and len(picked) < n:
        picked += pick_distractors(pools, allowed, n - len(picked), rng, [*taken, *picked],
                                   fill)
    return picked


def choose_with_none(truth: Candidate, pools: Mapping[str, Sequence[Candidate]],
                     allowed: Sequence[str], n_options: int, rate: float | None,
                     rng: random.Random, compatible: Compatible | None = None,
                     fill: Compatible | None = None
                     ) -> tuple[Candidate, list[Candidate], bool]:
    """Pick the options of a question that may end with "None of the above".

    Without ``none`` in ``allowed``: ``(truth, n_options - 1 distractors, False)``. With
    it, "None of the above" is always shown (last); with probability
    :func:`none_rate` it is the answer — returns ``(none (CORRECT), n_options - 1 real
    distractors, True)``, the truth left out — else ``(truth, n_options - 2 real
    distractors + none, False)``. ``truth`` always counts as taken (no distractor
    duplicates it). Distractors must pass ``compatible``; when the pools run out, slots
    still open are filled with candidates passing ``fill`` (a looser rule). The draw is
    made first, so it does not depend on the pools.
    """
    real = [t for t in allowed if t != "none"]
    if "none" not in allowed:
        return truth, _pick(pools, real, n_options - 1, rng, [truth], compatible,
                            fill), False
    none_is_answer = rng.random() < none_rate(rate, n_options)
    if none_is_answer:
        picked = _pick(pools, real, n_options - 1, rng, [truth], compatible, fill)
        return none_candidate(CORRECT), picked, True
    picked = _pick(pools, real, n_options - 2, rng, [truth], compatible, fill)
    return truth, [*picked, none_candidate()], False
