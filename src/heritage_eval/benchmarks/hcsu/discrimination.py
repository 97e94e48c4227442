"""K-way style discrimination questions (HCSU §4.1, protocol 1).

For a target image of class C the question offers K candidates: C and K - 1 distractor
classes drawn from the other classes of the target's domain (``pool="domain"``) or of
both domains (``pool="all"``; a class with the same calligrapher and script in the other
domain is never a distractor, since it is the same style). Each candidate shows a style
description and one reference image of its class. The reference is never the target
image and, where the class allows, never shows the target's character (otherwise the
true class would be found by matching glyph shapes) — our addition, which the paper does
not state: ``references_avoid_target_char`` (``--no-references-avoid-target-char``)
turns it off, so that a reference is drawn from all the class's other images alike.
Candidate order is shuffled. Every
choice is seeded from (seed, sample id, purpose): same seed, byte-identical questions.

Description modes (ablation, Table 5): ``expert`` (the class's own expert description),
``random`` and ``generated`` (read from a file of model-written descriptions, keyed by
class key or by ``<calligrapher>-<script>``).

``random`` (decision): the K candidates show K *distinct* expert descriptions drawn
(seeded) from the classes of the whole dataset such that no candidate shows the
description of its own style (a derangement: every text sits on a wrong candidate), and
the description of the target's true class is never shown at all (on a wrong candidate
it would point to the target's style from the wrong label). This needs at least K
distinct descriptions besides the true class's; otherwise the run stops with a clear
message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from heritage_eval.benchmarks.hcsu.pool_view import PoolView
from heritage_eval.benchmarks.hcsu.prompts import discrimination_message, template
from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError, rng_for, simplified
from heritage_eval.benchmarks.hcsu.schema import Domain, HcsuDataset, HcsuImage, StyleClass
from heritage_eval.benchmarks.hcsu.task_defaults import DEFAULT_K as DEFAULT_K
from heritage_eval.core.types import Conversation, stable_hash

DescriptionMode = Literal["expert", "random", "generated"]
Pool = Literal["domain", "all"]
LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class DiscriminationConfig:
    """Settings of a discrimination run. ``k``: candidates per question (2–26).
    ``generated``: class key or style -> description, required for ``generated`` mode.
    ``avoid_target_char``: references show another character than the target where the
    class has one (default; not in the paper, see the module doc)."""

    k: int = DEFAULT_K
    per_class: int = 90
    pool: Pool = "domain"
    descriptions: DescriptionMode = "expert"
    seed: int = 0
    generated: Mapping[str, str] | None = field(default=None, compare=False)
    avoid_target_char: bool = True

    def spec(self) -> dict[str, Any]:
        """The settings as JSON (generated descriptions by hash), for provenance."""
        return {"k": self.k, "per_class": self.per_class, "distractor_pool": self.pool,
                "descriptions": self.descriptions, "seed": self.seed,
                "generated_hash": stable_hash(dict(self.generated)) if self.generated
                else None, "references_avoid_target_char": self.avoid_target_char}


@dataclass(frozen=True)
class Candidate:
    """One option: ``label``, its ``class_key``, reference ``image`` path, the
    ``description`` shown and ``description_from`` (class whose text it is)."""

    label: str
    class_key: str
    image: str
    description: str
    description_from: str


@dataclass(frozen=True)
class DiscriminationQuestion:
    """A built question; ``notes`` records fallbacks (e.g. a same-character reference)."""

    sample_id: str
    domain: Domain
    class_key: str
    char: str
    target_image: str
    candidates: tuple[Candidate, ...]
    notes: tuple[str, ...] = ()

    @property
    def labels(self) -> list[str]:
        return [c.label for c in self.candidates]

    @property
    def answer(self) -> str:
        """The label of the true class."""
        return next(c.label for c in self.candidates if c.class_key == self.class_key)

    def class_of(self, label: str) -> str:
        return next(c.class_key for c in self.candidates if c.label == label)

    def conversation(self) -> Conversation:
        """System persona + one user turn; ``payload`` mirrors the inputs for baselines."""
        msg = discrimination_message(self.target_image, [(c.label, c.description, c.image)
                                                         for c in self.candidates])
        payload = {"task": "hcsu-discrimination", "sample_id": self.sample_id,
                   "domain": self.domain, "options": self.labels,
                   "target_image": self.target_image,
                   "candidates": {c.label: {"image": c.image, "description": c.description,
                                            "domain": c.class_key.split("/", 1)[0]}
                                  for c in self.candidates}}
        return Conversation(system=template("system"), turns=(msg,), payload=payload)

    def record(self) -> dict[str, Any]:
        """JSON-ready description of the question (for ``samples.jsonl``)."""
        return {"target_image": self.target_image, "answer": self.answer,
                "candidates": [{"label": c.label, "class": c.class_key, "image": c.image,
                                "description_from": c.description_from}
                               for c in self.candidates], "notes": list(self.notes)}


@dataclass(frozen=True)
class PlannedItem:
    """A target and its question, or the reason no question could be built."""

    target: HcsuImage
    question: DiscriminationQuestion | None
    error: str | None = None

    @property
    def id(self) -> str:
        """The target's sample id (``"<domain>/<class>/<file stem>"``)."""
        return self.target.id


