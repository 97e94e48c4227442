"""The public plug-in API: everything a benchmark package needs, and nothing else.

A plug-in imports only from this module (docs/how-to/new-benchmark.md walks through a
whole one). Declare the benchmark in its ``pyproject.toml``::

    [project.entry-points."heritage_eval.benchmarks"]
    my-benchmark = "my_package.benchmark:MyBenchmark"

and ``pip install`` it: ``heritage-eval run my-benchmark``, ``he.evaluate("my-benchmark",
…)``, the viewer, ``compare``, suites and exports then work with it. A command of its own
(e.g. ``heritage-eval export NAME``) is declared by a module in the entry-point group
``heritage_eval.commands`` that calls :func:`register_command` with a :class:`Command`.
The engine applies the platform's rules to every benchmark — model failures and
denominators, truncation, ``--limit`` and PARTIAL, intervals, redaction of secrets — so
a plug-in cannot forget them.

Compatibility promise: the names in ``__all__`` follow :data:`API_VERSION` (semantic
versioning). Within one major version a name is never removed and a method's
signature only gains optional parameters; a plug-in states the versions it supports
with :func:`require_api` (or a ``heritage-eval>=…,<…`` dependency).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from heritage_eval.benchmarks.registry import Command
    from heritage_eval.benchmarks.registry import register_group_command as register_command
    from heritage_eval.core.backends import BackendOptions, ModelBackend, register_backend
    from heritage_eval.core.benchmark import (
        Benchmark,
        LoadedData,
        MetricSpec,
        ModelRefused,
        RecordSink,
        RunContext,
        UsageError,
    )
    from heritage_eval.core.compact_ids import CompactIds
    from heritage_eval.core.config import BenchmarkOptions, RunConfig, build_run_config
    from heritage_eval.core.datapath import (
        NotARegularFile,
        confined,
        open_regular,
        read_regular_text,
    )
    from heritage_eval.core.engine import execute as run_benchmark
    from heritage_eval.core.lazy_samples import (
        DataChangedError,
        ReiterableSamples,
        file_identities,
    )
    from heritage_eval.core.option_checks import NumberRange
    from heritage_eval.core.option_spec import opt
    from heritage_eval.core.paths import PathOutsideRoot, path_text
    from heritage_eval.core.plugins import BenchmarkPlugin, DataFormatError, materialise
    from heritage_eval.core.record import (
        SAMPLE_SCHEMA,
        ImageRef,
        ResponseRecord,
        SampleRecord,
        TurnRecord,
        image_ref,
    )
    from heritage_eval.core.run_output import EvalOutput
    from heritage_eval.core.runner import ItemResult
    from heritage_eval.core.types import (
        Conversation,
        GenerationSettings,
        ImagePart,
        Message,
        Outcome,
        Response,
        TextPart,
    )

#: Public name -> (module, attribute): imported on first use, so that a plug-in's
#: declaration module (its entry point, loaded by every command) stays light.
_LAZY: dict[str, tuple[str, str]] = {
    "BackendOptions": ("heritage_eval.core.backends", "BackendOptions"),
    "Benchmark": ("heritage_eval.core.benchmark", "Benchmark"),
    "BenchmarkOptions": ("heritage_eval.core.config", "BenchmarkOptions"),
    "BenchmarkPlugin": ("heritage_eval.core.plugins", "BenchmarkPlugin"),
    "Command": ("heritage_eval.benchmarks.registry", "Command"),
    "CompactIds": ("heritage_eval.core.compact_ids", "CompactIds"),
    "Conversation": ("heritage_eval.core.types", "Conversation"),
    "DataChangedError": ("heritage_eval.core.lazy_samples", "DataChangedError"),
    "DataFormatError": ("heritage_eval.core.plugins", "DataFormatError"),
    "NotARegularFile": ("heritage_eval.core.datapath", "NotARegularFile"),
    "PathOutsideRoot": ("heritage_eval.core.paths", "PathOutsideRoot"),
    "EvalOutput": ("heritage_eval.core.run_output", "EvalOutput"),
    "GenerationSettings": ("heritage_eval.core.types", "GenerationSettings"),
    "ImagePart": ("heritage_eval.core.types", "ImagePart"),
    "ImageRef": ("heritage_eval.core.record", "ImageRef"),
    "ItemResult": ("heritage_eval.core.runner", "ItemResult"),
    "LoadedData": ("heritage_eval.core.benchmark", "LoadedData"),
    "Message": ("heritage_eval.core.types", "Message"),
    "MetricSpec": ("heritage_eval.core.benchmark", "MetricSpec"),
    "ModelBackend": ("heritage_eval.core.backends", "ModelBackend"),
    "ModelRefused": ("heritage_eval.core.benchmark", "ModelRefused"),
    "NumberRange": ("heritage_eval.core.option_checks", "NumberRange"),
    "Outcome": ("heritage_eval.core.types", "Outcome"),
    "RecordSink": ("heritage_eval.core.benchmark", "RecordSink"),
    "ReiterableSamples": ("heritage_eval.core.lazy_samples", "ReiterableSamples"),
    "Response": ("heritage_eval.core.types", "Response"),
    "ResponseRecord": ("heritage_eval.core.record", "ResponseRecord"),
    "RunConfig": ("heritage_eval.core.config", "RunConfig"),
    "RunContext": ("heritage_eval.core.benchmark", "RunContext"),
    "SAMPLE_SCHEMA": ("heritage_eval.core.record", "SAMPLE_SCHEMA"),
    "SampleRecord": ("heritage_eval.core.record", "SampleRecord"),
    "TextPart": ("heritage_eval.core.types", "TextPart"),
    "TurnRecord": ("heritage_eval.core.record", "TurnRecord"),
    "UsageError": ("heritage_eval.core.benchmark", "UsageError"),
    "build_run_config": ("heritage_eval.core.config", "build_run_config"),
    "confined": ("heritage_eval.core.datapath", "confined"),
    "file_identities": ("heritage_eval.core.lazy_samples", "file_identities"),
    "image_ref": ("heritage_eval.core.record", "image_ref"),
    "open_regular": ("heritage_eval.core.datapath", "open_regular"),
    "materialise": ("heritage_eval.core.plugins", "materialise"),
    "opt": ("heritage_eval.core.option_spec", "opt"),
    "path_text": ("heritage_eval.core.paths", "path_text"),
    "read_regular_text": ("heritage_eval.core.datapath", "read_regular_text"),
    "register_command": ("heritage_eval.benchmarks.registry", "register_group_command"),
    "register_backend": ("heritage_eval.core.backends", "register_backend"),
    "run_benchmark": ("heritage_eval.core.engine", "execute"),
}


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first access."""
    if name not in _LAZY:
        raise AttributeError(f"module 'heritage_eval.plugin' has no attribute {name!r}")
    from importlib import import_module

    module, attr = _LAZY[name]
    value = getattr(import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


#: The plug-in API's version (major.minor): see the module docstring.
API_VERSION = "1.2"


class IncompatiblePlugin(RuntimeError):
    """A plug-in needs a plug-in API version this heritage-eval does not offer."""


def require_api(major: int, minimum_minor: int = 0) -> None:
    """Raise :class:`IncompatiblePlugin` unless the API is ``major.x`` with
    ``x >= minimum_minor`` (call it at the top of a plug-in's module)."""
    have_major, have_minor = (int(p) for p in API_VERSION.split("."))
    if have_major != major or have_minor < minimum_minor:
        raise IncompatiblePlugin(f"this plug-in needs heritage-eval plug-in API "
                                 f"{major}.{minimum_minor}+; installed: {API_VERSION}")


__all__ = [
    "API_VERSION",
    "SAMPLE_SCHEMA",
    "BackendOptions",
    "Benchmark",
    "BenchmarkOptions",
    "BenchmarkPlugin",
    "Command",
    "CompactIds",
    "Conversation",
    "DataChangedError",
    "DataFormatError",
    "EvalOutput",
    "GenerationSettings",
    "ImagePart",
    "ImageRef",
    "IncompatiblePlugin",
    "ItemResult",
    "LoadedData",
    "Message",
    "MetricSpec",
    "ModelBackend",
    "ModelRefused",
    "NotARegularFile",
    "NumberRange",
    "Outcome",
    "PathOutsideRoot",
    "RecordSink",
    "ReiterableSamples",
    "Response",
    "ResponseRecord",
    "RunConfig",
    "RunContext",
    "SampleRecord",
    "TextPart",
    "TurnRecord",
    "UsageError",
    "build_run_config",
    "confined",
    "file_identities",
    "image_ref",
    "materialise",
    "open_regular",
    "opt",
    "path_text",
    "read_regular_text",
    "register_backend",
    "register_command",
    "require_api",
    "run_benchmark",
]
