"""Metrics shared by every benchmark.

``text`` (edit distance, NED score, character F1) and ``classification`` are pure
functions; ``embeddings``, ``bertscore`` and ``judge`` wrap a model (an offline package
model or an OpenAI-compatible endpoint) and report failures as ``unscored``.
"""
