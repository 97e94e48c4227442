"""The results viewer: a static HTML site of one or several run folders.

``build_site(run_dirs, out_dir) -> Path`` (of ``index.html``) writes a site that opens
from ``file://`` with no server and no network: the run headers (metrics with 95 %
intervals, groups, provenance, state counts, plots) as plain HTML, and a sample browser
(filters, sorting, search, per-benchmark detail views, "where models disagree") whose
data is loaded in pages. Images are referenced as files: thumbnails and zoom copies are
made once and cached, originals are linked (never base64). ``serve(out_dir, port)``
serves a built site on 127.0.0.1. CLI: ``heritage-eval view RUN... [--out DIR] [--serve]``.
"""

from __future__ import annotations

from heritage_eval.viewer.runs import ViewerError
from heritage_eval.viewer.site import SiteInfo, build, build_site

__all__ = ["SiteInfo", "ViewerError", "build", "build_site"]
