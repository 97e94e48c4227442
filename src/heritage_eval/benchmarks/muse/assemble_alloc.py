"""Choosing N questions per task from one group of pool candidates (``muse assemble``).

A *group* is one allocation unit: a single task, or the affective dialogue (tasks 1–4
share one question; a dialogue of depth k has turns for tasks 1…k).

**Quotas by depth** (:func:`depth_quotas`). With ``avail_k`` = candidates of depth ≥ k
and target ``t_k = min(N, avail_k)`` for the group's k-th task, the allocation takes
``t_k − t_{k+1}`` candidates of depth exactly k (deepest first). Every task then gets
``min(N, available)`` questions — the most any selection can give it. A single-task group
has one layer with quota ``min(N, len(candidates))``.

**Balanced** (:class:`Balancer`): a hierarchical least-filled-first round robin. Each pick
takes

1. the style with the fewest questions chosen so far (ties: more eligible candidates
   left, then seeded order),
2. within it, the scene theme with the fewest chosen so far *over the whole group*
   (same ties),
3. within (style, theme), the difficulty stratum with the fewest chosen over the group,
4. within those, the image with the fewest chosen (ties: seeded order), then that
   image's next candidate in seeded order.

Round robin over the values of one dimension ends at max-min fair (water-filling)
counts: each value gets ``min(available, λ)`` with λ common, the remainder of an
unfinished round going to the values with more candidates left. Theme and difficulty
are balanced over the group as far as the style choice allows. **Image cap**: an image
takes at most ``ceil(ceil(n / images) × slack)`` of the group's ``n`` questions; when
only capped images have candidates left the cap rises by one (recorded), so the quotas
are still met.

**Random** (:func:`allocate_random`, the human-study sampler of MUSE Fig. 11): per depth
layer (deepest first) ``rng.choice(len(layer), size=quota, replace=False)`` over the
layer in pool order — uniform, no strata.

Randomness: one ``numpy.random.Generator`` per group, seeded by :func:`group_seed` from
(seed, group) only, so adding or removing a task never changes another task's draw.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

import numpy as np

from heritage_eval.benchmarks.muse.assemble_pool import Candidate
from heritage_eval.core.types import stable_hash

#: Dimensions balanced, in priority order (``image`` is spread last).
DIMENSIONS: tuple[str, ...] = ("style", "theme", "difficulty", "image")


def group_seed(seed: int, group: str) -> int:
    """Seed of a group's generator: ``int(stable_hash(["muse-assemble", seed, group],
    64), 16)`` (SHA-256 of canonical JSON; :func:`~heritage_eval.core.types.stable_hash`)."""
    return int(stable_hash(["muse-assemble", seed, group], 64), 16)


def group_rng(seed: int, group: str) -> np.random.Generator:
    """``numpy.random.default_rng(group_seed(seed, group))``."""
    return np.random.default_rng(group_seed(seed, group))


def depth_quotas(cands: Sequence[Candidate], per_task: int) -> dict[int, int]:
    """Depth k → how many candidates of depth exactly k to take (module doc); keys
    deepest first, zero quotas left out. ``per_task`` >= 1."""
    depths = Counter(len(c.tasks) for c in cands)
    top = max(depths, default=0)
    targets = [min(per_task, sum(n for d, n in depths.items() if d >= k))
               for k in range(1, top + 2)]
    quotas = {k: targets[k - 1] - targets[k] for k in range(top, 0, -1)}
    return {k: q for k, q in quotas.items() if q > 0}


#: Getter of each dimension's value on a candidate.
GETTERS: dict[str, Callable[[Candidate], str]] = {
    d: attrgetter(a) for d, a in zip(DIMENSIONS, ("style", "theme", "difficulty", "image_id"),
                                     strict=True)}


def value(c: Candidate, dim: str) -> str:
    """The candidate's value on one of :data:`DIMENSIONS`."""
    return GETTERS[dim](c)


@dataclass
class GroupChoice:
    """What was chosen for one group: candidates (pool order), the image cap it started
    with and ended at (``None`` for the random strategy)."""

    group: str
    chosen: list[Candidate] = field(default_factory=list)
    cap_start: int | None = None
    cap_end: int | None = None


Key3 = tuple[str, str, str]


