"""Per-benchmark renderers of one sample's detail view (HTML fragments, built in Python).

A renderer is ``render(record, ctx) -> str``: the benchmark-specific part of the detail
view (image with boxes, diff, candidates, options …). It reads ``record.details``
defensively: a key that is absent or of another shape is skipped, never an exception.
:func:`render_sample` wraps that part with what every benchmark shares (the head with
state and scores, every turn of the conversation, the raw details) and falls back to the
generic renderer, with a note, if a renderer still fails.

Which renderer a record gets (:func:`renderer_for`, by ``record.benchmark``): a built-in
benchmark's module under this package (:data:`RENDERERS`); else the renderer a plug-in
declared (``BenchmarkPlugin(renderer="package.module:function")`` or a module with a
``render`` function, :func:`heritage_eval.core.plugins.renderer_target`); else
:mod:`~heritage_eval.viewer.renderers.generic`.

The contract of a plug-in renderer (docs/how-to/new-benchmark.md, "A viewer renderer"):
``render(record: SampleRecord, ctx: RenderContext) -> str`` returns an HTML fragment;
every text taken from the record goes through ``ctx.escape``; images are shown with
``ctx.figure(record, path, caption)`` (thumbnail, zoom, link to the original, a
placeholder when missing); ``ctx.generic(record)`` is the generic part (the scored
turn's images, answer beside reference) to build on. It needs no import from
``heritage_eval.viewer``. A renderer that raises on a record gets the generic view
with a note on that record; one that cannot be imported is reported once on stderr and
the generic view is used for the whole run.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable, Sequence
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
    folder (relative paths without an ``image_root`` start there), plus the helpers a
    plug-in renderer needs (:meth:`figure`, :meth:`escape`, :meth:`generic`)."""

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

    def figure(self, record: SampleRecord, path: str, caption: str = "", *, page: int = 0,
               large: bool = False,
               boxes: Sequence[tuple[Sequence[float], str, str]] = ()) -> str:
        """The HTML of image ``path`` of ``record`` (relative to its ``image_root``) as
        the site shows images: the thumbnail (the zoom copy with ``large``), ``caption``
        (escaped) with the size, a link to the original; a placeholder naming the path
        when the file is missing. ``boxes``: ``(box, label, css class)`` drawn over the
        image, each box COCO ``[x, y, w, h]`` normalised to 0–1 (the site's classes:
        ``correct`` for reference boxes, ``chosen`` for predicted ones, ``param``)."""
        from heritage_eval.viewer.html import figure

        return figure(self.image(record, path, page), caption, large=large, boxes=boxes)

    @staticmethod
    def escape(value: object) -> str:
        """``value`` as escaped HTML text (``None`` -> ``""``)."""
        from heritage_eval.viewer.html import esc

        return esc(value)

    def generic(self, record: SampleRecord) -> str:
        """The generic renderer's part for ``record``: the scored turn's images and the
        parsed answer beside the reference."""
        from heritage_eval.viewer.renderers import generic

        return generic.render(record, self)


@dataclass(frozen=True)
class PluginRenderer:
    """A plug-in's renderer function (``"module:function"``), used as a module is:
    ``.render(record, ctx)``; ``target`` names it in notes."""

    target: str
    render: Render


Renderer = ModuleType | PluginRenderer


def renderer_for(benchmark: str) -> Renderer:
    """The renderer of ``benchmark`` (see the module docstring for the order): a module
    with ``render``, or a :class:`PluginRenderer`."""
    name = RENDERERS.get(benchmark)
    if name is None:
        from heritage_eval.core import plugins

        target = plugins.renderer_target(benchmark)
        found = _plugin_renderer(target) if target else None
        if found is not None:
            return found
        name = "generic"
    return importlib.import_module(f"heritage_eval.viewer.renderers.{name}")


@functools.cache
def _plugin_renderer(target: str) -> Renderer | None:
    """The renderer a plug-in declared as ``target`` (``"module:function"`` or a module
    with ``render``), or ``None`` after a warning on stderr (once per target) when it
    cannot be imported or is not callable."""
    from heritage_eval.core import plugins

    try:
        obj = plugins.load_target(target)
    except Exception as exc:  # a broken plug-in must not stop the site from building
        print(f"warning: viewer renderer {target!r} cannot be imported "
              f"({type(exc).__name__}: {exc}); the generic view is used", file=sys.stderr)
        return None
    if isinstance(obj, ModuleType):
        if callable(getattr(obj, "render", None)):
            return obj
    elif callable(obj):
        return PluginRenderer(target, obj)
    print(f"warning: viewer renderer {target!r} is neither a function nor a module with "
          "render(record, ctx); the generic view is used", file=sys.stderr)
    return None


def _label(renderer: Renderer) -> str:
    if isinstance(renderer, PluginRenderer):
        return renderer.target
    return renderer.__name__.rsplit(".", 1)[-1]


def render_sample(record: SampleRecord, ctx: RenderContext) -> str:
    """The full detail HTML of ``record``: head, the benchmark's part, conversation,
    raw details. A renderer that raises is replaced by the generic one, with a note."""
    from heritage_eval.viewer.html import esc
    from heritage_eval.viewer.renderers import generic

    renderer = renderer_for(record.benchmark)
    try:
        body = renderer.render(record, ctx)
        if not isinstance(body, str):
            raise TypeError(f"render returned {type(body).__name__}, not str")
    except Exception as exc:  # a renderer must never stop the site from building
        note = (f'<p class="problem">the {esc(_label(renderer))} renderer failed on this '
                f"record ({esc(type(exc).__name__)}: {esc(exc)}); generic view shown</p>")
        body = note + generic.render(record, ctx)
    return generic.wrap(record, body, ctx)
