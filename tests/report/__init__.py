"""Tests of the result tables (heritage_eval.report)."""
