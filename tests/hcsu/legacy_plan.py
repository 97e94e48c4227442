"""The HCSU loading and planning code as it was before the compact images and the lazy plan,
kept as the reference the new code must reproduce exactly (test_lazy_plan_equality.py).

Copied from ``loader.py``, ``discrimination.py`` and ``description.py`` before the change
(the whole-file ``json.loads``, a full :class:`HcsuRecord` per image, one distractor list
per class, every eligible shot image of every pool class listed per target), reduced to
what the comparisons call; messages and draws are unchanged. Helpers that did not change
(``_relative``, ``image_problem``, the description texts, the seeded generators) are
imported from the package.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from heritage_eval.benchmarks.hcsu.description import (
    DescriptionConfig,
    DescriptionRequest,
    PlannedRequest,
    Shot,
)
from heritage_eval.benchmarks.hcsu.discrimination import (
    LABELS,
    Candidate,
    DiscriminationConfig,
    DiscriminationQuestion,
    PlannedItem,
    _shown_description,
)
from heritage_eval.benchmarks.hcsu.loader import IMAGE_SUFFIXES, _relative, image_problem
from heritage_eval.benchmarks.hcsu.sampling import (
    HcsuConfigError,
    rng_for,
    same_character,
    simplified,
)
from heritage_eval.benchmarks.hcsu.schema import (
    DOMAIN_FOLDERS,
    Domain,
    HcsuDataset,
    HcsuImage,
    HcsuRecord,
    StyleClass,
)
from heritage_eval.core.paths import PathOutsideRoot, joined_inside
from heritage_eval.core.unicode_text import unusable_file_name


def _unlisted(folder: Path, listed: set[Path]) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if p.suffix.lower() in IMAGE_SUFFIXES and p.resolve() not in listed:
                out.append(str(p))
    return out


def load_domain(root: Path, domain: Domain, folder: Path, problems: list[str]
                ) -> list[HcsuImage]:
    """The old ``_load_domain`` (annotation file present and a readable JSON list)."""
    ann = root / f"{DOMAIN_FOLDERS[domain]}_annotations.json"
    records = json.loads(ann.read_text(encoding="utf-8-sig"))
    if not records:
        problems.append(f"{ann.name}: the annotation list is empty (no records): domain "
                        f"{domain} has no images")
    found: list[tuple[str, HcsuRecord, Path, str]] = []
    outside: dict[str, str] = {}
    seen: set[str] = set()
    prefix = f"{DOMAIN_FOLDERS[domain]}/"
    for index, raw in enumerate(records):
        where = f"{ann.name} record {index}"
        if not isinstance(raw, dict):
            problems.append(f"{where}: not a JSON object")
            continue
        try:
            rec = HcsuRecord.model_validate(raw)
        except ValidationError as exc:
            fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors())
            problems.append(f"{where}: invalid or missing field(s) {fields}")
            continue
        if (unusable := unusable_file_name(rec.filename)) is not None:
            problems.append(f"{where}: filename holds {unusable}: not a usable file name, "
                            "record skipped")
            continue
        rel = _relative(rec.filename, folder, prefix)
        if rel is None:
            problems.append(f"{where}: filename {rec.filename!r} leaves the {domain} folder "
                            f"{folder}: refused, record skipped")
            continue
        sample_id = f"{domain}/{PurePosixPath(rel).with_suffix('')}"
        if sample_id in seen:
            problems.append(f"{where}: duplicate filename {rec.filename!r} (first kept)")
            continue
        seen.add(sample_id)
        if not rec.char.strip():
            problems.append(f"{where}: empty 'char' for {rec.filename!r} (warning: the "
                            "anti-leakage rule cannot compare its character)")
        try:
            joined_inside([root, folder], rel, base=folder)
        except PathOutsideRoot as exc:
            outside[sample_id] = str(exc)
        found.append((sample_id, rec, (folder / rel).resolve(), where))
    with ThreadPoolExecutor(max_workers=8) as pool:
        checks = list(pool.map(lambda f: outside.get(f[0]) or image_problem(f[2]), found))
    images: list[HcsuImage] = []
    for (sample_id, rec, path, where), problem in zip(found, checks, strict=True):
        error = f"{problem}: {path} ({where})" if problem else None
        if error:
            problems.append(error)
        images.append(HcsuImage(id=sample_id, domain=domain, record=rec, path=path,
                                source=where, load_error=error))
    for path_text in _unlisted(folder, {path for _, _, path, _ in found}):
        problems.append(f"{path_text}: image on disk has no record in {ann.name} "
                        "(warning: not used)")
    return images


# --- discrimination (one distractor list per class, characters listed per class) ------

def _pool(dataset: HcsuDataset, cls: StyleClass, pool: str) -> list[StyleClass]:
    return [c for c in sorted(dataset.classes.values(), key=lambda c: c.key)
            if c.key != cls.key and c.style != cls.style and c.images
            and (pool == "all" or c.domain == cls.domain)]


def _reference(cls: StyleClass, target: HcsuImage, seed: int, avoid_char: bool
               ) -> tuple[HcsuImage | None, bool]:
    others = [i for i in cls.images if i.id != target.id]
    rng = rng_for(seed, target.id, "reference", cls.key)
    if not avoid_char:
        return (rng.choice(others), False) if others else (None, False)
    entries = [(i, i.char.strip(), simplified(i.char)) for i in cls.images]
    char, simple = target.char.strip(), simplified(target.char)
    different = [i for i, c, s in entries if i.id != target.id and c != char and s != simple]
    if different:
        return rng.choice(different), False
    return (rng.choice(others), True) if others else (None, False)


def _random_pool(dataset: HcsuDataset, true_class: StyleClass) -> list[tuple[str, str]]:
    banned = {c.description for c in dataset.classes.values() if c.style == true_class.style}
    texts: dict[str, str] = {}
    for c in sorted(dataset.classes.values(), key=lambda c: c.key):
        if c.description and c.description not in banned and c.description not in texts:
            texts[c.description] = c.key
    return [(key, text) for text, key in texts.items()]


def _random_descriptions(dataset: HcsuDataset, chosen: list[str], target: HcsuImage,
                         seed: int) -> list[tuple[str, str]] | None:
    pool = _random_pool(dataset, dataset.classes[target.class_key])
    own = [{c.description for c in dataset.classes.values()
            if c.style == dataset.classes[key].style} for key in chosen]
    rng = rng_for(seed, target.id, "random-descriptions")
    for _ in range(1000):
        pick = rng.sample(pool, len(chosen))
        if all(text not in mine for (_, text), mine in zip(pick, own, strict=True)):
            return [(text, key) for key, text in pick]
    return None


def build_question(dataset: HcsuDataset, target: HcsuImage, config: DiscriminationConfig
                   ) -> PlannedItem:
    """The old ``build_question`` (feasibility checked by the caller)."""
    if target.load_error:
        return PlannedItem(target, None, target.load_error)
    cls = dataset.classes[target.class_key]
    pool = [c.key for c in _pool(dataset, cls, config.pool)]
    chosen = [cls.key, *rng_for(config.seed, target.id, "distractors").sample(pool,
                                                                                config.k - 1)]
    rng_for(config.seed, target.id, "order").shuffle(chosen)
    candidates: list[Candidate] = []
    notes: list[str] = []
    texts: list[Any]
    if config.descriptions == "random":
        drawn = _random_descriptions(dataset, chosen, target, config.seed)
        if drawn is None:
            return PlannedItem(target, None, "no valid assignment of random descriptions "
                                             f"for target {target.id}")
        texts = list(drawn)
    else:
        texts = [_shown_description(dataset.classes[key], config) for key in chosen]
    for label, key, shown in zip(LABELS, chosen, texts, strict=False):
        ref, same_char = _reference(dataset.classes[key], target, config.seed,
                                    config.avoid_target_char)
        if ref is None:
            return PlannedItem(target, None, f"class {key} has no image other than the "
                                             f"target {target.id} to use as reference")
        if ref.load_error:  # issue-23 rule: drawn from every image, unusable -> error
            return PlannedItem(target, None, f"the reference image drawn for class {key} "
                                             f"cannot be used: {ref.load_error}")
        if same_char:
            notes.append(f"reference of {key} shows the target's character {target.char}")
        if shown is None:
            return PlannedItem(target, None, f"no {config.descriptions} description available "
                                             f"for class {key}")
        candidates.append(Candidate(label, key, str(ref.path), shown[0], shown[1]))
    return PlannedItem(target, DiscriminationQuestion(
        sample_id=target.id, domain=target.domain, class_key=cls.key, char=target.char,
        target_image=str(target.path), candidates=tuple(candidates), notes=tuple(notes)))


# --- description (every pool class's eligible images listed per target) ---------------

def choose_shots(dataset: HcsuDataset, target: HcsuImage, config: DescriptionConfig
                 ) -> tuple[Shot, ...]:
    """The old ``choose_shots`` (raises :class:`HcsuConfigError` as it did)."""
    cls = dataset.classes[target.class_key]
    classes = [c for c in sorted(dataset.classes.values(), key=lambda c: c.key)
               if c.key != cls.key and c.style != cls.style
               and c.description and c.description != cls.description and c.images
               and (config.pool == "all" or c.domain == cls.domain)]
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


def build_request(dataset: HcsuDataset, target: HcsuImage, config: DescriptionConfig
                  ) -> PlannedRequest:
    """The old per-target body of ``build_requests``."""
    if target.load_error:
        return PlannedRequest(target, None, target.load_error)
    cls = dataset.classes[target.class_key]
    shots = choose_shots(dataset, target, config)
    # issue-23 rule: shots are drawn from every image; a drawn unusable one -> error
    errors = {str(i.path): i.load_error for i in dataset.images if i.load_error}
    bad = [errors[s.image] for s in shots if s.image in errors]
    if bad:
        return PlannedRequest(target, None, f"a shot image drawn for {target.id} cannot "
                                            f"be used: {bad[0]}")
    return PlannedRequest(target, DescriptionRequest(
        sample_id=target.id, domain=target.domain, class_key=cls.key, char=target.char,
        target_image=str(target.path), shots=shots,
        reference=cls.description or "", max_words=config.max_words))
