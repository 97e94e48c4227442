"""The sharded index (issue 23): the manifest's counts, and the page over many shards in
headless Chromium (the first screen before the other shards, a link to a sample of the
last shard, the state counts of every sample from the start)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from heritage_eval.viewer import build
from heritage_eval.viewer.browser import console_errors
from heritage_eval.viewer.pages import STATES
from tests.viewer.conftest import record, write_run
from tests.viewer.index_reader import read_index, read_search

N = 50
SHARD = 4


def _state(i: int) -> str:
    return STATES[i % 3 % 2 * (1 + i % 4 // 2)]  # a mix of every state but one


def _run(tmp: Path) -> Path:
    recs = [record(f"q{i:02d}", state=_state(i), answer=f"ans{i}",
                   groups={"medium": "Seal" if i % 2 else "Bronze"})
            for i in range(N)]
    return write_run(tmp / "run", recs, group_keys=["medium"])


def test_manifest_counts_and_shards(tmp_path: Path) -> None:
    info = build([_run(tmp_path)], tmp_path / "site", shard_size=SHARD)
    ix = read_index(tmp_path / "site")
    # by hand: 50 samples in shards of 4: twelve of 4, one of 2
    assert ix["shards"] == [4] * 12 + [2] and info.sizes["n_shards"] == 13
    assert ix["counts"] == [sum(_state(i) == s for i in range(N)) for s in STATES]
    assert sum(ix["counts"]) == N and ix["cols"]["id"] == [f"q{i:02d}" for i in range(N)]
    assert len(read_search(tmp_path / "site")) == N
    assert info.sizes["index"] == sum(
        f.stat().st_size for f in (tmp_path / "site" / "data").glob("index*.js"))


def test_shard_size_below_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        build([_run(tmp_path)], tmp_path / "site", shard_size=0)


@pytest.mark.slow
def test_page_over_many_shards(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    index = build([_run(tmp_path)], tmp_path / "site", shard_size=SHARD).index
    browser.get("about:blank")
    browser.get(index.as_uri() + "#s=49")  # a sample of the last shard
    wait = WebDriverWait(browser, 10)
    wait.until(lambda d: d.execute_script(
        "return document.body.getAttribute('data-loaded') === '1'"))
    # the link waited for its shard, then opened the sample
    wait.until(lambda d: d.execute_script(
        "return document.body.getAttribute('data-detail') === '49' && "
        "!document.getElementById('detail').hidden"))
    assert browser.execute_script("return document.getElementById('d-title').textContent") \
        == "q49"
    count = browser.execute_script("return document.getElementById('count').textContent")
    assert count == f"{N} of {N} samples shown"
    labels = browser.execute_script(
        "return Array.from(document.querySelectorAll('#f-states .badge'))"
        ".map(function (b) { return b.textContent; })")
    want = [f"{s} {sum(_state(i) == s for i in range(N))}" for s in STATES]
    assert labels == want
    shown = browser.execute_script(
        "return HE_APPLY({groups: {medium: HE_INDEX.groups.medium.indexOf('Seal')}})")
    assert shown == [i for i in range(N) if i % 2]  # by hand: odd samples are Seal
    assert console_errors(browser) == []


@pytest.mark.slow
def test_filters_cover_the_shards_loaded(browser: Any, tmp_path: Path) -> None:
    # shard 2 is gone: the page stops loading after shards 0 and 1 (8 samples), says so,
    # and a filter answers over those 8
    from selenium.webdriver.support.ui import WebDriverWait

    index = build([_run(tmp_path)], tmp_path / "site", shard_size=SHARD).index
    (tmp_path / "site" / "data" / "index-0002.js").unlink()
    browser.get("about:blank")
    browser.get(index.as_uri())
    WebDriverWait(browser, 10).until(lambda d: "could not load data/index-0002.js" in
                                     d.execute_script("return document.getElementById("
                                                      "'count').textContent"))
    assert browser.execute_script("return HE_INDEX.cols.id.length") == 2 * SHARD
    assert browser.execute_script("return document.body.getAttribute('data-loaded')") is None
    shown = browser.execute_script("return HE_APPLY({states: {scored: false}})")
    assert shown == [i for i in range(2 * SHARD) if _state(i) != "scored"]
    count = browser.execute_script("return document.getElementById('count').textContent")
    assert count == (f"{len(shown)} of {2 * SHARD} samples shown (error: could not load "
                     f"data/index-0002.js; the index stopped at {2 * SHARD} of {N} samples)")


def test_view_command_takes_the_shard_size(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from heritage_eval.cli.main import main

    run = _run(tmp_path)
    assert main(["view", str(run), "--out", str(tmp_path / "site"),
                 "--shard-size", "16", "--processes", "0"]) == 0
    # by hand: 50 samples in files of 16: 16, 16, 16, 2
    assert read_index(tmp_path / "site")["shards"] == [16, 16, 16, 2]
    assert sorted(p.name for p in (tmp_path / "site" / "data").glob("index-*.js")) == [
        "index-0000.js", "index-0001.js", "index-0002.js", "index-0003.js"]
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:  # refused by the parser, nothing built
        main(["view", str(run), "--out", str(tmp_path / "site2"), "--shard-size", "0"])
    assert exc.value.code == 2
    assert "shard-size" in capsys.readouterr().err and not (tmp_path / "site2").exists()
