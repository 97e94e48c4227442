"""Per-benchmark renderers of one sample's detail view (HTML fragments, built in Python).

A renderer module has ``render(record, ctx) -> str``: the benchmark-specific part of the
detail view (image with boxes, diff, candidates, options …). It reads ``record.details``
defensively: a key that is absent or of another shape is skipped, never an exception.
:func:`render_sample` wraps that part with what every benchmark shares (the head with
state and scores, every turn of the conversation, the raw details) and falls back to the
generic renderer, with a note, if a renderer still fails.

Renderers are chosen by ``record.benchmark`` (:data:`RENDERERS`); an unknown benchmark
gets :mod:`~heritage_eval.viewer.renderers.generic`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from heritage_eval.core.record import SampleRecord
from heritage_eval.viewer.images import ImageEntry, ImageStore

#: benchmark name -> renderer module (under this package)
RENDERERS = {"ancient-bench": "ancient_bench", "hcsu-discrimination": "hcsu",
             "hcsu-description": "hcsu", "muse": "muse"}

Render = Callable[[SampleRecord, "RenderContext"], str]


@dataclass
class RenderContext:
    """What a renderer may use: the site's image store (thumbnails, links) and the run's
    folder (relative paths without an ``image_root`` start there)."""

    store: ImageStore
    run_dir: str

    def resolve(self, record: SampleRecord, path: str) -> str:
        """Absolute path of an image path of ``record`` (relative to its ``image_root``,
        else to the run folder)."""
        if os.path.isabs(path):
            return path
        return os.path.join(record.image_root or self.run_dir, path)

    def image(self, record: SampleRecord, path: str, page: int = 0, *,
              width: int | None = None, height: int | None = None) -> ImageEntry:
        """The :class:`ImageEntry` of an image path of ``record``."""
        return self.store.entry(self.resolve(record, path), page, width=width, height=height)


def renderer_for(benchmark: str) -> ModuleType:
    """The renderer module of ``benchmark`` (the generic one when none is registered)."""
    name = RENDERERS.get(benchmark, "generic")
    return importlib.import_module(f"heritage_eval.viewer.renderers.{name}")


def render_sample(record: SampleRecord, ctx: RenderContext) -> str:
    """The full detail HTML of ``record``: head, the benchmark's part, conversation,
    raw details. A renderer that raises is replaced by the generic one, with a note."""
    from heritage_eval.viewer.renderers import generic

    module = renderer_for(record.benchmark)
    try:
        body = module.render(record, ctx)
    except Exception as exc:  # a renderer must never stop the site from building
        note = (f'<p class="problem">the {module.__name__.rsplit(".", 1)[-1]} renderer '
                f"failed on this record ({type(exc).__name__}: {exc}); generic view shown</p>")
        body = note + generic.render(record, ctx)
    return generic.wrap(record, body, ctx)
