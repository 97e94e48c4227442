"""Tables and figures of ``stats muse`` (from a :class:`~.muse.MuseStats`)."""

from __future__ import annotations

from pathlib import Path

from heritage_eval.benchmarks.muse.annotation import PERSON_CATEGORIES
from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS, TASKS
from heritage_eval.core.tables import Cell, Column, Table
from heritage_eval.curate.stats.muse import BOX_KINDS, MuseStats, emotion_counts
from heritage_eval.curate.stats.summary import counts, summarize

Row = dict[str, Cell | float | str | None]


def region_table(s: MuseStats) -> Table:
    """One row per box kind: boxes, images with one, boxes per image (min / median /
    max) and box area as a percentage of the image (min / median / max)."""
    cols = [Column("kind", "Box kind", kind="text"), Column("n", "Boxes", decimals=0),
            Column("imgs", "Images with one", decimals=0)]
    cols += [Column(f"per_{p}", p, decimals=1, group="Per image") for p in ("min", "median", "max")]
    cols += [Column(f"area_{p}", p, decimals=2, scale=100, group="Area (% of image)")
             for p in ("min", "median", "max")]
    rows: list[Row] = []
    for kind in BOX_KINDS:
        per, area = summarize(s.per_image[kind]), summarize(s.areas[kind])
        rows.append({"kind": kind, "n": len(s.areas[kind]),
                     "imgs": sum(1 for n in s.per_image[kind] if n),
                     "per_min": per.minimum, "per_median": per.median, "per_max": per.maximum,
                     "area_min": area.minimum, "area_median": area.median,
                     "area_max": area.maximum})
    return Table(cols, rows, title=f"MUSE: annotated regions ({s.images} images)",
                 footnotes=["character = person box. Area: COCO w x h of the normalized box."])


def _count_table(title: str, label: str, what: str, values: dict[str, int]) -> Table:
    cols = [Column("k", label, kind="text"), Column("n", what, decimals=0)]
    return Table(cols, [{"k": k, "n": v} for k, v in values.items()], title=title)


def label_tables(s: MuseStats) -> dict[str, Table]:
    """``emotions``, ``people``, ``scene_themes``, ``scenes``, ``cultures`` (and
    ``culture_clusters`` when the question file names them): label and count."""
    people = {str(k): v for k, v in sorted(counts(str(n) for n in s.people).items(),
                                           key=lambda kv: int(kv[0]))}
    out = {
        "emotions": _count_table("MUSE: emotions of the annotated people", "Emotion",
                                 "People", emotion_counts(s)),
        "people": _count_table("MUSE: people per image", "People in the image", "Images",
                               people),
        "scene_themes": _count_table("MUSE: scene themes", "Theme", "Images",
                                     counts(s.themes.elements())),
        "scenes": _count_table("MUSE: scene labels", "Scene", "Images",
                               counts(s.scenes.elements())),
        "cultures": _count_table("MUSE: cultural-element labels", "Culture", "Boxes",
                                 counts(s.cultures.elements())),
    }
    if s.culture_clusters:
        out["culture_clusters"] = _count_table("MUSE: culture clusters (question file)",
                                               "Cluster", "Boxes",
                                               counts(s.culture_clusters.elements()))
    return out


def question_table(s: MuseStats) -> Table | None:
    """Questions and turns per task in the paper's order (``None`` without a question
    file). A 4-turn affective dialogue counts once under each task it holds."""
    q = s.questions
    if q is None:
        return None
    order = [t for t in TASK_IDS if t in q.turns] + sorted(set(q.turns) - set(TASK_IDS))
    cols = [Column("no", "No.", decimals=0), Column("task", "Task", kind="text"),
            Column("n", "Questions", decimals=0), Column("turns", "Turns", decimals=0)]
    rows: list[Row] = [{"no": TASKS[t].number if t in TASKS else None,
                        "task": TASKS[t].name if t in TASKS else t,
                        "n": q.questions[t], "turns": q.turns[t]} for t in order]
    rows.append({"task": "All", "n": q.total, "turns": sum(q.turns.values())})
    return Table(cols, rows, title=f"MUSE: questions per task ({len(q.images)} images)")


def write_figures(s: MuseStats, out: Path) -> list[str]:
    """PNGs: scene themes (Fig. 3), emotions and cultures (Fig. 4), people per image and
    person categories, box sizes per kind (log scale), questions per task (Fig. 2, with
    a question file)."""
    from heritage_eval.curate.stats import figures

    figures.setup_fonts()
    written = ["fig_scene_themes.png", "fig_emotions_cultures.png", "fig_people.png",
               "fig_box_sizes.png"]
    figures.bar_panels(out / written[0], "MUSE: scene themes", [
        ("themes", counts(s.themes.elements()), "images"),
        ("scene labels", counts(s.scenes.elements()), "images")])
    cultures = counts(s.culture_clusters.elements()) or counts(s.cultures.elements())
    figures.bar_panels(out / written[1], "MUSE: emotions and cultures", [
        ("emotions", emotion_counts(s), "people"),
        ("culture clusters" if s.culture_clusters else "culture labels", cultures, "boxes")],
        keep_order=True)
    people = {str(k): sum(1 for n in s.people if n == k)
              for k in range(max(s.people, default=0) + 1)}
    figures.bar_panels(out / written[2], "MUSE: people", [
        ("people per image", people, "images"),
        ("person categories", {c: s.categories.get(c, 0) for c in PERSON_CATEGORIES},
         "people")],
        keep_order=True)
    figures.histogram_grid(out / written[3], "MUSE: box size (fraction of the image area)",
                           {k: s.areas[k] for k in BOX_KINDS}, "box area / image area",
                           log_x=True, bins=12, ylabel="boxes")
    if s.questions is not None:
        q = s.questions
        order = [t for t in TASK_IDS if t in q.questions]
        figures.bar_panels(out / "fig_questions_per_task.png", "MUSE: questions per task", [
            ("questions", {TASKS[t].name: q.questions[t] for t in order}, "questions")],
            keep_order=True)
        written.append("fig_questions_per_task.png")
    return written
