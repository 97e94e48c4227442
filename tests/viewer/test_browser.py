"""Real-browser tests: each benchmark's site from real CLI runs, in headless Chromium.

Each test opens ``index.html`` from ``file://``, counts the samples shown, applies a
filter, opens a sample, checks what the benchmark's view must show (a diff cell, a drawn
box, candidates, side-by-side models), fails on any console error and saves
screenshots under the artifacts folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.core.records_io import read_records
from heritage_eval.viewer import build
from heritage_eval.viewer.browser import console_errors
from heritage_eval.viewer.diff import char_ops
from tests.viewer.conftest import copy_run

pytestmark = pytest.mark.slow


def _open(driver: Any, index: Path, fragment: str = "") -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")
    driver.get(index.resolve().as_uri() + fragment)
    WebDriverWait(driver, 10).until(
        lambda d: d.execute_script("return document.body.getAttribute('data-ready')") == "1")


def _wait(driver: Any, script: str, timeout: float = 10) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(lambda d: d.execute_script(script))


def _rows(driver: Any) -> int:
    return int(driver.execute_script("return document.querySelectorAll('tr.row').length"))


def _count(driver: Any) -> str:
    return str(driver.execute_script("return document.getElementById('count').textContent"))


def _open_sample(driver: Any, i: int) -> None:
    driver.execute_script(f"location.hash = '#s={i}'")
    _wait(driver, f"return document.body.getAttribute('data-detail') === '{i}' && "
                  "!document.getElementById('detail').hidden")


def _shot(driver: Any, artifacts: Path, name: str) -> None:
    driver.save_screenshot(str(artifacts / f"{name}.png"))


def _no_errors(driver: Any) -> None:
    errors = console_errors(driver)
    assert errors == [], f"console errors: {errors}"


def _select(driver: Any, element_id: str, value: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.ID, element_id)).select_by_value(value)


@pytest.fixture(scope="session")
def sites(real_runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
          ) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("sites")
    out = {"ab": build([real_runs["ab"]], base / "ab").index,
           "hcsu": build([real_runs["hd"], real_runs["hs"]], base / "hcsu").index,
           "muse": build([real_runs["mu"], real_runs["mu2"]], base / "muse").index}
    # bad input: a truncated line, an image that is gone
    bad = copy_run(real_runs["ab"], base / "bad-run")
    lines = (bad / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["turns"][0]["images"][0]["path"] = "gone/missing.jpg"
    lines[0] = json.dumps(first, ensure_ascii=False)
    lines.append(lines[1][: len(lines[1]) // 2])
    (bad / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out["bad"] = build([bad], base / "bad").index
    return out


def test_ancient_bench_site(browser: Any, sites: dict[str, Path], real_runs: dict[str, Path],
                            artifacts: Path) -> None:
    recs = read_records(real_runs["ab"] / "samples.jsonl")
    _open(browser, sites["ab"])
    assert _rows(browser) == len(recs) == 9 and _count(browser).startswith("9 of 9")
    assert "PARTIAL" in browser.page_source
    _shot(browser, artifacts, "ancient_bench-list")
    # filter by medium: only that medium's samples remain
    medium = recs[3].groups["medium"]
    values = json.loads(browser.execute_script("return JSON.stringify(HE_INDEX.groups.medium)"))
    _select(browser, "f-g-medium", str(values.index(medium)))
    assert _rows(browser) == sum(r.groups["medium"] == medium for r in recs)
    # open a sample with differences; its diff cells are the ones computed by hand here
    i = next(k for k, r in enumerate(recs) if r.scores.get("ned_score") not in (None, 1.0))
    rec = recs[i]
    _open_sample(browser, i)
    ops = char_ops(rec.details["normalized_ground_truth"], rec.details["normalized_prediction"])
    expected = [(k, g or "\u3000", p or "\u3000") for k, g, p in ops if k != "="]
    cells = json.loads(browser.execute_script(
        "return JSON.stringify([...document.querySelectorAll('#d-body .diff .dc:not(.d-eq)')]"
        ".map(c => [c.className.split(' ')[1], c.children[0].textContent, "
        "c.children[1].textContent]))"))
    kinds = {"s": "d-sub", "t": "d-st", "i": "d-ins", "d": "d-del"}
    assert cells == [[kinds[k], g, p] for k, g, p in expected] and cells
    assert browser.execute_script(
        "return document.querySelector('#d-body figure.main img').naturalWidth") > 0
    _shot(browser, artifacts, "ancient_bench-detail")
    # zoom opens the full-size image
    browser.execute_script("document.querySelector('#d-body .zoomable').click()")
    _wait(browser, "var i = document.querySelector('#z-stage img'); "
                   "return !document.getElementById('zoom').hidden && i && i.naturalWidth > 0")
    _shot(browser, artifacts, "ancient_bench-zoom")
    _no_errors(browser)


def test_hcsu_site(browser: Any, sites: dict[str, Path], real_runs: dict[str, Path],
                   artifacts: Path) -> None:
    n_d = len(read_records(real_runs["hd"] / "samples.jsonl"))
    n_s = len(read_records(real_runs["hs"] / "samples.jsonl"))
    _open(browser, sites["hcsu"])
    assert _rows(browser) == n_d + n_s and _count(browser).startswith(f"{n_d + n_s} of")
    _select(browser, "f-run", "0")  # the discrimination run only
    assert _rows(browser) == n_d
    _shot(browser, artifacts, "hcsu-list")
    _open_sample(browser, 0)
    k = browser.execute_script("return document.querySelectorAll('#d-body .cand').length")
    assert k == 5  # --k 5 candidates, each with its reference image and description
    assert browser.execute_script(
        "return document.querySelectorAll('#d-body .cand.is-correct').length") == 1
    assert browser.execute_script(
        "return [...document.querySelectorAll('#d-body .cand img')]"
        ".every(i => i.complete && i.naturalWidth > 0)")
    _shot(browser, artifacts, "hcsu-discrimination-detail")
    _open_sample(browser, n_d)  # first description sample
    text = browser.execute_script("return document.getElementById('d-body').textContent")
    assert "expert reference" in text and "model description" in text
    _shot(browser, artifacts, "hcsu-description-detail")
    _no_errors(browser)


def test_muse_site(browser: Any, sites: dict[str, Path], real_runs: dict[str, Path],
                   artifacts: Path) -> None:
    recs = read_records(real_runs["mu"] / "samples.jsonl")
    recs2 = read_records(real_runs["mu2"] / "samples.jsonl")
    _open(browser, sites["muse"])
    assert _count(browser).startswith(f"{len(recs) + len(recs2)} of")
    assert _rows(browser) == min(50, len(recs) + len(recs2))
    # state filter: keep only unparsed + error + unscored
    browser.execute_script("document.querySelector('#f-states input[value=scored]').click()")
    others = sum(r.state.value != "scored" for r in recs + recs2)
    assert _count(browser).startswith(f"{others} of")
    browser.execute_script("document.querySelector('#f-states input[value=scored]').click()")
    # a localization question: its option boxes drawn where the record says
    i = next(k for k, r in enumerate(recs) if r.groups.get("task") == "activity_localization")
    _open_sample(browser, i)
    _wait(browser, "var i = document.querySelector('#d-body figure.artwork img');"
                   "return i && i.complete && i.naturalWidth > 0")
    geo = json.loads(browser.execute_script(
        "var w = document.querySelector('#d-body figure.artwork .imgwrap img')"
        ".getBoundingClientRect();"
        "return JSON.stringify([w.left, w.top, w.width, w.height, [...document.querySelectorAll("
        "'#d-body figure.artwork .box')].map(b => {var r = b.getBoundingClientRect();"
        "return [b.textContent, r.left, r.top, r.width, r.height];})]);"))
    left, top, width, height, boxes = geo
    opts = {o["label"]: o["box"] for o in recs[i].details["options"] if o.get("box")}
    assert opts and len(boxes) >= len(opts)
    for label, bl, bt, bw, bh in boxes:
        if label in opts:
            x, y, w, h = opts[label]
            assert abs(bl - (left + x * width)) < 2.5 and abs(bt - (top + y * height)) < 2.5
            assert abs(bw - w * width) < 3 and abs(bh - h * height) < 3 and bw > 5
    _shot(browser, artifacts, "muse-boxes-detail")
    # jigsaw: puzzle beside its pieces
    j = next(k for k, r in enumerate(recs) if r.groups.get("task") == "jigsaw_puzzle")
    _open_sample(browser, j)
    assert browser.execute_script(
        "return document.querySelectorAll('#d-body .col').length") == 2  # both models
    assert browser.execute_script(
        "return document.querySelectorAll('#d-body .col')[0]"
        ".querySelectorAll('.jigsaw figure').length") >= 4
    _shot(browser, artifacts, "muse-jigsaw-side-by-side")
    browser.execute_script("document.getElementById('d-close').click()")
    # where models disagree: only shared jigsaw questions that differ
    browser.execute_script("document.getElementById('f-dis').click()")
    n_dis = browser.execute_script("return HE_INDEX.cols.dis.filter(x => x).length")
    assert _count(browser).startswith(f"{n_dis} of") and n_dis <= 2 * len(recs2)
    # text search on the lazily loaded search index
    browser.execute_script("document.getElementById('f-dis').click()")
    q = browser.find_element("id", "f-q")
    q.send_keys("jigsaw_puzzle")
    _wait(browser, "return !!window.HE_SEARCH")
    n_jig = sum("jigsaw_puzzle" in r.id for r in recs + recs2)
    _wait(browser, f"return document.getElementById('count').textContent.startsWith('{n_jig} of')")
    _shot(browser, artifacts, "muse-search")
    _no_errors(browser)


def test_bad_input_site(browser: Any, sites: dict[str, Path], artifacts: Path) -> None:
    _open(browser, sites["bad"])
    text = browser.execute_script("return document.body.textContent")
    assert "problems (" in text and "skipped" in text and "gone/missing.jpg" in text
    assert _rows(browser) == 9
    assert browser.execute_script(
        "return document.querySelector('tr.row .th-missing') !== null")
    _open_sample(browser, 0)
    assert "image missing" in browser.execute_script(
        "return document.querySelector('#d-body .img-missing').textContent")
    _shot(browser, artifacts, "bad-input")
    _no_errors(browser)


def test_reference_column_and_cjk_font_check(browser: Any, tmp_path: Path,
                                             artifacts: Path) -> None:
    """Hand-made run (no CLI runs): the list shows answer and reference side by side, and
    the in-page tofu check agrees with fontconfig (a CJK font installed = no boxes)."""
    import shutil
    import subprocess

    from tests.viewer.conftest import record, write_run

    run = write_run(tmp_path / "run", [record("s0", answer="王羲之", reference="顏真卿"),
                                       record("s1", answer="B", reference="C")])
    _open(browser, build([run], tmp_path / "site").index)
    cells = json.loads(browser.execute_script(
        "return JSON.stringify([...document.querySelectorAll('tr.row')].map(r => "
        "[r.querySelector('td.ans:not(.ref)').textContent, "
        "r.querySelector('td.ref').textContent]))"))
    assert cells == [["王羲之", "顏真卿"], ["B", "C"]]
    assert "reference" in browser.execute_script(
        "return [...document.querySelectorAll('table.samples th')].map(t => t.textContent)")
    if shutil.which("fc-list"):
        has_font = bool(subprocess.run(["fc-list", ":lang=zh"], capture_output=True,
                                       text=True).stdout.strip())
        assert browser.execute_script("return window.HE_TOFU") is (not has_font)
        assert browser.execute_script(
            "return document.getElementById('font-notice') !== null") is (not has_font)
    _shot(browser, artifacts, "reference-column")
    _no_errors(browser)


def test_tofu_notice_without_cjk_font(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      artifacts: Path) -> None:
    """A Chromium whose fontconfig sees one Latin font only (matplotlib's DejaVu Sans)
    draws every CJK character as the same box: the page says which font to install (the
    in-page check; the build machine may have one)."""
    import shutil

    import matplotlib

    from heritage_eval.viewer.browser import chromium, missing_reason
    from tests.viewer.conftest import record, write_run

    if missing_reason():
        pytest.skip(f"browser tests skipped: {missing_reason()}")
    (tmp_path / "latin").mkdir()
    shutil.copy(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf",
                tmp_path / "latin")
    conf = tmp_path / "fonts.conf"
    conf.write_text(f'<?xml version="1.0"?><fontconfig><dir>{tmp_path / "latin"}</dir>'
                    f"<cachedir>{tmp_path / 'fc-cache'}</cachedir></fontconfig>",
                    encoding="utf-8")
    monkeypatch.setenv("FONTCONFIG_FILE", str(conf))
    run = write_run(tmp_path / "run", [record("s0", answer="王羲之", reference="顏真卿")])
    index = build([run], tmp_path / "site").index
    with chromium() as driver:
        _open(driver, index)
        assert driver.execute_script("return window.HE_TOFU") is True
        notice = driver.execute_script(
            "var n = document.getElementById('font-notice'); return n && n.textContent")
        assert notice and "fonts-noto-cjk" in notice
        _shot(driver, artifacts, "tofu-notice")
        _no_errors(driver)
