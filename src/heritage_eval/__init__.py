"""heritage-eval: evaluate VLMs and OCR systems on cultural-heritage benchmarks.

Benchmarks: Ancient-Bench (ancient Chinese artifact transcription), HCSU (calligraphy
style understanding) and MUSE (artworks in situated education). Documentation: docs/index.md.

The Python API (``import heritage_eval as he``): :func:`evaluate`, :func:`score`,
:func:`load_run`, :func:`compare`, :func:`run_suite`, :func:`run_config` (the typed
:class:`RunConfig` of a run), :class:`Run` and :class:`OptionsError`, loaded on first
use so that ``import heritage_eval`` (and the command line's start-up) stays light: this
module imports nothing (not ``typing``, not ``__future__``). ``dir(he)`` lists exactly the
public API (:data:`__all__`).
"""

#: ``if TYPE_CHECKING:`` without importing ``typing`` (type checkers treat any constant
#: of this name as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from heritage_eval.api import (
        OptionsError,
        Run,
        RunConfig,
        compare,
        evaluate,
        load_run,
        run_config,
        score,
    )
    from heritage_eval.core.backends import ModelSpecError
    from heritage_eval.core.benchmark import UsageError
    from heritage_eval.core.rundir import RunFolderBusy, RunFolderConflict
    from heritage_eval.suite import run_suite

__version__ = "0.2.0"

#: Public name -> the module that defines it (imported on first access).
_LAZY = {"evaluate": "heritage_eval.api", "score": "heritage_eval.api",
         "load_run": "heritage_eval.api", "compare": "heritage_eval.api",
         "Run": "heritage_eval.api", "OptionsError": "heritage_eval.api",
         "RunConfig": "heritage_eval.api", "run_config": "heritage_eval.api",
         "UsageError": "heritage_eval.core.benchmark",
         "RunFolderConflict": "heritage_eval.core.rundir",
         "RunFolderBusy": "heritage_eval.core.rundir",
         "ModelSpecError": "heritage_eval.core.backends",
         "run_suite": "heritage_eval.suite"}
__all__ = ["ModelSpecError", "OptionsError", "Run", "RunConfig", "RunFolderBusy",
           "RunFolderConflict", "UsageError", "__version__", "compare", "evaluate",
           "load_run", "run_config", "run_suite", "score"]


def __getattr__(name: str) -> object:
    """The public name ``name``, imported from its module on first access; raises
    ``AttributeError`` for any other name."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'heritage_eval' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    """The public API (:data:`__all__`), for ``dir(he)`` and tab completion."""
    return sorted(__all__)
