"""The MUSE schema's Label Studio names (``from_name`` values) and the JSON-MIN check.

Shared by the importer (:mod:`.labelstudio`) and the validator
(:mod:`heritage_eval.curate.validate.muse`); the labelling configuration that declares
these names is ``data/labelstudio_config.xml``.
"""

from __future__ import annotations

from typing import Any

#: ``from_name`` of each kind of box (RectangleLabels).
BOX_KINDS = ("character", "activity", "object", "culture")
#: per-region attribute ``from_name`` -> the box kind it belongs to
REGION_ATTRIBUTES = {
    "emotion": "character", "visual_clues": "character", "emotion_cause": "character",
    "activity_description": "activity", "negative_description": "activity",
}
#: whole-image ``from_name`` values
IMAGE_LEVEL = ("scene", "relative_position", "remote_interaction")
#: prefix of the per-object count ``from_name`` values (``count_<object>``)
COUNT_PREFIX = "count_"


def json_min_reason(tasks: list[Any]) -> str | None:
    """Why ``tasks`` is a Label Studio **JSON-MIN** export (flat objects with the
    from_names as keys, no ``annotations[].result[]``), else ``None``."""
    flat = [t for t in tasks if isinstance(t, dict)]
    keys = {k for t in flat for k in t}
    if not flat or keys & {"annotations", "completions", "data"}:
        return None
    names = sorted(k for k in keys if k in (*BOX_KINDS, *REGION_ATTRIBUTES, *IMAGE_LEVEL,
                                            "annotation_id") or k.startswith(COUNT_PREFIX))
    return None if not names else (
        f"this is a Label Studio JSON-MIN export (one flat object per task with keys such "
        f"as {', '.join(names[:4])}; no annotations[].result[] list). JSON-MIN drops the "
        "region ids, so per-box attributes (emotion, visual_clues, activity_description, "
        "...) cannot be linked back to their boxes. Export the project again with "
        "Export -> 'JSON' (not 'JSON-MIN')")
