"""Config files and suites: ``heritage-eval run --config FILE.yaml`` — models ×
benchmarks, one run folder per (benchmark, model), and a suite summary.

A config file (YAML or JSON)::

    out: runs/suite                 # root; each run goes to OUT/<benchmark>/<model slug>
    options: {limit: 5}             # options for every run (any CLI option, _ or -)
    models:                         # model specs, or mappings with per-model options
      - rapidocr
      - {model: "openai:qwen2.5-vl-7b", base_url: "http://localhost:8000/v1",
         concurrency: 16}
    benchmarks:                     # names, or mappings name -> options
      - ancient-bench: {data: data/demo/ancient_bench}
      - hcsu-discrimination: {data: data/demo/hcsu, k: 5}

Options merge in the order suite ``options`` < benchmark options < model options.
Relative paths (``out``, ``data``, ``questions`` …) are relative to the config file's
folder, not the working directory. Each run ends ``done``, ``partial`` (a ``limit``
run), ``skipped`` (a pair the benchmark refuses by design, e.g. an OCR engine on a
multiple-choice benchmark: :class:`~heritage_eval.core.benchmark.ModelRefused`),
``nothing-answered`` or ``not-run`` (unusable input or options, an unreachable endpoint);
the reason is kept. :func:`suite_ok` is the exit rule: 0 when every run is ``done``,
``partial`` or ``skipped`` and at least one ran, else 1. Every option is checked
against the command's own parser before any run starts (unknown keys get a suggestion).
Re-running the same file resumes each run (the same configuration finds its cache).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heritage_eval.core.config import OptionsError
from heritage_eval.core.datapath import read_regular_text
from heritage_eval.core.store import atomic_write_text

SUITE_SCHEMA = "heritage-eval/suite/1"
_PATH_KEYS = {"data", "questions", "images", "prompts", "cache", "predictions", "external",
              "extract_to", "bertscore_model", "out"}


class SuiteConfigError(ValueError):
    """The config file is unreadable or malformed; the message names the file and key."""


@dataclass
class SuiteEntry:
    """One (benchmark, model) run of a suite and how it ended."""

    benchmark: str
    model: str
    out: Path
    options: dict[str, Any]
    status: str = "pending"  # done | partial | skipped | nothing-answered | not-run
    partial: bool = False
    message: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)


def slug(text: str) -> str:
    """A folder-safe name for a model spec (``openai:a/b`` -> ``openai_a_b``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "model"


def _load_file(path: Path) -> dict[str, Any]:
    import yaml

    try:
        text = read_regular_text(path)
    except OSError as exc:
        raise SuiteConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SuiteConfigError(f"{path}: not valid YAML/JSON: {exc}") from None
    if not isinstance(data, dict):
        raise SuiteConfigError(f"{path}: expected a mapping with 'models' and 'benchmarks'")
    unknown = sorted(set(data) - {"out", "options", "models", "benchmarks"})
    if unknown:
        raise SuiteConfigError(f"{path}: unknown top-level key(s) {', '.join(unknown)} "
                               "(expected out, options, models, benchmarks)")
    return data


def _pairs(value: Any, path: Path, what: str, name_key: str) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(value, list) or not value:
        raise SuiteConfigError(f"{path}: '{what}' must be a non-empty list")
    out: list[tuple[str, dict[str, Any]]] = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            out.append((item, {}))
        elif isinstance(item, dict) and name_key in item:
            opts = {k: v for k, v in item.items() if k != name_key}
            out.append((str(item[name_key]), opts))
        elif isinstance(item, dict) and len(item) == 1:
            name, opts = next(iter(item.items()))
            if opts is not None and not isinstance(opts, dict):
                raise SuiteConfigError(f"{path}: {what}[{i}]: options of {name!r} must be "
                                       "a mapping")
            out.append((str(name), dict(opts or {})))
        else:
            raise SuiteConfigError(f"{path}: {what}[{i}]: expected a name or a mapping")
    return out


def _resolve_paths(opts: dict[str, Any], base: Path) -> dict[str, Any]:
    out = dict(opts)
    for key, value in opts.items():
        if key.replace("-", "_") in _PATH_KEYS and isinstance(value, str):
            p = Path(value).expanduser()
            out[key] = str(p if p.is_absolute() else (base / p))
    return out


def plan_suite(config: str | Path) -> list[SuiteEntry]:
    """Read and check a config file; one :class:`SuiteEntry` per (benchmark, model).

    Raises :class:`SuiteConfigError` or
    :class:`~heritage_eval.core.config.OptionsError` before anything runs."""
    path = Path(config)
    data = _load_file(path)
    base = path.resolve().parent
    root = Path(_resolve_paths({"out": data.get("out", "runs/suite")}, base)["out"])
    common = _resolve_paths(dict(data.get("options") or {}), base)
    entries = []
    seen: dict[Path, str] = {}
    for bench, bopts in _pairs(data.get("benchmarks"), path, "benchmarks", "name"):
        for model, mopts in _pairs(data.get("models"), path, "models", "model"):
            given = {**bopts, **mopts, **common}
            if "out" in given:  # the suite places every run itself
                raise SuiteConfigError(f"{path}: 'out' is set by the suite (each run in "
                                       f"OUT/<benchmark>/<model>); remove it from "
                                       f"{bench} x {model}")
            opts = {**common, **_resolve_paths(bopts, base), **_resolve_paths(mopts, base)}
            opts["model"] = model
            out = root / bench / slug(model)
            if out in seen:  # two entries would share one run folder: refused now
                raise SuiteConfigError(
                    f"{path}: {bench} x {model} and {seen[out]} would both write to {out}; "
                    "a suite runs each (benchmark, model) pair once — put the variants "
                    "in separate suite files")
            seen[out] = f"{bench} x {model}"
            opts["out"] = str(out)
            from heritage_eval.api import run_config

            run_config(bench, **opts)  # check now: unknown keys, types, required
            entries.append(SuiteEntry(bench, model, out, opts))
    return entries


def run_suite(config: str | Path, *, echo: bool = True) -> list[SuiteEntry]:
    """Run every (benchmark, model) of ``config`` and write ``OUT/suite.json`` and
    ``OUT/suite.md``. Per-run failures (refused model, unusable data) are recorded and
    the suite goes on. Raises :class:`SuiteConfigError` / ``OptionsError`` for a bad file.
    """
    from heritage_eval import api
    from heritage_eval.core.benchmark import ModelRefused, UsageError
    from heritage_eval.core.rundir import RunFolderBusy, RunFolderConflict

    entries = plan_suite(config)
    for e in entries:
        if echo:
            print(f"== {e.benchmark} × {e.model} -> {e.out}", flush=True)
        try:
            run = api.evaluate(e.benchmark, **e.options)
        except ModelRefused as exc:  # refused by design: not a failure of the suite
            e.status, e.message = "skipped", str(exc)
        except (UsageError, RunFolderConflict, RunFolderBusy, OptionsError) as exc:
            e.status, e.message = "not-run", str(exc)  # unusable input, refused model …
        except ValueError as exc:  # e.g. a model spec the backend refuses
            e.status, e.message = "not-run", str(exc)
        else:
            e.partial = run.partial
            e.status = ("nothing-answered" if run.status != 0 else
                        "partial" if run.partial else "done")
            specs = {m["name"]: m for m in
                     run.summary.get("statistics", {}).get("metric_specs", [])}
            e.metrics = {name: {**est, "scale": specs.get(name, {}).get("scale", 100.0)}
                         for name, est in run.metrics().items()}
        if echo and e.message:
            print(f"   {e.status}: {e.message}", flush=True)
    root = entries[0].out.parent.parent if entries else Path(config).parent
    _write_suite(root, Path(config), entries)
    return entries


#: Statuses of runs that ran; with ``skipped`` the statuses :func:`suite_ok` accepts.
RAN = ("done", "partial")


def suite_ok(entries: list[SuiteEntry]) -> bool:
    """The suite's exit rule: every run ``done``, ``partial`` or ``skipped`` (refused by
    design) and at least one of them ran (``done`` / ``partial``)."""
    return all(e.status in (*RAN, "skipped") for e in entries) and \
        any(e.status in RAN for e in entries)


def _write_suite(root: Path, config: Path, entries: list[SuiteEntry]) -> None:
    rows = [{"benchmark": e.benchmark, "model": e.model, "out": str(e.out),
             "status": e.status, "partial": e.partial, "message": e.message,
             "metrics": e.metrics}
            for e in entries]
    atomic_write_text(root / "suite.json", json.dumps(
        {"schema": SUITE_SCHEMA, "config": str(config.resolve()), "runs": rows},
        ensure_ascii=False, indent=2) + "\n")
    lines = ["# Suite summary", "", f"Config: `{config}`", "",
             "| benchmark | model | status | headline metrics (95 % CI) |",
             "|:---|:---|:---|:---|"]
    for e in entries:
        cells = []
        for name, m in e.metrics.items():
            if m.get("value") is None:
                continue
            k = float(m.get("scale", 100.0))
            ci = (f" [{k * m['ci_low']:.2f}, {k * m['ci_high']:.2f}]"
                  if m.get("ci_low") is not None and m.get("ci_high") is not None
                  else " [—]")
            ci += "†" if any(f not in ("n_1", "one_cluster") for f in m.get("flags") or ()) \
                else ""
            cells.append(f"{m.get('label', name)} {k * m['value']:.2f}{ci}")
        status = e.status + (f": {e.message.splitlines()[0]}" if e.message else "")
        lines.append(f"| {e.benchmark} | `{e.model}` | {status} | {'; '.join(cells)} |")
    atomic_write_text(root / "suite.md", "\n".join(lines) + "\n")
