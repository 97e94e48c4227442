"""Plug-in discovery: benchmarks, model backends, data formats and commands are found
through Python entry points, so ``pip install my-benchmark`` is all it takes to add one
(docs/how-to/new-benchmark.md, docs/design.md "Plug-ins").

Entry-point groups (the built-ins register the same way, in ``pyproject.toml``):

``heritage_eval.benchmarks``
    ``NAME = "package.module:Attribute"``. The attribute is a
    :class:`~heritage_eval.core.benchmark.Benchmark` subclass (registered as benchmark
    ``NAME``), a :class:`BenchmarkPlugin` (a benchmark with extras: a scorer of
    predictions made elsewhere, a viewer renderer, baselines), or a module that
    registers itself when imported (the built-ins' light ``commands`` modules).
``heritage_eval.backends``
    ``PREFIX = "package.module"``: a module that calls
    :func:`~heritage_eval.core.backends.register_backend` when imported.
``heritage_eval.commands``
    modules that register command-line groups when imported (curator tools, the papers'
    artefacts).
``heritage_eval.data_formats``
    ``NAME = "package.module:function"``: ``function(root, benchmark) -> Path`` turns a
    folder in another layout (e.g. an ``export hf`` folder) into the benchmark's own
    layout, or returns ``root`` unchanged (:func:`materialise`).

Nothing here imports a layer above ``core``: entry points are loaded by name, so a
folder that registers itself is imported only when a command or the API needs it.
A plug-in that fails to import is reported once, naming its entry point and the error,
and the others still load.

Two levels of loading: :func:`load_declarations` (benchmarks, scorers, renderers and
commands: the groups ``heritage_eval.benchmarks`` and ``heritage_eval.commands``) is what
the look-ups here and the command line's parser need; :func:`load_all` adds the model
backends (group ``heritage_eval.backends`` and the modules a :class:`BenchmarkPlugin`
names in ``backends``), which :mod:`heritage_eval.core.backends` loads before creating
or listing one. Neither imports ``importlib.metadata`` before it is needed, nor a
:class:`BenchmarkPlugin`'s benchmark class.
"""

from __future__ import annotations

import functools
import importlib
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib import metadata

GROUP_BENCHMARKS = "heritage_eval.benchmarks"
GROUP_BACKENDS = "heritage_eval.backends"
GROUP_COMMANDS = "heritage_eval.commands"
GROUP_DATA_FORMATS = "heritage_eval.data_formats"


@dataclass(frozen=True)
class BenchmarkPlugin:
    """A benchmark and what comes with it, as declared by a plug-in's entry point.

    ``benchmark``: the :class:`~heritage_eval.core.benchmark.Benchmark` subclass, or
    ``"module:Class"`` (imported when the benchmark is used, so listing stays fast).
    ``help``: one line for ``heritage-eval list`` and ``run --help`` (default: the
    class's ``help``). ``scorer``: ``"module:function"`` scoring predictions made
    elsewhere (``function(config_like) -> EvalOutput``), or ``None``. ``renderer``:
    ``"module:function"`` of a viewer renderer for this benchmark's records (see
    :mod:`heritage_eval.viewer.renderers`), or ``None`` for the generic one.
    ``backends``: modules registering benchmark-specific baselines (imported with the
    benchmark). ``score_options``: ``"module:Class"`` of the typed options of
    ``heritage-eval score NAME`` (a ``BenchmarkOptions`` subclass); with it the command
    line and ``he.score`` build a :class:`~heritage_eval.core.config.RunConfig` whose
    ``options`` are those, and call ``scorer(config) -> EvalOutput``. ``score_help``: the
    help line of ``score NAME``.
    """

    benchmark: type | str
    help: str = ""
    scorer: str | None = None
    renderer: str | None = None
    backends: tuple[str, ...] = ()
    score_options: str | None = None
    score_help: str = ""


@dataclass
class _Registry:
    benchmarks: dict[str, str | type] = field(default_factory=dict)
    helps: dict[str, str] = field(default_factory=dict)
    scorers: dict[str, str] = field(default_factory=dict)
    score_options: dict[str, tuple[str, str]] = field(default_factory=dict)
    renderers: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    #: (entry-point name, module) of plug-ins' baseline modules, imported by load_all
    pending_backends: list[tuple[str, str]] = field(default_factory=list)
    declared: bool = False
    loaded: bool = False
    loading: bool = False


_STATE = _Registry()
_LOCK = threading.RLock()


class DataFormatError(ValueError):
    """A folder in another layout that a data format cannot read back (damaged export,
    another benchmark's, another version); the message names the file. Format readers
    raise a subclass (e.g. ``HfReadError``)."""


class PluginError(Exception):
    """A plug-in declaration that cannot be used (two benchmarks of one name, an entry
    point that is neither a Benchmark subclass, a BenchmarkPlugin nor a module)."""


