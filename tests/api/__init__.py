"""Tests of the notebook-facing Python API (``import heritage_eval as he``)."""
