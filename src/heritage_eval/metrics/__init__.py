"""Metrics shared by every benchmark.

``text`` (edit distance, NED score, character F1) and ``classification`` are pure
functions; ``embeddings``, ``bertscore`` and ``judge`` wrap a model (an offline package
model or an OpenAI-compatible endpoint) and report failures as ``unscored``. ``flags``
holds :class:`~heritage_eval.metrics.flags.MetricValue` (a value, or ``None`` with a
reason) and the flag names a metric raises when it truncates, skips or clips. Edge rules:
docs/metrics.md.
"""