class Balancer:
    """The balanced allocation of one group (module doc). Counts persist across the depth
    layers, so the layers together are balanced."""

    def __init__(self, cands: Sequence[Candidate], n_total: int, rng: np.random.Generator,
                 slack: float) -> None:
        order = rng.permutation(len(cands))
        ranked = [cands[int(i)] for i in order]
        self.rank = {c.index: r for r, c in enumerate(ranked)}
        self.vrank: dict[str, dict[str, int]] = {}
        for d, get in GETTERS.items():  # first appearance in seeded order
            firsts = dict.fromkeys(get(c) for c in ranked)
            self.vrank[d] = {v: r for r, v in enumerate(firsts)}
        self.counts: dict[str, Counter[str]] = {d: Counter() for d in DIMENSIONS}
        n_images = len(self.vrank["image"])
        self.cap = max(1, math.ceil(math.ceil(n_total / max(1, n_images)) * slack))
        self.cap_start = self.cap_end = self.cap

    def pick(self, layer: Sequence[Candidate], quota: int) -> list[Candidate]:
        """Take ``quota`` candidates of ``layer`` (fewer only if the layer is smaller)."""
        leaves: dict[tuple[str, str, str, str], deque[Candidate]] = {}
        for c in sorted(layer, key=lambda c: self.rank[c.index]):
            key = (c.style, c.theme, c.difficulty, c.image_id)
            leaves.setdefault(key, deque()).append(c)
        by_image: dict[str, list[tuple[str, str, str, str]]] = {}
        themes_of: dict[str, set[str]] = {}
        levels_of: dict[tuple[str, str], set[str]] = {}
        for key in leaves:
            by_image.setdefault(key[3], []).append(key)
            themes_of.setdefault(key[0], set()).add(key[1])
            levels_of.setdefault(key[:2], set()).add(key[2])
        e1: Counter[str] = Counter()
        e2: Counter[tuple[str, str]] = Counter()
        e3: Counter[Key3] = Counter()

        def eligible(image: str, sign: int) -> None:
            for key in by_image[image]:
                n = sign * len(leaves[key])
                e1[key[0]] += n
                e2[key[:2]] += n
                e3[key[:3]] += n

        heaps: dict[Key3, list[tuple[int, int, str]]] = {}

        def rebuild() -> None:
            heaps.clear()
            for key, dq in leaves.items():
                if dq and self.counts["image"][key[3]] < self.cap:
                    heaps.setdefault(key[:3], []).append(
                        (self.counts["image"][key[3]], self.vrank["image"][key[3]], key[3]))
            for h in heaps.values():
                heapq.heapify(h)

        for image in by_image:
            if self.counts["image"][image] < self.cap:
                eligible(image, +1)
        rebuild()
        left = len(layer)
        out: list[Candidate] = []
        while len(out) < quota and left:
            if not any(n > 0 for n in e1.values()):
                self.cap += 1  # only capped images have candidates left
                for image in by_image:
                    if self.counts["image"][image] == self.cap - 1:
                        eligible(image, +1)
                rebuild()
                continue
            s = self._least("style", {k: n for k, n in e1.items() if n > 0})
            h = self._least("theme", {t: e2[(s, t)] for t in themes_of[s] if e2[(s, t)] > 0})
            d = self._least("difficulty", {x: e3[(s, h, x)] for x in levels_of[(s, h)]
                                           if e3[(s, h, x)] > 0})
            image = self._image(heaps[(s, h, d)], leaves, (s, h, d))
            cand = leaves[(s, h, d, image)].popleft()
            out.append(cand)
            left -= 1
            e1[s] -= 1
            e2[(s, h)] -= 1
            e3[(s, h, d)] -= 1
            for dim in DIMENSIONS:
                self.counts[dim][value(cand, dim)] += 1
            n_img = self.counts["image"][image]
            if n_img >= self.cap:
                eligible(image, -1)
            if leaves[(s, h, d, image)] and n_img < self.cap:
                heapq.heappush(heaps[(s, h, d)], (n_img, self.vrank["image"][image], image))
        self.cap_end = self.cap
        return out

    def _least(self, dim: str, left: dict[str, int]) -> str:
        """The value of ``dim`` with the fewest chosen, then most ``left``, then seeded
        order."""
        return min(left, key=lambda v: (self.counts[dim][v], -left[v], self.vrank[dim][v]))

    def _image(self, heap: list[tuple[int, int, str]],
               leaves: dict[tuple[str, str, str, str], deque[Candidate]], k3: Key3) -> str:
        """Pop the least-used eligible image of stratum ``k3`` off its lazy heap."""
        while True:
            n, _, image = heapq.heappop(heap)
            current = self.counts["image"][image]
            if not leaves[(*k3, image)] or current >= self.cap:
                continue
            if current != n:  # stale entry: chosen since it was pushed
                heapq.heappush(heap, (current, self.vrank["image"][image], image))
                continue
            return image


def _layers(cands: Sequence[Candidate]) -> dict[int, list[Candidate]]:
    layers: dict[int, list[Candidate]] = {}
    for c in cands:
        layers.setdefault(len(c.tasks), []).append(c)
    return layers


def allocate_balanced(group: str, cands: Sequence[Candidate], per_task: int,
                      rng: np.random.Generator, slack: float) -> GroupChoice:
    """Balanced choice for one group (module doc); ``slack`` >= 1."""
    quotas = depth_quotas(cands, per_task)
    balancer = Balancer(cands, sum(quotas.values()), rng, slack)
    layers = _layers(cands)
    chosen: list[Candidate] = []
    for depth, quota in quotas.items():
        chosen += balancer.pick(layers[depth], quota)
    return GroupChoice(group, sorted(chosen, key=lambda c: c.index), balancer.cap_start,
                       balancer.cap_end)


def allocate_random(group: str, cands: Sequence[Candidate], per_task: int,
                    rng: np.random.Generator) -> GroupChoice:
    """Uniform seeded choice for one group (module doc)."""
    layers = _layers(cands)
    chosen: list[Candidate] = []
    for depth, quota in depth_quotas(cands, per_task).items():
        layer = layers[depth]
        picked = rng.choice(len(layer), size=quota, replace=False)
        chosen += [layer[int(i)] for i in picked]
    return GroupChoice(group, sorted(chosen, key=lambda c: c.index))