def load_target(target: str) -> Any:
    """Import ``"package.module:attribute"`` (or ``"package.module"``) and return it."""
    module, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def register_benchmark(name: str, help_text: str, target: str | type) -> None:
    """Declare benchmark ``name``: its ``Benchmark`` subclass or ``"module:Class"``.

    Raises :class:`PluginError` when ``name`` is already declared by another target."""
    with _LOCK:
        known = _STATE.benchmarks.get(name)
        if known is not None and known != target:
            raise PluginError(f"benchmark {name!r} registered twice ({known} and {target})")
        _STATE.benchmarks[name] = target
        _STATE.helps[name] = help_text


def unregister_benchmark(name: str) -> None:
    """Forget benchmark ``name`` (and its scorer and renderer); for tests and notebooks
    that register a benchmark for a while."""
    with _LOCK:
        for table in (_STATE.benchmarks, _STATE.helps, _STATE.scorers, _STATE.renderers,
                      _STATE.score_options):
            table.pop(name, None)


def register_scorer(name: str, target: str) -> None:
    """Declare the ``"module:function"`` that scores predictions made elsewhere for
    benchmark ``name`` (``heritage-eval score NAME``, ``he.score(NAME, …)``)."""
    _STATE.scorers[name] = target


def register_renderer(name: str, target: str) -> None:
    """Declare the viewer renderer (``"module:function"``) of benchmark ``name``."""
    _STATE.renderers[name] = target


#: The distribution whose entry points are the built-ins: they load first, so a plug-in
#: that declares a built-in's name is refused (a warning), never a silent replacement.
BUILTIN_DISTRIBUTION = "heritage-eval"


def _is_builtin(ep: metadata.EntryPoint) -> bool:
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", None) or getattr(dist, "metadata", {}).get("Name", "")
    return str(name).lower().replace("_", "-") == BUILTIN_DISTRIBUTION


def _entry_points(group: str) -> list[metadata.EntryPoint]:
    """The group's entry points: the built-ins first, then by name (deterministic)."""
    from importlib import metadata  # 10-30 ms: only when plug-ins are looked up

    return sorted(metadata.entry_points(group=group),
                  key=lambda ep: (not _is_builtin(ep), ep.name, ep.value))


def _warn(problem: str) -> None:
    if problem not in _STATE.problems:
        _STATE.problems.append(problem)
        print(f"warning: {problem}", file=sys.stderr)


def _register_loaded(name: str, obj: Any, value: str) -> None:
    if isinstance(obj, ModuleType):
        return  # a module that registered itself on import
    if isinstance(obj, BenchmarkPlugin):
        bench = obj.benchmark
        help_text = obj.help or (getattr(bench, "help", "") if isinstance(bench, type) else "")
        register_benchmark(name, help_text, bench)
        if obj.scorer:
            register_scorer(name, obj.scorer)
        if obj.scorer and obj.score_options:
            _STATE.score_options[name] = (obj.score_options, obj.score_help or obj.help)
        if obj.renderer:
            register_renderer(name, obj.renderer)
        # imported with the model backends (load_all), not by a declaration's look-up
        _STATE.pending_backends.extend((name, module) for module in obj.backends)
        return
    from heritage_eval.core.benchmark import Benchmark  # heavy: only for a bare class

    if isinstance(obj, type) and issubclass(obj, Benchmark):
        register_benchmark(name, obj.help, obj)
        return
    raise PluginError(f"entry point {name} = {value!r} (group {GROUP_BENCHMARKS}) is "
                      "neither a Benchmark subclass, a BenchmarkPlugin nor a module")


def load_group(group: str) -> None:
    """Load every entry point of ``group``; one that fails is reported (a warning naming
    it and the error) and skipped."""
    for ep in _entry_points(group):
        try:
            obj = ep.load()
            if group == GROUP_BENCHMARKS:
                _register_loaded(ep.name, obj, ep.value)
        except PluginError as exc:
            _warn(str(exc))
        except Exception as exc:  # a broken plug-in must not take the others down
            _warn(f"plug-in {ep.name!r} ({ep.value}, group {group}) failed to load: "
                  f"{type(exc).__name__}: {exc}")


def load_declarations() -> None:
    """Load what every plug-in declares (once; thread-safe; re-entrant from a module
    being loaded): its benchmarks, scorers, renderers and commands (entry-point groups
    ``heritage_eval.benchmarks`` and ``heritage_eval.commands``), without importing the
    model backends; what the command line needs to build its parser. :func:`load_all`
    loads the backends too."""
    if _STATE.declared:
        return
    with _LOCK:
        if _STATE.declared or _STATE.loading:
            return
        _STATE.loading = True
        try:
            _declare()
        finally:
            _STATE.loading = False


def _declare() -> None:
    if _STATE.declared:
        return
    for group in (GROUP_BENCHMARKS, GROUP_COMMANDS):
        load_group(group)
    if not _STATE.benchmarks:
        _warn("no benchmark found: heritage-eval's entry points are missing "
              "(install the package, e.g. pip install -e .)")
    _STATE.declared = True


