"""Seeded choices shared by the HCSU tasks: target sampling, character identity.

Every random choice draws from ``random.Random`` seeded with a hash of (seed, sample or
class id, purpose), so a question never depends on the order in which others were built
(DESIGN.md, rule 3).
"""

from __future__ import annotations

import random
from functools import lru_cache

from opencc import OpenCC

from heritage_eval.benchmarks.hcsu.schema import Domain, HcsuDataset, HcsuImage
from heritage_eval.core.types import stable_hash

#: Images per class in the paper's benchmark (§3.2).
DEFAULT_PER_CLASS = 90


class HcsuConfigError(Exception):
    """The requested setting cannot be met by the data (too few classes for K, no shot
    satisfying the anti-leakage rule); the message says what to change."""


def rng_for(seed: int, *parts: object) -> random.Random:
    """A generator seeded from ``(seed, *parts)`` via SHA-256 (stable across runs/platforms)."""
    return random.Random(int(stable_hash([seed, *parts], length=16), 16))


@lru_cache(maxsize=1)
def _t2s() -> OpenCC:
    return OpenCC("t2s")


@lru_cache(maxsize=65536)
def simplified(char: str) -> str:
    """The simplified form of ``char`` (OpenCC ``t2s``); unchanged when already simple."""
    return str(_t2s().convert(char.strip()))


def same_character(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` are the same character, comparing traditional and
    simplified forms alike (長 and 长 are the same character)."""
    a, b = a.strip(), b.strip()
    return a == b or simplified(a) == simplified(b)


def select_targets(dataset: HcsuDataset, per_class: int, seed: int,
                   domains: tuple[Domain, ...] | None = None) -> list[HcsuImage]:
    """Up to ``per_class`` target images per class (all of them when fewer), drawn with a
    generator seeded from (seed, class key); returned sorted by sample id.

    Images whose file is missing are eligible too, so they surface as ``error`` rows.
    Raises ``ValueError`` when ``per_class`` < 1.
    """
    if per_class < 1:
        raise ValueError(f"per_class must be at least 1, got {per_class}")
    by_class: dict[str, list[HcsuImage]] = {}
    for img in dataset.images:
        if domains is None or img.domain in domains:
            by_class.setdefault(img.class_key, []).append(img)
    chosen: list[HcsuImage] = []
    for key in sorted(by_class):
        members = sorted(by_class[key], key=lambda i: i.id)
        if len(members) > per_class:
            members = rng_for(seed, key, "targets").sample(members, per_class)
        chosen.extend(members)
    return sorted(chosen, key=lambda i: i.id)


def limit_per_domain(targets: list[HcsuImage], limit: int | None) -> list[HcsuImage]:
    """At most ``limit`` targets per domain, taken round-robin over its classes (first by
    id within each class) so every class is represented; all when ``limit`` is ``None``.
    Returned sorted by sample id."""
    if limit is None:
        return targets
    by_domain: dict[str, dict[str, list[HcsuImage]]] = {}
    for t in targets:
        by_domain.setdefault(t.domain, {}).setdefault(t.class_key, []).append(t)
    out: list[HcsuImage] = []
    for classes in by_domain.values():
        queues = [sorted(v, key=lambda i: i.id) for _, v in sorted(classes.items())]
        taken = 0
        depth = 0
        while taken < limit and any(depth < len(q) for q in queues):
            for q in queues:
                if depth < len(q) and taken < limit:
                    out.append(q[depth])
                    taken += 1
            depth += 1
    return sorted(out, key=lambda i: i.id)
