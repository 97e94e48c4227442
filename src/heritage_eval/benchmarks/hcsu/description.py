"""N-shot style-description requests (HCSU §4.1 protocol 2, §4.2 anti-leakage rule).

Each shot is an image of *another* class with that class's expert description. Rules:

- the target's own class is never a shot, nor a class with the same calligrapher and
  script in the other domain, nor a class whose description equals the target's
  reference (so the reference cannot be copied);
- no shot image shows the target's character (traditional and simplified forms count
  as the same character): the paper's anti-leakage rule;
- shots come from the target's domain (``pool="domain"``) or from both (``"all"``);
  classes are visited in a seeded random order, one image per class per round, so N
  shots cover N different classes whenever the pool has that many.

If the pool cannot supply N images, :func:`build_requests` raises
:class:`~.sampling.HcsuConfigError` naming the target: the rule is never relaxed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from heritage_eval.benchmarks.hcsu.prompts import description_message, template
from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError, rng_for, same_character
from heritage_eval.benchmarks.hcsu.schema import Domain, HcsuDataset, HcsuImage, StyleClass
from heritage_eval.core.types import Conversation

Pool = Literal["domain", "all"]
#: Shots used in the paper (§3.2) and the word limit of an answer (§4.1).
DEFAULT_SHOTS = 2
MAX_WORDS = 50
_WORD = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\s\u3400-\u9fff\uf900-\ufaff]+")


@dataclass(frozen=True)
class DescriptionConfig:
    """Settings of a description run: ``shots`` (>= 1), ``per_class`` targets,
    ``pool`` for shots, ``seed``, ``max_words`` asked of the model."""

    shots: int = DEFAULT_SHOTS
    per_class: int = 90
    pool: Pool = "domain"
    seed: int = 0
    max_words: int = MAX_WORDS

    def spec(self) -> dict[str, Any]:
        return {"shots": self.shots, "per_class": self.per_class, "shot_pool": self.pool,
                "seed": self.seed, "max_words": self.max_words}


@dataclass(frozen=True)
class Shot:
    """One in-context example: class, image path, its character and the description."""

    class_key: str
    image: str
    char: str
    description: str


@dataclass(frozen=True)
class DescriptionRequest:
    """One target with its shots and its class's expert ``reference`` description."""

    sample_id: str
    domain: Domain
    class_key: str
    char: str
    target_image: str
    shots: tuple[Shot, ...]
    reference: str
    max_words: int

    def conversation(self) -> Conversation:
        """System persona + one user turn; ``payload`` mirrors the inputs for baselines."""
        msg = description_message(self.target_image, [(s.image, s.description)
                                                      for s in self.shots], self.max_words)
        payload = {"task": "hcsu-description", "sample_id": self.sample_id,
                   "domain": self.domain, "target_image": self.target_image,
                   "shots": [{"image": s.image, "description": s.description,
                              "class": s.class_key, "domain": s.class_key.split("/", 1)[0]}
                             for s in self.shots]}
        return Conversation(system=template("system"), turns=(msg,), payload=payload)

    def record(self) -> dict[str, Any]:
        return {"target_image": self.target_image,
                "shots": [{"class": s.class_key, "image": s.image, "char": s.char}
                          for s in self.shots]}


def word_count(text: str) -> int:
    """Words in ``text``: whitespace-separated tokens, each CJK character counting as one."""
    return len(_WORD.findall(text))


def shot_pool(dataset: HcsuDataset, target_class: StyleClass, pool: Pool) -> list[StyleClass]:
    """Classes allowed to provide shots for ``target_class`` (sorted by key)."""
    return [c for c in sorted(dataset.classes.values(), key=lambda c: c.key)
            if c.key != target_class.key and c.style != target_class.style
            and c.description and c.description != target_class.description and c.images
            and (pool == "all" or c.domain == target_class.domain)]


def choose_shots(dataset: HcsuDataset, target: HcsuImage, config: DescriptionConfig
                 ) -> tuple[Shot, ...]:
    """The ``config.shots`` shots for ``target`` (see the module docstring).

    Raises :class:`HcsuConfigError` when the pool has too few eligible images.
    """
    cls = dataset.classes[target.class_key]
    classes = shot_pool(dataset, cls, config.pool)
    rng = rng_for(config.seed, target.id, "shots")
    rng.shuffle(classes)
    eligible = {c.key: [i for i in c.images if not same_character(i.char, target.char)]
                for c in classes}
    total = sum(len(v) for v in eligible.values())
    if total < config.shots:
        raise HcsuConfigError(
            f"anti-leakage rule: target {target.id} (character {target.char}) has only "
            f"{total} shot image(s) of other classes without that character in the "
            f"{config.pool!r} pool, {config.shots} needed; lower --shots"
            + (" or use --shot-pool all" if config.pool == "domain" else ""))
    chosen: list[Shot] = []
    while len(chosen) < config.shots:
        for c in classes:
            if len(chosen) == config.shots:
                break
            if eligible[c.key]:
                img = eligible[c.key].pop(rng.randrange(len(eligible[c.key])))
                chosen.append(Shot(c.key, str(img.path), img.char, c.description or ""))
    return tuple(chosen)


def check_feasible(dataset: HcsuDataset, targets: list[HcsuImage],
                   config: DescriptionConfig) -> None:
    """Raise :class:`HcsuConfigError` for a bad shot count or a class without reference."""
    if config.shots < 1:
        raise HcsuConfigError(f"--shots must be at least 1, got {config.shots}")
    missing = sorted({t.class_key for t in targets
                      if not dataset.classes[t.class_key].description})
    if missing:
        raise HcsuConfigError(f"{len(missing)} class(es) have no expert description to score "
                              "against: " + ", ".join(missing[:8]))


@dataclass(frozen=True)
class PlannedRequest:
    """A target and its request, or the reason none was built (missing image)."""

    target: HcsuImage
    request: DescriptionRequest | None
    error: str | None = None

    @property
    def id(self) -> str:
        """The target's sample id (``"<domain>/<class>/<file stem>"``)."""
        return self.target.id


def build_requests(dataset: HcsuDataset, targets: list[HcsuImage],
                   config: DescriptionConfig) -> list[PlannedRequest]:
    """One :class:`PlannedRequest` per target (input order); raises
    :class:`HcsuConfigError` when a setting cannot be met for some target."""
    check_feasible(dataset, targets, config)
    out = []
    for t in targets:
        if t.load_error:
            out.append(PlannedRequest(t, None, t.load_error))
            continue
        cls = dataset.classes[t.class_key]
        out.append(PlannedRequest(t, DescriptionRequest(
            sample_id=t.id, domain=t.domain, class_key=cls.key, char=t.char,
            target_image=str(t.path), shots=choose_shots(dataset, t, config),
            reference=cls.description or "", max_words=config.max_words)))
    return out
