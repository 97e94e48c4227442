"""The sample browser's filters (static/app.js) on generated runs, in headless Chromium,
against a Python reference filter written from the documented rules:

a sample is shown when its run is the chosen one (or all), its state is ticked, it has
the chosen value of each chosen group, its score of the chosen metric times the metric's
display scale lies in [min, max] (a sample without that score is hidden while a bound is
set), and the search text (id, groups, answer, reference, response; lower case) holds
the query, lower-cased and trimmed. The shown samples are in file order, or sorted by
id, by state (in the order scored, unparsed, error, unscored) or by the chosen score
(ascending or descending, samples without it last), ties in file order.

The sites are built in one index shard and in several (a few samples per shard), so the
filters are checked over shards joined in the page.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.viewer import build
from heritage_eval.viewer.browser import console_errors
from heritage_eval.viewer.pages import STATES
from tests.viewer.conftest import record, write_run

pytestmark = pytest.mark.slow
MEDIA = ["Seal", "Bronze", "Oracle", "Silk"]
SCALE = 100.0  # the "acc" metric is shown in percent


def _site(root: Path, samples: list[tuple[str, int | None, float | None, str]],
          shard_size: int | None = None) -> Path:
    recs = [record(f"s{i}-{word}", state=state, answer=word,
                   groups={} if m is None else {"medium": MEDIA[m]},
                   scores={} if score is None else {"acc": score})
            for i, (state, m, score, word) in enumerate(samples)]
    run = write_run(root / "run", recs, metrics=[MetricSpec("acc", "Acc", scale=SCALE)],
                    group_keys=["medium"])
    return build([run], root / "site", shard_size=shard_size).index


def reference_filter(samples: list[tuple[str, int | None, float | None, str]],
                     media: list[str], f: dict[str, Any]) -> list[int]:
    """The samples the rules of the module docstring show, in file order."""
    out = []
    for i, (state, m, score, word) in enumerate(samples):
        if not f["states"][state]:
            continue
        g = f["groups"]["medium"]
        if g >= 0 and (m is None or MEDIA[m] != media[g]):
            continue
        lo = None if f["min"] == "" else float(f["min"])
        hi = None if f["max"] == "" else float(f["max"])
        if lo is not None or hi is not None:
            v = None if score is None else round(score, 4) * SCALE
            if v is None or (lo is not None and v < lo) or (hi is not None and v > hi):
                continue
        # search_text: id, group values, answer, reference and response ("A": record())
        text = " ".join((f"s{i}-{word}", *([MEDIA[m]] if m is not None else []), word,
                         "A", "A")).lower()
        if f["q"].strip().lower() not in text:
            continue
        out.append(i)
    ids = [f"s{i}-{word}" for i, (_, _, _, word) in enumerate(samples)]
    vals = [None if score is None else round(score, 4) for _, _, score, _ in samples]
    sign = -1 if f["sort"] == "desc" else 1
    keys = {"order": lambda i: i, "id": lambda i: (ids[i], i),
            "state": lambda i: (STATES.index(samples[i][0]), i),
            "asc": lambda i: (vals[i] is None, sign * (vals[i] or 0.0), i)}
    return sorted(out, key=keys["asc" if f["sort"] == "desc" else f["sort"]])


def _open(driver: Any, index: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")
    driver.get(index.as_uri())
    WebDriverWait(driver, 10).until(lambda d: d.execute_script(
        "return document.body.getAttribute('data-ready') === '1' && !!window.HE_SEARCH"
        " && document.body.getAttribute('data-loaded') === '1'"))


_SAMPLE = st.tuples(st.sampled_from(STATES), st.one_of(st.none(), st.integers(0, 3)),
                    st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 0.123456, 1.0])),
                    st.sampled_from(["alpha", "Beta", "gamma"]))
_BOUND = st.sampled_from(["", "0", "12.35", "25", "50", "100"])
_FILTER = st.fixed_dictionaries({
    "states": st.fixed_dictionaries({s: st.sampled_from([True, True, False]) for s in STATES}),
    "medium": st.integers(-1, 3), "min": _BOUND, "max": _BOUND,
    "q": st.sampled_from(["", "", "", "ALPHA", " beta ", "s1", "seal", "zz"]),
    "sort": st.sampled_from(["order", "order", "id", "state", "asc", "desc"])})


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(samples=st.lists(_SAMPLE, min_size=1, max_size=40), filters=st.lists(_FILTER,
                                                                             max_size=8),
       shard_size=st.sampled_from([None, 1, 3, 7]))
def test_filters_match_the_reference(browser: Any, samples: list[Any],
                                     filters: list[dict[str, Any]],
                                     shard_size: int | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        index = _site(Path(tmp), samples, shard_size)
        _open(browser, index)
        n = browser.execute_script("return HE_INDEX.cols.id.length")
        assert n == len(samples)  # every shard joined
        media = json.loads(browser.execute_script(
            "return JSON.stringify(HE_INDEX.groups.medium || [])"))
        for f in filters:
            g = f.pop("medium")
            f["groups"] = {"medium": g if g < len(media) else -1}
            shown = browser.execute_script(f"return HE_APPLY({json.dumps(f)})")
            assert shown == reference_filter(samples, media, f), f


@pytest.mark.parametrize("shard_size", [None, 400])
def test_filter_in_the_page_shows_the_count(browser: Any, tmp_path: Path,
                                            shard_size: int | None) -> None:
    """Through the controls, on a generated run of 3,000 samples (one index shard, or 8
    of 400): choose a medium, then untick a state; the count line says how many samples
    are left."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    samples: list[tuple[str, int | None, float | None, str]] = [
        (STATES[i % 7 % 4], i % 5 if i % 5 < 4 else None, (i % 11) / 10, "w")
        for i in range(3_000)]
    _open(browser, _site(tmp_path, samples, shard_size))
    media = json.loads(browser.execute_script("return JSON.stringify(HE_INDEX.groups.medium)"))
    Select(browser.find_element(By.ID, "f-g-medium")).select_by_value(
        str(media.index("Oracle")))
    # by hand: i % 5 == 2 is Oracle: 600 of 3,000
    WebDriverWait(browser, 5).until(lambda d: d.find_element(By.ID, "count").text
                                    .startswith("600 of 3000"))
    browser.find_element(By.CSS_SELECTOR, "#f-states input[value=scored]").click()
    want = sum(1 for s, m, _, _ in samples if m == 2 and s != "scored")
    WebDriverWait(browser, 5).until(lambda d: d.find_element(By.ID, "count").text
                                    .startswith(f"{want} of 3000"))
    assert browser.execute_script("return document.querySelectorAll('tr.row').length") == 50
    assert console_errors(browser) == []
