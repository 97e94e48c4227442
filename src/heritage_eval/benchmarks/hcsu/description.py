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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from heritage_eval.benchmarks.hcsu.pool_view import PoolView
from heritage_eval.benchmarks.hcsu.prompts import description_message, template
from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError, rng_for, simplified
from heritage_eval.benchmarks.hcsu.schema import Domain, HcsuDataset, HcsuImage, StyleClass
from heritage_eval.benchmarks.hcsu.task_defaults import DEFAULT_SHOTS as DEFAULT_SHOTS
from heritage_eval.benchmarks.hcsu.task_defaults import MAX_WORDS as MAX_WORDS
from heritage_eval.core.types import Conversation

Pool = Literal["domain", "all"]
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


class ShotIndex:
    """What the requests of one build share: each class's :func:`shot_pool` as a
    :class:`~.pool_view.PoolView` of one sorted list per domain (or of the data's) and
    the simplified character of each usable image, per class (memory linear in the data,
    not one pool list per target)."""

    def __init__(self, dataset: HcsuDataset, pool: Pool) -> None:
        self.dataset, self.pool = dataset, pool
        self._sorted = sorted(dataset.classes.values(), key=lambda c: c.key)
        self._bases: dict[str | None, tuple[list[StyleClass], dict[object, list[int]]]] = {}
        self._simple: dict[str, tuple[str, ...]] = {}

    def pool_of(self, cls: StyleClass) -> PoolView[StyleClass]:
        """:func:`shot_pool` of ``cls`` (a view)."""
        where = None if self.pool == "all" else cls.domain
        got = self._bases.get(where)
        if got is None:
            classes = [c for c in self._sorted if c.description and c.images
                       and (where is None or c.domain == where)]
            at: dict[object, list[int]] = {}
            for n, c in enumerate(classes):  # positions by style and by description
                at.setdefault(("style", c.style), []).append(n)
                at.setdefault(("text", c.description), []).append(n)
            got = self._bases[where] = (classes, at)
        classes, at = got
        skip = set(at.get(("style", cls.style), ())) | set(at.get(("text", cls.description), ()))
        return PoolView(classes, tuple(sorted(skip)))

    def simple_chars(self, cls: StyleClass) -> tuple[str, ...]:
        """The simplified character of each usable image of ``cls`` (in order)."""
        got = self._simple.get(cls.key)
        if got is None:
            got = self._simple[cls.key] = tuple(simplified(i.char) for i in cls.images)
        return got

    def eligible(self, cls: StyleClass, simple: str) -> list[HcsuImage]:
        """The usable images of ``cls`` not showing the character whose simplified form
        is ``simple`` (``same_character`` compares simplified forms), in order."""
        return [i for i, s in zip(cls.images, self.simple_chars(cls), strict=True)
                if s != simple]

    def has_shots(self, cls: StyleClass, simple: str, shots: int) -> int:
        """The number of eligible shot images in ``cls``'s pool for a target character
        ``simple``, counted until ``shots`` is reached (the full count below it)."""
        total = 0
        for c in self.pool_of(cls):
            total += sum(1 for s in self.simple_chars(c) if s != simple)
            if total >= shots:
                break
        return total


def _too_few(target: HcsuImage, total: int, config: DescriptionConfig) -> HcsuConfigError:
    return HcsuConfigError(
        f"anti-leakage rule: target {target.id} (character {target.char}) has only "
        f"{total} shot image(s) of other classes without that character in the "
        f"{config.pool!r} pool, {config.shots} needed; lower --shots"
        + (" or use --shot-pool all" if config.pool == "domain" else ""))


def choose_shots(dataset: HcsuDataset, target: HcsuImage, config: DescriptionConfig,
                 index: ShotIndex | None = None, unusable: list[str] | None = None
                 ) -> tuple[Shot, ...]:
    """The ``config.shots`` shots for ``target`` (see the module docstring). ``index``:
    the :class:`ShotIndex` of ``dataset`` and ``config.pool`` shared by one build (made
    when ``None``). Shots are drawn from every annotated image (so an unreadable file
    does not move other samples' draws); the ``load_error`` of each drawn image that has
    one is appended to ``unusable``.

    Raises :class:`HcsuConfigError` when the pool has too few eligible images.
    """
    index = index or ShotIndex(dataset, config.pool)
    cls = dataset.classes[target.class_key]
    classes = index.pool_of(cls).to_list()
    rng = rng_for(config.seed, target.id, "shots")
    rng.shuffle(classes)
    simple = simplified(target.char)  # same_character: equal simplified forms
    # the eligible images of a class, listed when the round-robin first visits it
    eligible: dict[str, list[HcsuImage]] = {}
    total = 0
    for c in classes:
        eligible[c.key] = index.eligible(c, simple)
        total += len(eligible[c.key])
        if total >= config.shots:
            break
    if total < config.shots:
        raise _too_few(target, total, config)
    chosen: list[Shot] = []
    while len(chosen) < config.shots:
        for c in classes:
            if len(chosen) == config.shots:
                break
            images = eligible.get(c.key)
            if images is None:
                images = eligible[c.key] = index.eligible(c, simple)
            if images:
                img = images.pop(rng.randrange(len(images)))
                chosen.append(Shot(c.key, img.path_text, img.char, c.description or ""))
                if img.load_error and unusable is not None:
                    unusable.append(img.load_error)
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


def check_shots(dataset: HcsuDataset, targets: Sequence[HcsuImage],
                config: DescriptionConfig, index: ShotIndex) -> None:
    """Raise :class:`HcsuConfigError` (that of :func:`choose_shots`) for the first
    target, in order, whose pool has too few eligible shot images; targets with a
    ``load_error`` get no shots and are not checked."""
    known: dict[tuple[str, str], int] = {}
    for t in targets:
        if t.load_error:
            continue
        simple = simplified(t.char)
        key = (t.class_key, simple)
        total = known.get(key)
        if total is None:
            if len(known) >= 65536:  # bounded: a later repeat is counted again
                known.clear()
            total = known[key] = index.has_shots(dataset.classes[t.class_key], simple,
                                                 config.shots)
        if total < config.shots:
            raise _too_few(t, total, config)


def build_request(dataset: HcsuDataset, target: HcsuImage, config: DescriptionConfig,
                  index: ShotIndex | None = None) -> PlannedRequest:
    """The :class:`PlannedRequest` of ``target`` (no request for a target with a
    ``load_error``); raises :class:`HcsuConfigError` as :func:`choose_shots`."""
    if target.load_error:
        return PlannedRequest(target, None, target.load_error)
    cls = dataset.classes[target.class_key]
    unusable: list[str] = []
    shots = choose_shots(dataset, target, config, index, unusable)
    if unusable:  # a drawn shot image cannot be read: this sample's data error
        return PlannedRequest(target, None, f"a shot image drawn for {target.id} cannot "
                                            f"be used: {unusable[0]}")
    return PlannedRequest(target, DescriptionRequest(
        sample_id=target.id, domain=target.domain, class_key=cls.key, char=target.char,
        target_image=target.path_text, shots=shots,
        reference=cls.description or "", max_words=config.max_words))


def build_requests(dataset: HcsuDataset, targets: list[HcsuImage],
                   config: DescriptionConfig) -> list[PlannedRequest]:
    """One :class:`PlannedRequest` per target (input order); raises
    :class:`HcsuConfigError` when a setting cannot be met for some target."""
    check_feasible(dataset, targets, config)
    index = ShotIndex(dataset, config.pool)
    return [build_request(dataset, t, config, index) for t in targets]
