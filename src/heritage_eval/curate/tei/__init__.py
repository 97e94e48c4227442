"""Ancient-Bench transcriptions as TEI P5 (``export tei``).

- :mod:`.markup`: the ground-truth string <-> TEI text mapping (both ways);
- :mod:`.document`: one TEI document per image (header, facsimile, text), well-formed
  by construction with lxml and checked by re-parsing;
- :mod:`.cli`: the ``heritage-eval export tei`` command.
"""