def _import_pending_backends() -> None:
    """Import the baseline modules that benchmark plug-ins named (``backends``); one
    that fails is reported like a plug-in that fails to load."""
    while _STATE.pending_backends:
        name, module = _STATE.pending_backends.pop(0)
        try:
            importlib.import_module(module)
        except Exception as exc:  # a broken plug-in must not take the others down
            _warn(f"plug-in {name!r} ({module}, group {GROUP_BENCHMARKS}) failed to load: "
                  f"{type(exc).__name__}: {exc}")


def load_all() -> None:
    """Load the benchmarks, backends and command groups of every installed plug-in (once;
    thread-safe; re-entrant from a module being loaded). The built-in and plug-in model
    backends (group ``heritage_eval.backends``) load before the declarations when
    nothing was loaded yet, then the benchmark plug-ins' own baseline modules."""
    if _STATE.loaded:
        return
    with _LOCK:
        if _STATE.loaded or _STATE.loading:
            return
        _STATE.loading = True
        try:
            load_group(GROUP_BACKENDS)
            _declare()
            _import_pending_backends()
            _STATE.loaded = True
        finally:
            _STATE.loading = False


def benchmark_names() -> list[str]:
    """Every registered benchmark name, sorted."""
    load_declarations()
    return sorted(_STATE.benchmarks)


def benchmark_help(name: str) -> str:
    """The help line of benchmark ``name`` ("" when unknown)."""
    load_declarations()
    return _STATE.helps.get(name, "")


def benchmark_class(name: str) -> type:
    """The ``Benchmark`` subclass of ``name``. Raises ``KeyError`` listing the known
    names (with the closest one), :class:`PluginError` when the declared target cannot be
    imported, is no ``Benchmark`` subclass, carries another ``name``, or has an option
    named like a platform option (``limit``, ``model`` …)."""
    import difflib

    load_declarations()
    target = _STATE.benchmarks.get(name)
    if target is None:
        known = sorted(_STATE.benchmarks)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise KeyError(f"unknown benchmark {name!r} (known: {', '.join(known) or 'none'})"
                       f"{hint}")
    try:
        cls = load_target(target) if isinstance(target, str) else target
    except Exception as exc:  # a plug-in's lazy target: one message, never a traceback
        raise PluginError(f"benchmark {name!r}: {target} failed to load: "
                          f"{type(exc).__name__}: {exc}") from exc
    from heritage_eval.core.benchmark import Benchmark
    from heritage_eval.core.config import SECTIONS

    if not (isinstance(cls, type) and issubclass(cls, Benchmark)):
        raise PluginError(f"benchmark {name!r}: {target} is not a Benchmark subclass")
    if getattr(cls, "name", None) != name:
        raise PluginError(f"benchmark {name!r}: its class says name = "
                          f"{getattr(cls, 'name', None)!r}; the entry-point name and the "
                          "class's name must be the same")
    reserved = sorted(set(cls.Options.model_fields) & {
        k for model in SECTIONS.values() for k in model.model_fields})
    if reserved:
        raise PluginError(f"benchmark {name!r}: option(s) {', '.join(reserved)} of "
                          f"{cls.Options.__name__} are the platform's own (every run has "
                          "them); rename them")
    return cls


def benchmark(name: str) -> Any:
    """A new instance of the registered benchmark ``name`` (see :func:`benchmark_class`)."""
    return benchmark_class(name)()


def scorer(name: str) -> Callable[..., Any] | None:
    """The scorer of predictions made elsewhere for ``name``, or ``None``."""
    load_declarations()
    target = _STATE.scorers.get(name)
    return load_target(target) if target else None


def scorer_names() -> list[str]:
    """Benchmarks with a scorer of predictions made elsewhere."""
    load_declarations()
    return sorted(_STATE.scorers)


def typed_scorers() -> dict[str, tuple[str, str]]:
    """Benchmark name -> (``"module:Class"`` of its score options, help line) for the
    plug-ins whose ``score NAME`` is built from typed options."""
    load_declarations()
    return dict(_STATE.score_options)


def renderer_target(name: str) -> str | None:
    """The ``"module:function"`` of the viewer renderer declared for ``name``, or
    ``None``."""
    load_declarations()
    return _STATE.renderers.get(name)


def materialise(root: Path, benchmark_name: str) -> Path:
    """``root`` in ``benchmark_name``'s own layout: every installed data format
    (group ``heritage_eval.data_formats``) is asked in turn; the first that returns
    another path wins; ``root`` itself when none applies. Errors of a format reader
    (e.g. a damaged export) propagate: they name the file."""
    for reader in _readers():
        result = Path(reader(root, benchmark_name))
        if result != Path(root):
            return result
    return Path(root)


@functools.lru_cache(maxsize=1)
def _readers() -> tuple[Callable[[Path, str], Any], ...]:
    return tuple(ep.load() for ep in _entry_points(GROUP_DATA_FORMATS))


def problems() -> list[str]:
    """The plug-in problems reported so far (each also printed once as a warning)."""
    return list(_STATE.problems)
