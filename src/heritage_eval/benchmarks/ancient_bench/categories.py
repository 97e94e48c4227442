"""The nine Ancient-Bench media: release folder names, paper names, full-release sizes."""

from __future__ import annotations

import re

#: Release folder name -> the paper's short medium name, in the paper's table order.
MEDIA: dict[str, str] = {
    "oracle_bone_artifacts": "Oracle",
    "bronze_rubbings": "Bronze",
    "bamboo_wooden_slips": "Slip",
    "silk_manuscripts": "Silk",
    "seals": "Seal",
    "inscription_rubbings": "Stele",
    "cliff_carvings": "Cliff",
    "traditional_chinese_book_editions": "Edition",
    "calligraphys": "Calligraphy",
}

#: Images per medium in the full release (paper, section 4; 2,700 in all).
RELEASE_SIZES: dict[str, int] = {
    "oracle_bone_artifacts": 300, "bronze_rubbings": 250, "bamboo_wooden_slips": 300,
    "silk_manuscripts": 300, "seals": 350, "inscription_rubbings": 300,
    "cliff_carvings": 200, "traditional_chinese_book_editions": 300, "calligraphys": 400,
}


def medium_name(category: str) -> str:
    """Paper name of a release folder (``"seals"`` -> ``"Seal"``); unknown names unchanged."""
    return MEDIA.get(category, category)


def category_order(categories: list[str] | set[str]) -> list[str]:
    """Sort folder names in the paper's order; unknown folders follow, alphabetically."""
    known = [c for c in MEDIA if c in categories]
    return known + sorted(c for c in categories if c not in MEDIA)


def resolve_category(name: str) -> str:
    """Folder name for a folder or paper name, case-insensitive (``"stele"`` ->
    ``"inscription_rubbings"``); unknown names are returned unchanged."""
    low = name.strip().lower()
    for folder, paper in MEDIA.items():
        if low in (folder, paper.lower()):
            return folder
    return name.strip()


def read_categories(value: object) -> tuple[str, ...] | None:
    """``--categories`` as one selection: every value split on commas and white space,
    folder or paper names in any case resolved to folder names (:func:`resolve_category`;
    an unknown name kept as given, refused later by the loader naming it), each once, in
    the paper's order (:func:`category_order`). ``None`` stays ``None`` (every medium).
    Raises ``ValueError`` when no name is left (``""``, ``","``, ``[]``)."""
    if value is None:
        return None
    words = list(value) if isinstance(value, list | tuple | set) else [value]
    names = {resolve_category(p) for w in words for p in re.split(r"[,\s]+", str(w)) if p}
    if not names:
        raise ValueError("needs at least one medium (folder or paper name; several "
                         "separated with commas or spaces)")
    return tuple(category_order(names))


def both_names(folders: list[str]) -> list[str]:
    """``seals (Seal)`` for a medium's folder, the folder name alone for another."""
    return [f"{f} ({MEDIA[f]})" if f in MEDIA else f for f in folders]


def did_you_mean(refused: list[str], folders: list[str]) -> str:
    """`` (did you mean 'Seal'?)``: the closest of the ``folders`` found and their
    media's paper names to each refused name (difflib, cutoff 0.6, case-insensitive),
    or ``""`` when none is close."""
    import difflib

    names = [*folders, *(MEDIA[f] for f in folders if f in MEDIA)]
    lower = {n.lower(): n for n in names}
    near = list(dict.fromkeys(lower[m] for r in refused for m in difflib.get_close_matches(
        r.lower(), list(lower), n=1, cutoff=0.6)))
    return f" (did you mean {' or '.join(map(repr, near))}?)" if near else ""
