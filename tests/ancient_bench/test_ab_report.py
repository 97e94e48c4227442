"""summary.md / console tables: what Overall averages, and which media it covers."""

from __future__ import annotations

from typing import Any

from heritage_eval.benchmarks.ancient_bench.normalize import NormalizationFlags
from heritage_eval.benchmarks.ancient_bench.records import SampleRecord, build_record
from heritage_eval.benchmarks.ancient_bench.report import (
    OVERALL_FOOTNOTE,
    build_summary,
    medium_table,
    render_markdown,
)
from heritage_eval.core.types import Sample

CATEGORIES = ["bronze_rubbings", "seals", "calligraphys", "murals"]  # paper order, unknown last


def _row(category: str, gt: str, answer: str | None, error: str | None = None) -> SampleRecord:
    sample = Sample(id=f"{category}/x", category=category, target=gt,
                    metadata={"image_name": "x.png"}, source=f"{category}/conv.jsonl:1")
    return build_record(sample, "m", answer, error, NormalizationFlags())


def _summary() -> dict[str, Any]:
    rows = [
        _row("bronze_rubbings", "王作寶彝", None, "HTTP 500"),  # no scored Bronze sample
        _row("seals", "王未央印", "王未央印X"),        # 1 insertion, 5 predicted tokens
        _row("calligraphys", "永和九年", "永和九年ABC"),  # 3 insertions, 7 predicted tokens
        _row("murals", "壁畫", "壁畫"),                 # exact, 2 predicted tokens
    ]
    return build_summary(rows, ["m"], CATEGORIES, {"name": "official", "flags": {}},
                         {"prompt_templates_hash": "abc", "prompt_used": True})


def test_overall_row_kinds_of_average() -> None:
    res = _summary()["results"][0]
    table = medium_table(res)
    overall = next(line for line in table.splitlines() if "Overall §" in line)
    cells = [c.strip() for c in overall.strip("|").split("|")]
    # Columns: Medium, n, errors, NED, F1, halluc., ins, del, sub, s/t-only.
    # NED by hand: Seal 1 - 1/5 = 0.8, Calligraphy 1 - 3/7, murals 1; unweighted mean of
    # the three media = (0.8 + 0.571428… + 1) / 3 = 0.790476… -> 79.05.
    # Hallucination pooled over tokens: (1 + 3 + 0) / (5 + 7 + 2) = 4/14 -> 28.57 (the mean
    # of the media's rates would be (20 + 42.86 + 0) / 3 = 20.95).
    assert cells[:4] == ["Overall §", "3", "1", "79.05"]
    assert cells[5:7] == ["28.57", "4"]
    md = render_markdown(_summary())
    assert OVERALL_FOOTNOTE in md and "pooled over the tokens" in OVERALL_FOOTNOTE
    # The models x media table names its Overall column's kind of average.
    assert "Overall (mean of media)" in md


def test_overall_coverage_notes() -> None:
    summary = _summary()
    res = summary["results"][0]
    assert res["overall_covers"] == ["seals", "calligraphys", "murals"]
    md = render_markdown(summary)
    # Bronze has only an error row, so Overall averages 3 of the 4 media present.
    assert "Overall = mean over 3 of 4 media; Bronze has no scored samples." in md
    # The unknown folder is kept and included in Overall, and says so.
    assert ("Overall includes murals (category folder(s) not among the paper's 9 media), "
            "so it is not comparable with the paper's.") in md
    assert "prompt_templates_hash: `abc`" in md
