"""``heritage-eval stats BENCHMARK``: dataset statistics of a collection in a release layout.

The papers' data tables and figures, computed from any collection laid out as the
benchmark releases are:

- :mod:`.ancient_bench` — Ancient-Bench Table 2 / Fig. 2: images, character counts and
  image resolutions per medium;
- :mod:`.hcsu` — HCSU Fig. 3: images per class (calligrapher-script) and domain, scripts
  and dynasties per domain;
- :mod:`.muse` — MUSE Figs. 2–4: questions per task, scene themes, emotions, cultures,
  box sizes and people per image, from a Label Studio export and a question file.

Image sizes are read from file headers only (no pixel is decoded) and no image is kept in
memory. Shared pieces: :mod:`.summary` (min/median/max), :mod:`.output` (the ``--out``
folder: tables, ``stats.json``, ``stats.md``), :mod:`.figures` (matplotlib PNGs),
:mod:`.glossary` (English names of Chinese scripts and dynasties for figures drawn
without a CJK font). The commands are in :mod:`.cli`.
"""
