"""Benchmark plug-ins: one sub-package per benchmark (loader, prompts, scoring, cli)."""