def distractor_pool(dataset: HcsuDataset, target_class: StyleClass, pool: Pool
                    ) -> list[StyleClass]:
    """Classes that may serve as distractors for ``target_class`` (sorted by key): not
    its style, with usable images, in its domain unless ``pool`` is ``"all"``. For many
    targets use one :class:`DistractorIndex`."""
    return list(DistractorIndex(dataset, pool).pool_of(target_class))


def _class_chars(cls: StyleClass) -> list[tuple[HcsuImage, str, str]]:
    """``(image, character, simplified character)`` of each usable image of ``cls``."""
    return [(i, i.char.strip(), simplified(i.char)) for i in cls.images]


class DistractorIndex:
    """The distractor classes of each class (:func:`distractor_pool`) and the expert
    descriptions of each style, computed once for one build of questions instead of once
    per target (a scan of every class each time: time quadratic in the data). The pools
    are :class:`PoolView` s of one sorted list per domain (or of the data's), the
    characters of a class one tuple of simplified forms: memory linear in the data.
    Lists are those :func:`distractor_pool` / :func:`_random_pool` return."""

    def __init__(self, dataset: HcsuDataset, pool: Pool) -> None:
        self.dataset, self.pool = dataset, pool
        self._sorted = sorted(dataset.classes.values(), key=lambda c: c.key)
        # the classes a pool may offer (usable images), per domain or all: classes, keys
        self._bases: dict[str | None, tuple[list[StyleClass], list[str], dict[str, list[int]]]] = {}
        self._random: dict[str, list[tuple[str, str]]] = {}
        self._simple: dict[str, tuple[str, ...]] = {}
        self.style_texts: dict[str, set[str | None]] = {}
        for c in dataset.classes.values():
            self.style_texts.setdefault(c.style, set()).add(c.description)

    def _base(self, cls: StyleClass) -> tuple[list[StyleClass], list[str], dict[str, list[int]]]:
        """The offered classes of ``cls``'s pool, their keys, and per style their
        positions."""
        where = None if self.pool == "all" else cls.domain
        got = self._bases.get(where)
        if got is None:
            classes = [c for c in self._sorted if c.images
                       and (where is None or c.domain == where)]
            styles: dict[str, list[int]] = {}
            for n, c in enumerate(classes):
                styles.setdefault(c.style, []).append(n)
            got = self._bases[where] = (classes, [c.key for c in classes], styles)
        return got

    def _skip(self, cls: StyleClass) -> tuple[int, ...]:
        # its own style (itself included) is never a distractor; a key differs from every
        # other class's, and the class itself has this style too
        return tuple(self._base(cls)[2].get(cls.style, ()))

    def pool_of(self, cls: StyleClass) -> PoolView[StyleClass]:
        """:func:`distractor_pool` of ``cls`` under this index's pool setting (a view)."""
        return PoolView(self._base(cls)[0], self._skip(cls))

    def pool_keys(self, cls: StyleClass) -> PoolView[str]:
        """The keys of :meth:`pool_of` ``cls`` (a view)."""
        return PoolView(self._base(cls)[1], self._skip(cls))

    def simple_chars(self, cls: StyleClass) -> tuple[str, ...]:
        """The simplified character of each usable image of ``cls`` (in order), for
        :func:`_reference`'s same-character test."""
        got = self._simple.get(cls.key)
        if got is None:
            got = self._simple[cls.key] = tuple(simplified(i.char) for i in cls.images)
        return got

    def chars_of(self, cls: StyleClass) -> list[tuple[HcsuImage, str, str]]:
        """``(image, character, simplified character)`` of each usable image of ``cls``
        (in order; made on each call)."""
        return _class_chars(cls)

    def random_pool(self, true_class: StyleClass) -> list[tuple[str, str]]:
        """:func:`_random_pool` of ``true_class``."""
        got = self._random.get(true_class.key)
        if got is None:
            banned = self.style_texts[true_class.style]
            texts: dict[str, str] = {}
            for c in self._sorted:
                if c.description and c.description not in banned \
                        and c.description not in texts:
                    texts[c.description] = c.key
            got = self._random[true_class.key] = [(key, text) for text, key in texts.items()]
        return got


