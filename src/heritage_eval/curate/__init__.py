"""Curator tools: dataset statistics, validators, exports (Hugging Face, TEI) and IIIF ingest.

Each tool's command is declared in :mod:`heritage_eval.curate.commands` (light) and its
code is imported only when the command is chosen.
"""
