"""The benchmark's own options: ``heritage-eval run oracle-recognition --data DIR --k K``.

One declaration per option gives the command-line flag, the Python keyword
(``he.evaluate(..., data=..., k=...)``), the suite-file key, the default, the check and
the help line. The platform adds the model, generation, output and executor options.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from heritage_eval.plugin import BenchmarkOptions, NumberRange, opt

#: ``--k``: 1 to 10 candidates.
K_RANGE = NumberRange(integer=True, low=1, high=10)


class Options(BenchmarkOptions):
    """Options of ``run oracle-recognition`` (frozen; ``config.options`` in a run)."""

    data: Annotated[Path, opt(
        "folder holding glyphs.jsonl (one {id, image, answer, period} object per line) "
        "and the images it names, relative to the folder", metavar="DIR")]
    k: Annotated[int, opt(
        "candidates the model is asked for, most likely first; a glyph counts as "
        "recognised when the reference is among the first K (the metric is Acc@K)",
        rule=K_RANGE, metavar="K", group="scoring protocol")] = 1