class KTooLargeError(HcsuConfigError):
    """K exceeds what the data allows. ``k``: the K asked; ``max_k``: the largest K every
    target class supports; ``reason``: the limiting class, without advice."""

    def __init__(self, k: int, max_k: int, reason: str, pool: Pool,
                 option: str = "--k") -> None:
        self.k, self.max_k, self.reason, self.pool = k, max_k, reason, pool
        super().__init__(f"{reason}; {self.advice(option)}")

    def advice(self, option: str) -> str:
        """What to change, naming ``option`` (``--k`` or ``--ks``)."""
        if self.max_k < 2:  # K-way needs K >= 2: no K fits this data
            return ("no K fits this data (K-way needs at least 2 candidate classes with "
                    "usable images): check the images and annotations ('heritage-eval "
                    "validate hcsu' lists the problems)"
                    + ("; or use --distractor-pool all" if self.pool == "domain" else ""))
        return (f"lower {option} to at most {self.max_k}"
                + (" or use --distractor-pool all" if self.pool == "domain" else ""))


def check_feasible(dataset: HcsuDataset, targets: list[HcsuImage],
                   config: DiscriminationConfig, index: DistractorIndex | None = None
                   ) -> None:
    """Raise :class:`HcsuConfigError` when K cannot be met or descriptions are missing
    (:class:`KTooLargeError` for a K above what the data allows). ``index``: the
    :class:`DistractorIndex` of ``dataset`` and ``config.pool`` (built when ``None``)."""
    if not 2 <= config.k <= len(LABELS):
        raise HcsuConfigError(f"K must be between 2 and {len(LABELS)}, got {config.k}")
    index = index or DistractorIndex(dataset, config.pool)
    keys = sorted({t.class_key for t in targets})
    offered = {key: len(index.pool_of(dataset.classes[key])) for key in keys}
    if offered and min(offered.values()) < config.k - 1:
        key = min(offered, key=lambda k: (offered[k], k))
        n = offered[key]
        cls = dataset.classes[key]
        where = f"domain {cls.domain}" if config.pool == "domain" else "the data"
        raise KTooLargeError(config.k, n + 1,
                             f"K={config.k} needs {config.k - 1} distractor classes per "
                             f"target, but {where} offers only {n} for class {key}",
                             config.pool)
    if config.descriptions == "random":
        _check_random(dataset, targets, config.k, index)
        return
    needed = set(keys)
    for key in keys:
        needed |= index.pool_keys(dataset.classes[key]).as_set()
    missing = sorted(k for k in needed if _text(dataset.classes[k], config) is None)
    if missing:
        source = "the generated-descriptions file" if config.descriptions == "generated" \
            else "an expert description"
        raise HcsuConfigError(f"{len(missing)} class(es) lack {source}: "
                              + ", ".join(missing[:8]))


def _text(cls: StyleClass, config: DiscriminationConfig) -> str | None:
    if config.descriptions == "generated":
        gen = config.generated or {}
        return gen.get(cls.key) or gen.get(cls.style)
    return cls.description


def _reference(cls: StyleClass, target: HcsuImage, seed: int, avoid_char: bool = True,
               index: DistractorIndex | None = None) -> tuple[HcsuImage | None, bool]:
    """A reference image of ``cls`` for ``target``: never the target itself; with
    ``avoid_char``, a different character when possible (else any other image). Returns
    ``(image or None, fell back to same character)`` (always ``False`` without
    ``avoid_char``: nothing was avoided). ``index`` holds the classes' characters
    (:meth:`DistractorIndex.chars_of`)."""
    others = [i for i in cls.images if i.id != target.id]
    rng = rng_for(seed, target.id, "reference", cls.key)
    if not avoid_char:
        return (rng.choice(others), False) if others else (None, False)
    simples = index.simple_chars(cls) if index is not None \
        else tuple(simplified(i.char) for i in cls.images)
    # not same_character(i.char, target.char): the simplified forms differ (equal
    # stripped characters have equal simplified forms)
    simple = simplified(target.char)
    different = [i for i, s in zip(cls.images, simples, strict=True)
                 if i.id != target.id and s != simple]
    if different:
        return rng.choice(different), False
    return (rng.choice(others), True) if others else (None, False)


