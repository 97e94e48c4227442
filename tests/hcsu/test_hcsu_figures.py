"""The figures of the HCSU studies, read back from the matplotlib objects: per-domain
lines with 95 % error bars equal to the summary's intervals, the model named, y from 0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.container import ErrorbarContainer

from heritage_eval.benchmarks.hcsu.figures import k_sweep_figure, shot_sweep_figure
from heritage_eval.benchmarks.hcsu.tables import pooled
from heritage_eval.cli.main import main
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.store import read_jsonl

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "hcsu"


def _run(out: Path) -> tuple[dict[str, Any], list[SampleRecord]]:
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    records = [SampleRecord.model_validate(r) for r in read_jsonl(out / "samples.jsonl")]
    return summary, records


def _bars(ax: Axes) -> dict[str, ErrorbarContainer]:
    return {str(c.get_label()): c for c in ax.containers if isinstance(c, ErrorbarContainer)}


def _points(c: ErrorbarContainer) -> tuple[list[float], list[float], list[float]]:
    """``(y, low, high)`` of an error-bar line."""
    y = [float(v) for v in np.asarray(c.lines[0].get_ydata(), dtype=float)]
    seg = c.lines[2][0].get_segments()
    return y, [float(s[0][1]) for s in seg], [float(s[1][1]) for s in seg]


def test_k_sweep_plot_has_domains_error_bars_and_model(tmp_path: Path) -> None:
    out = tmp_path / "k"
    assert main(["hcsu", "k-sweep", "--data", str(DEMO), "--model",
                 "baseline:image-similarity", "--ks", "2-4", "--limit", "10",
                 "--out", str(out)]) == 0
    assert (out / "k_sweep.png").stat().st_size > 0
    summary, records = _run(out)
    fig = k_sweep_figure(summary["results"], records)
    ax = fig.axes[0]
    assert "baseline:image-similarity" in ax.get_title()  # named no model before
    assert ax.get_ylim()[0] == 0.0
    bars = _bars(ax)
    assert set(bars) == {"Bei Acc", "Tie Acc", "Avg. Acc (mean of domains)"}
    groups = summary["models"]["baseline:image-similarity"]["groups"]["k"]
    y, low, high = _points(bars["Avg. Acc (mean of domains)"])
    # the table's Avg. Acc, and the summary's interval of it
    assert y == pytest.approx([100 * r["avg_accuracy"] for r in summary["results"]])
    assert low == pytest.approx([100 * groups[k]["accuracy"]["ci_low"] for k in "234"])
    assert high == pytest.approx([100 * groups[k]["accuracy"]["ci_high"] for k in "234"])
    for domain in ("Bei", "Tie"):
        y, low, high = _points(bars[f"{domain} Acc"])
        assert y == pytest.approx([100 * r["per_domain"][domain]["accuracy"]
                                   for r in summary["results"]])
        assert all(lo <= v <= hi for v, lo, hi in zip(y, low, high, strict=True))
        assert np.mean(np.subtract(high, low)) > 0
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "chance (1/K)" in legend
    plt.close(fig)


def test_shot_sweep_plot_is_written_with_domains_and_reference(tmp_path: Path) -> None:
    out = tmp_path / "s"
    assert main(["hcsu", "shot-sweep", "--data", str(DEMO), "--model",
                 "baseline:nearest-description", "--shot-list", "1,2", "--limit", "6",
                 "--out", str(out)]) == 0
    assert (out / "shot_sweep.png").stat().st_size > 0
    assert "shot_sweep.png" in json.loads((out / "run.json").read_text())["files"]
    summary, records = _run(out)
    fig = shot_sweep_figure(summary["results"], records)
    (ax,) = fig.axes  # BERTScore only: no judge
    assert "baseline:nearest-description" in fig.get_suptitle()
    assert ax.get_ylim()[0] == 0.0
    bars = _bars(ax)
    assert set(bars) == {"Bei", "Tie", "all domains"}
    y, low, high = _points(bars["all domains"])
    assert y == pytest.approx([pooled(r["per_domain"], "bertscore_x10", "n_bertscore")
                               for r in summary["results"]])  # the table's number
    groups = summary["models"]["baseline:nearest-description"]["groups"]["shots"]
    assert low == pytest.approx([groups[n]["bertscore_x10"]["ci_low"] for n in "12"])
    assert high == pytest.approx([groups[n]["bertscore_x10"]["ci_high"] for n in "12"])
    legend = ax.get_legend()
    assert legend is not None
    labels = [t.get_text() for t in legend.get_texts()]
    assert any(t.startswith("expert reference vs itself") for t in labels)
    plt.close(fig)


def _desc_entry(shots: int, judged: bool) -> dict[str, Any]:
    per = {d: {"n": 2, "n_bertscore": 2, "n_judged": 2, "bertscore_x10": 5.0 + shots,
               "terminology": 3.0 if judged else None, "richness": 4.0 if judged else None,
               "expert_terminology": 8.0 if judged else None,
               "expert_richness": 7.0 if judged else None} for d in ("Bei", "Tie")}
    return {"model": "m", "shots": shots, "per_domain": per,
            "expert_reference": {"bertscore_x10": 10.0}}


def test_shot_sweep_panels_follow_the_scores() -> None:
    fig = shot_sweep_figure([_desc_entry(1, True), _desc_entry(2, True)], [])
    assert [ax.get_title() for ax in fig.axes] == ["BERTScore", "Term.", "Rich."]
    legend = fig.axes[1].get_legend()
    assert legend is not None
    term = [t.get_text() for t in legend.get_texts()]
    assert "Bei expert reference (judged)" in term and "Tie" in term
    plt.close(fig)
    fig = shot_sweep_figure([{"model": "m", "shots": 1, "per_domain": {"Bei": {}}}], [])
    assert "no description score" in fig.axes[0].texts[0].get_text()
    plt.close(fig)
