"""IIIF ingestion: read a IIIF Presentation 3 manifest and fetch its images through the
IIIF Image API (size cap, region crops, resume), keeping rights and attribution.

Modules: :mod:`.manifest` (manifest JSON -> canvases), :mod:`.imageapi` (``info.json`` ->
size parameter, image URLs), :mod:`.regions` (the ``--regions`` file), :mod:`.http`
(requests with retries), :mod:`.ingest` (the run, its outputs), :mod:`.cli` (the command).
"""
