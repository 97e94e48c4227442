"""The envelope's per-model block, folded into typed columns (``ModelFacts``), equals the
estimates computed straight from the records (``summary.estimate``: ``metric_values`` and
``cluster_of`` over the record list, an independent path), for every metric and group."""

from __future__ import annotations

import random

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.summary import STATES, estimate, model_block
from heritage_eval.core.types import Outcome

METRICS = (MetricSpec("acc", "Acc", macro_over="g", by=("g",)),
           MetricSpec("sim", "Sim", cluster="img", by=("h",)))


def _records(n: int, seed: int) -> list[SampleRecord]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        state = rng.choice([Outcome.SCORED] * 6 + [Outcome.UNPARSED, Outcome.ERROR])
        groups = {"g": rng.choice("abc")}
        if rng.random() < 0.8:  # some records have no "h" group at all
            groups["h"] = rng.choice(["x", "y"])
        scores = {"acc": float(rng.random() < 0.6) if state != Outcome.ERROR else None,
                  "sim": rng.random() if state == Outcome.SCORED else None}
        out.append(SampleRecord(id=f"r{i}", benchmark="toy", model="m", groups=groups,
                                state=state, scores=scores,
                                details={"img": f"img{rng.randrange(n // 3)}"}))
    return out


def test_block_equals_estimates_from_the_records() -> None:
    records = _records(240, 7)
    block = model_block(records, METRICS, ("g",))
    for spec in METRICS:
        assert block["metrics"][spec.name] == estimate(records, spec)
    for key in ("g", "h"):
        values = list(dict.fromkeys(r.groups[key] for r in records if key in r.groups))
        assert list(block["groups"][key]) == values  # first-seen order
        for value in values:
            part = [r for r in records if r.groups.get(key) == value]
            for spec in METRICS:
                assert block["groups"][key][value][spec.name] == \
                    estimate(part, spec, macro=spec.macro_over != key)
    counted = {s: sum(r.state.value == s for r in records) for s in STATES}
    assert block["states"] == counted and block["n_records"] == 240
    # the clustered metric resampled whole images: fewer clusters than values
    sim = block["metrics"]["sim"]
    assert sim["n_clusters"] is not None and sim["n_clusters"] < sim["n"]