def _random_pool(dataset: HcsuDataset, true_class: StyleClass) -> list[tuple[str, str]]:
    """``(class key, text)`` of every distinct expert description except those of the
    true class's style, first class (by key) per text."""
    return DistractorIndex(dataset, "all").random_pool(true_class)


def _check_random(dataset: HcsuDataset, targets: list[HcsuImage], k: int,
                  index: DistractorIndex) -> None:
    for key in sorted({t.class_key for t in targets}):
        n = len(index.random_pool(dataset.classes[key]))
        if n < k:
            raise HcsuConfigError(
                f"--descriptions random needs {k} distinct expert descriptions besides the "
                f"true class's (each candidate shows another class's text, the true "
                f"class's text is never shown), but for class {key} the data has only {n}; "
                f"lower --k to at most {max(n, 1)}")


def _random_descriptions(index: DistractorIndex, chosen: list[str], target: HcsuImage,
                         seed: int) -> list[tuple[str, str]] | None:
    """Texts for the candidates ``chosen`` (class keys in label order) under ``random``:
    distinct, none of a candidate's own style, never the true class's (module doc).
    Seeded from (seed, target id); ``None`` when no assignment is found."""
    classes = index.dataset.classes
    pool = index.random_pool(classes[target.class_key])
    own = [index.style_texts[classes[key].style] for key in chosen]
    rng = rng_for(seed, target.id, "random-descriptions")
    for _ in range(1000):  # a draw is valid with probability about 1/e or more
        pick = rng.sample(pool, len(chosen))
        if all(text not in mine for (_, text), mine in zip(pick, own, strict=True)):
            return [(text, key) for key, text in pick]
    return None


def _shown_description(cls: StyleClass, config: DiscriminationConfig) -> tuple[str, str] | None:
    """``(text shown, class whose text it is)`` for candidate ``cls`` (expert or
    generated mode), or ``None``."""
    text = _text(cls, config)
    return (text, cls.key) if text else None


def build_question(dataset: HcsuDataset, target: HcsuImage,
                   config: DiscriminationConfig, index: DistractorIndex | None = None
                   ) -> PlannedItem:
    """Build the K-way question for ``target`` (call :func:`check_feasible` first).
    ``index``: the :class:`DistractorIndex` of ``dataset`` and ``config.pool``, shared by
    the questions of one build (built when ``None``)."""
    if target.load_error:
        return PlannedItem(target, None, target.load_error)
    index = index or DistractorIndex(dataset, config.pool)
    cls = dataset.classes[target.class_key]
    pool = index.pool_keys(cls)
    chosen = [cls.key, *rng_for(config.seed, target.id, "distractors").sample(pool,
                                                                                config.k - 1)]
    rng_for(config.seed, target.id, "order").shuffle(chosen)
    candidates: list[Candidate] = []
    notes: list[str] = []
    texts: list[tuple[str, str] | None]
    if config.descriptions == "random":
        drawn = _random_descriptions(index, chosen, target, config.seed)
        if drawn is None:
            return PlannedItem(target, None, "no valid assignment of random descriptions "
                                             f"for target {target.id}")
        texts = list(drawn)
    else:
        texts = [_shown_description(dataset.classes[key], config) for key in chosen]
    for label, key, shown in zip(LABELS, chosen, texts, strict=False):
        ref, same_char = _reference(dataset.classes[key], target, config.seed,
                                    config.avoid_target_char, index)
        if ref is None or ref.load_error:  # drawn from every image: draws never move
            return PlannedItem(target, None, f"the reference image drawn for class {key} "
                               f"cannot be used: {ref.load_error}" if ref else f"class {key} "
                               f"has no image other than the target {target.id} to use as "
                               "reference")
        if same_char:
            notes.append(f"reference of {key} shows the target's character {target.char}")
        if shown is None:
            return PlannedItem(target, None, f"no {config.descriptions} description available "
                                             f"for class {key}")
        candidates.append(Candidate(label, key, ref.path_text, shown[0], shown[1]))
    return PlannedItem(target, DiscriminationQuestion(
        sample_id=target.id, domain=target.domain, class_key=cls.key, char=target.char,
        target_image=target.path_text, candidates=tuple(candidates), notes=tuple(notes)))


def build_questions(dataset: HcsuDataset, targets: list[HcsuImage],
                    config: DiscriminationConfig) -> list[PlannedItem]:
    """Check feasibility, then build one :class:`PlannedItem` per target (input order);
    one :class:`DistractorIndex` serves them all."""
    index = DistractorIndex(dataset, config.pool)
    check_feasible(dataset, targets, config, index)
    return [build_question(dataset, t, config, index) for t in targets]
