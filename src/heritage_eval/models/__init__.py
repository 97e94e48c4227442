"""Model backends: the interface and registry in :mod:`.base`; each backend module
registers itself with :func:`~heritage_eval.models.base.register_backend` when it is
imported (:data:`~heritage_eval.models.base.BUILTIN_MODULES`, loaded on first use, so
that importing this package stays light).

Benchmark-specific baselines (``baseline:image-similarity``, ``baseline:jigsaw-edges`` …)
live in their benchmark package and register when the benchmarks are loaded.
"""
