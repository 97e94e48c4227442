"""Declarations of the curator commands for the command registry (light: imports nothing heavy).

``stats BENCHMARK``, ``validate BENCHMARK``, ``export hf``, ``export tei``, ``ingest iiif``
and ``prompts dump``; each target is a :class:`~heritage_eval.benchmarks.registry.Command`
imported only when its command is chosen.
"""

from __future__ import annotations

from heritage_eval.benchmarks.registry import LazyCommand, register_group_command

PKG = "heritage_eval.curate"

STATS_HELP = "dataset statistics of a collection: the papers' data tables and figures"
VALIDATE_HELP = "check a collection before it becomes ground truth (file:line messages)"
INGEST_HELP = "bring images in from other sources (IIIF)"
PROMPTS_HELP = "the built-in prompts of every benchmark, to edit and read back"

#: (command, target attribute, name, article, what its statistics cover)
_BENCHMARKS = (
    ("ancient-bench", "ANCIENT_BENCH", "Ancient-Bench", "an",
     "per medium: images, characters, resolutions (Table 2, Fig. 2)"),
    ("hcsu", "HCSU", "HCSU", "an",
     "images per class and domain, scripts, dynasties (Fig. 3)"),
    ("muse", "MUSE", "MUSE", "a",
     "questions per task, scene themes, emotions, cultures, boxes (Figs. 2-4)"),
)
for _name, _attr, _what, _article, _covers in _BENCHMARKS:
    register_group_command("stats", STATS_HELP, LazyCommand(
        _name, f"{_what} statistics: {_covers}", f"{PKG}.stats.cli:{_attr}"))
    register_group_command("validate", VALIDATE_HELP, LazyCommand(
        _name, f"validate {_article} {_what} collection: errors and warnings with file:line",
        f"{PKG}.validate.cli:{_attr}"))

register_group_command("export", "export a run or a benchmark in other formats", LazyCommand(
    "hf", "a benchmark as Hugging Face parquet shards with an image column and a dataset card",
    f"{PKG}.hf.cli:EXPORT_HF"))
register_group_command("export", "export a run or a benchmark in other formats", LazyCommand(
    "tei", "Ancient-Bench transcriptions as TEI P5 documents, one per image",
    f"{PKG}.tei.cli:EXPORT_TEI"))
register_group_command("ingest", INGEST_HELP, LazyCommand(
    "iiif", "read a IIIF Presentation 3 manifest and fetch its images (size cap, regions)",
    f"{PKG}.iiif.cli:INGEST_IIIF"))
register_group_command("prompts", PROMPTS_HELP, LazyCommand(
    "dump", "write the built-in prompts of every benchmark to a file that --prompts reads",
    f"{PKG}.prompts_dump:DUMP"))
