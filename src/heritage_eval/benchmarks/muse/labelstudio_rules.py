"""Two Label Studio import rules kept apart from the importer: which annotation of a task
is used, and the check of ``count_<name>`` items against the object boxes.

- Several annotations on one task (Label Studio keeps one per annotator): cancelled ones
  (``was_cancelled``) are ignored; among the rest one marked ``ground_truth`` wins, else
  the latest by ``updated_at`` (then ``created_at``, ISO strings, then position in the
  list). The importer warns, naming the ids and the one used.
- ``count_<name>`` should equal the number of ``object`` boxes labelled ``<name>``
  (case-insensitive), as the MUSE schema asks; a difference is a warning, not an error
  (the count is still used as the answer).
"""

from __future__ import annotations

from typing import Any


def choose_annotation(annotations: list[Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The annotation to import and, when several were not cancelled, a note
    ``"N annotations (ids); using ID (why, not cancelled)"``; ``(None, None)`` when every
    annotation was cancelled (or none is an object)."""
    live = [(i, a) for i, a in enumerate(annotations)
            if isinstance(a, dict) and not a.get("was_cancelled", False)]
    if not live:
        return None, None
    _, chosen = max(live, key=lambda p: (bool(p[1].get("ground_truth")),
                                         str(p[1].get("updated_at") or ""),
                                         str(p[1].get("created_at") or ""), p[0]))
    if len(live) == 1:
        return chosen, None
    ids = ", ".join(str(a.get("id", f"#{i}")) for i, a in live)
    why = "marked ground_truth" if chosen.get("ground_truth") else "latest"
    return chosen, (f"{len(live)} annotations ({ids}); using {chosen.get('id', '?')} "
                    f"({why}, not cancelled)")


def count_mismatches(counts: dict[str, int], box_labels: list[str]
                     ) -> list[tuple[str, int, int]]:
    """``(name, count, boxes)`` for every count that differs from the number of object
    box labels equal to ``name`` (case-insensitive), sorted by name."""
    folded = [label.casefold() for label in box_labels]
    out = []
    for name, n in sorted(counts.items()):
        k = folded.count(name.casefold())
        if k != n:
            out.append((name, n, k))
    return out
