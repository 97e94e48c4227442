"""MUSE analyses: per-run summaries, multi-model tables, correlations and figures."""
