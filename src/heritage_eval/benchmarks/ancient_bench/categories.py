"""The nine Ancient-Bench media: release folder names, paper names, full-release sizes."""

from __future__ import annotations

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
