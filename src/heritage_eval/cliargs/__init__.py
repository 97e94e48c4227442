"""Command-line building blocks above the core: option types, list options and the
generator that turns a typed configuration (:mod:`heritage_eval.core.config`, a
benchmark's ``Options``) into argparse options. Benchmarks' own commands, the curator
tools and the ``heritage-eval`` command line build their parsers from here; ``core``
never imports argparse."""
