"""Assertions shared by the Ancient-Bench platform tests."""

from __future__ import annotations

from typing import Any


def check_envelope(summary: dict[str, Any]) -> None:
    """Each model's envelope value per medium and overall equals the legacy number of
    the body (to float rounding: the envelope's means are numpy's, the body's the
    official evaluator's sequential sums) and its interval contains it."""
    for res in summary["results"]:
        block = summary["models"][res["model"]]
        for metric in ("ned_score", "f1"):
            for st in res["per_category"].values():
                if st["n"] == 0:
                    assert st["medium"] not in block["groups"]["medium"] or \
                        block["groups"]["medium"][st["medium"]][metric]["n"] == 0
                    continue
                est = block["groups"]["medium"][st["medium"]][metric]
                assert est["n"] == st["n"]
                assert est["value"] == st[metric]
                if st["n"] == 1:  # one image: no interval, and flagged
                    assert est["ci_low"] is None and est["flags"] == ["n_1"]
                else:
                    assert est["ci_low"] - 1e-12 <= st[metric] <= est["ci_high"] + 1e-12
            head = block["metrics"][metric]
            assert head["value"] == res["overall"][metric]
            assert head["ci_low"] - 1e-12 <= res["overall"][metric] <= head["ci_high"] + 1e-12
            assert head["method"] in ("stratified-welch-t", "t-adjusted", "wilson",
                                      "constant-bound")
