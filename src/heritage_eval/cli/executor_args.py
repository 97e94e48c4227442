"""``--executor {local,ray}``, ``--ray-address``, ``--ray-workers``: where a run executes.

:func:`add_executor_args` adds the options to a ``run`` command; :func:`executor_from_args`
turns them into the executor handed to :func:`heritage_eval.core.runner.run_items`
(``None`` for the default local executor). None of this imports Ray: that happens when a
Ray run starts.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heritage_eval.cli.option_types import int_option
from heritage_eval.core.option_checks import RAY_WORKERS

if TYPE_CHECKING:
    from heritage_eval.core.executors import Executor
    from heritage_eval.models.base import ModelBackend

#: The options added here: they change where a run executes, never what it computes
#: (leave them out of the run's configuration fingerprint, so a run resumes across them).
EXECUTOR_OPTIONS = frozenset({"executor", "ray_address", "ray_workers"})


def add_executor_args(p: argparse.ArgumentParser) -> None:
    """Add the ``execution`` option group to ``p``."""
    g = p.add_argument_group("execution")
    g.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="where requests run: 'local' (this process, asyncio; default) or "
                        "'ray' (backend replicas on a Ray cluster; needs the [ray] extra). "
                        "Only this process writes the cache, so a run resumes under either")
    g.add_argument("--ray-address", default=None, metavar="ADDR",
                   help="Ray cluster to join: 'auto' (started here with `ray start`), "
                        "HOST:6379 or ray://HOST:10001 (default: start a local cluster for "
                        "this run)")
    g.add_argument("--ray-workers", type=int_option(RAY_WORKERS, "ray_workers"), default=None,
                   metavar="N",
                   help="backend replicas (Ray actors) (default: one per GPU for hf: models "
                        "on a GPU cluster, else 2); --concurrency applies to each")


def _make_backend(values: dict[str, Any]) -> ModelBackend:
    """Make the backend from saved ``--model`` options (runs inside each Ray worker)."""
    from heritage_eval.cli.common import backend_from_args

    return backend_from_args(argparse.Namespace(**values))


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, str | int | float | bool | Path):
        return True
    if isinstance(value, list | tuple):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def executor_from_args(args: argparse.Namespace) -> Executor | None:
    """The executor named by ``--executor`` (``None``: the default local one).

    For ``ray`` the backend factory re-runs the usual ``--model`` option handling inside
    each worker from the plain values of ``args``. Raises ``ExecutorError`` when Ray is
    requested but not installed, or ``--ray-address`` does not answer within a few seconds
    (before anything is written or sent).
    """
    name = getattr(args, "executor", "local") or "local"
    if name == "local":
        return None
    from heritage_eval.core.executors import ExecutorError

    if name != "ray":
        raise ExecutorError(f"unknown executor {name!r} (use local or ray)")
    if importlib.util.find_spec("ray") is None:
        raise ExecutorError("--executor ray needs Ray: pip install 'heritage-eval[ray]' "
                            "(or pip install ray)")
    from heritage_eval.core.executors.ray_executor import RayExecutor, RayOptions

    values = {k: v for k, v in vars(args).items() if _plain(v)}
    executor = RayExecutor(RayOptions(address=getattr(args, "ray_address", None),
                                      workers=getattr(args, "ray_workers", None)),
                           functools.partial(_make_backend, values))
    executor.preflight()  # an unreachable --ray-address: refused in seconds, nothing written
    return executor
