"""MUSE commands: importing this module registers ``muse generate`` (:mod:`.cli_generate`),
``run muse`` and ``muse analyze`` (:mod:`.cli_eval`)."""

from heritage_eval.benchmarks.muse import cli_eval, cli_generate

__all__ = ["cli_eval", "cli_generate"]
