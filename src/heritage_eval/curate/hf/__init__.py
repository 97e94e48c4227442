"""Hugging Face export of a benchmark (``export hf``) and its read-back.

- :mod:`.features`: column kinds, their Arrow types and the ``datasets`` feature encoding;
- :mod:`.write`: streamed, sharded parquet writing (row groups as they fill);
- :mod:`.card`: the dataset card (``README.md``: YAML front matter and statistics);
- :mod:`.ancient_bench`, :mod:`.hcsu`, :mod:`.muse`: each benchmark's rows, both ways
  (release layout -> rows, rows -> release layout);
- :mod:`.export`: one export from source to finished folder (atomic);
- :mod:`.read`: recognise an exported folder given as ``--data`` / ``--questions`` and
  materialise it in the release layout (content-hash keyed cache);
- :mod:`.cli`: the ``heritage-eval export hf`` command.
"""
