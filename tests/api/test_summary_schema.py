"""The published JSON Schema of summary.json (``schemas/summary-1.json``): in step with the
writers (its required keys are the keys the envelope code writes), met by the summary of
every benchmark's demo run, and strict where it promises a shape."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import heritage_eval
from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.failure_counts import outcomes_body
from heritage_eval.core.record import ResponseRecord, SampleRecord, TurnRecord
from heritage_eval.core.run_limits import RunLimits
from heritage_eval.core.summary import (
    SUMMARY_SCHEMA,
    envelope,
    metric_spec_dict,
    statistics_block,
)

SCHEMA_FILE = Path(heritage_eval.__file__).parent / "schemas" / "summary-1.json"
SCHEMA = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
DEFS = SCHEMA["$defs"]
ACC = MetricSpec("acc", "Acc", macro_over="medium", cluster="work", by=("medium",))


def _validator() -> Draft202012Validator:
    return Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)


def _errors(summary: dict[str, Any]) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in _validator().iter_errors(summary)]


def _records() -> list[SampleRecord]:
    """Two models; one record of each state, one refusal (a model failure)."""
    out = []
    for model in ("a", "b"):
        for i, state in enumerate(("scored", "unparsed", "error", "unscored", "scored")):
            refusal = model == "b" and i == 4
            out.append(SampleRecord(
                id=f"s{i}", benchmark="toy", model=model, state=state,
                groups={"medium": "xy"[i % 2]}, details={"work": f"w{i // 2}",
                                                         **({"model_failure": "refusal"}
                                                            if refusal else {})},
                scores={"acc": float(i % 2)} if state in ("scored", "unparsed") else {},
                error="timeout" if state == "error" else None,
                turns=[TurnRecord(prompt="p", response=ResponseRecord(
                    text=None if state == "error" else "A", finish_reason="stop"))]))
    return out


def test_schema_is_valid_and_identified() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["$id"] == "https://heritage-eval/schemas/summary-1.json"
    assert SCHEMA["properties"]["schema"] == {"const": SUMMARY_SCHEMA}


def test_required_keys_are_what_the_writers_write() -> None:
    records = _records()
    env = envelope("toy", records, [ACC], ["medium"])
    # the envelope keys plus the provenance every writer merges in
    assert set(SCHEMA["required"]) == {*env, "provenance"}
    block = env["models"]["a"]
    assert DEFS["ModelBlock"]["required"] == list(block)
    assert DEFS["Estimate"]["required"] == list(block["metrics"]["acc"])
    assert DEFS["MetricSpec"]["required"] == list(metric_spec_dict(ACC))
    assert DEFS["Statistics"]["required"] == list(statistics_block([ACC]))
    assert DEFS["RunLimits"]["required"] == list(RunLimits().block())
    body = outcomes_body(records, "medium", "wrong")
    assert set(body) <= set(SCHEMA["properties"])
    for key, ref in [("truncation", "Truncation"), ("refusals", "Refusals"),
                     ("model_failures", "ModelFailures"), ("excluded", "Excluded")]:
        assert DEFS[ref]["required"] == list(body[key]["b"]), key
    summary = {**env, **body, "provenance": {
        "package": "heritage-eval", "package_version": "0", "git_commit": None,
        "python": "3.11", "platform": "x", "created_utc": "2026-01-01T00:00:00+00:00",
        "command": "heritage-eval run toy"}}
    assert _errors(summary) == []


RUNS = ["ab_run", "ab_score_run", "hcsu_run", "hcsu_partial_run", "ksweep_run", "muse_run"]


@pytest.mark.slow
@pytest.mark.parametrize("fixture", RUNS)
def test_demo_summaries_validate(fixture: str, request: pytest.FixtureRequest) -> None:
    folder: Path = request.getfixturevalue(fixture)
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert _errors(summary) == []
    assert summary["models"]  # a summary with something to check


def _node(summary: dict[str, Any], path: tuple[str, ...]) -> Any:
    """The container at ``path`` (``*``: the first entry of a dict, digits: a list index)."""
    node: Any = summary
    for p in path:
        node = (next(iter(node.values())) if p == "*" else node[int(p)] if p.isdigit()
                else node[p])
    return node


def _drop(*path: str) -> Any:
    return lambda s: _node(s, path[:-1]).pop(path[-1])


def _put(value: Any, *path: str) -> Any:
    return lambda s: _node(s, path[:-1]).__setitem__(path[-1], value)


MUTATIONS = [
    ("no models", _drop("models")), ("no provenance", _drop("provenance")),
    ("other schema", _put("heritage-eval/summary/2", "schema")),
    ("value as text", _put("high", "models", "*", "metrics", "*", "value")),
    ("no ci_low", _drop("models", "*", "metrics", "*", "ci_low")),
    ("extra estimate key", _put(1, "models", "*", "metrics", "*", "p")),
    ("negative n", _put(-1, "models", "*", "metrics", "*", "n")),
    ("unknown state", _put(0, "models", "*", "states", "done")),
    ("group not an estimate", _put({"acc": 0.5}, "models", "*", "groups", "medium", "x")),
    ("bad outcome key", _put(1, "models", "*", "response_outcomes", "stopped")),
    ("bad policy", _put("maybe", "model_failures", "*", "policy")),
    ("rate above 1", _put(1.5, "truncation", "*", "overall", "rate")),
    ("partial as text", _put("no", "partial")),
    ("bounds of three", _put([0, 1, 2], "statistics", "metric_specs", "0", "bounds")),
    ("time without zone", _put("2026-01-01 00:00", "provenance", "created_utc")),
]


def _base() -> dict[str, Any]:
    records = _records()
    return {**envelope("toy", records, [ACC], ["medium"]),
            **outcomes_body(records, "medium", "wrong"),
            "provenance": {"package": "heritage-eval", "package_version": "0",
                           "git_commit": "abc", "python": "3.11", "platform": "x",
                           "created_utc": "2026-01-01T00:00:00+00:00", "command": "c"},
            "results": [{"anything": "a benchmark's own body"}], "own_key": 1}


@pytest.mark.parametrize(("what", "mutate"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_broken_summaries_are_refused(what: str, mutate: Any) -> None:
    base = _base()
    assert _errors(base) == []  # a benchmark's own keys are allowed
    broken = copy.deepcopy(base)
    mutate(broken)
    assert _errors(broken), what
