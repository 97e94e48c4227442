"""``heritage-eval view``: exit status of ``--serve`` on a signal, interrupted run folders,
no absolute build path in the published site, the ``--shard-size`` help."""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.cli.view_cmd import VIEW
from heritage_eval.core.rundir import RunSession
from heritage_eval.viewer import ViewerError, build
from heritage_eval.viewer.serve import make_server
from tests.viewer.conftest import _cli, cli, make_image, record, write_run


def _mark_running(folder: Path) -> None:
    """Write ``run.json`` as a run does when it starts (core.rundir, status "running")."""
    folder.mkdir(parents=True, exist_ok=True)
    RunSession(folder, "toy", {"model": "m1"}, partial=False, resumed=False) \
        .write_state("running")


# ---- 1. --serve ends with 128 + signal (docs/reference/conventions.md: 130 / 143) ----

@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_serve_exit_status_on_signal(tmp_path: Path, sig: signal.Signals) -> None:
    run = write_run(tmp_path / "run", [record("a")])
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.Popen([*_cli(), "view", str(run), "--serve", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:  # ends when the process ends (then the assert fails)
            seen.append(line)
            if line.startswith("serving "):
                break
        assert seen and seen[-1].startswith("serving "), "".join(seen)
        port = re.search(r"http://127\.0\.0\.1:(\d+)/", seen[-1])
        assert port is not None
        with urllib.request.urlopen(f"http://127.0.0.1:{port.group(1)}/index.html") as r:
            assert b"heritage-eval viewer" in r.read()  # it really serves
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + int(sig), (proc.returncode, err)  # 130 / 143
    assert "stopped" in out


# ---- 2. interrupted run folders (run.json status "running") ----

def test_interrupted_run_without_records_says_so(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _mark_running(run)
    with pytest.raises(ViewerError) as exc:
        build([run], tmp_path / "site")
    msg = str(exc.value)
    assert "interrupted" in msg and "resumes" in msg and "not a run folder" not in msg
    (run / "samples.jsonl").write_text("")  # started, nothing written yet: the same
    with pytest.raises(ViewerError, match="interrupted"):
        build([run], tmp_path / "site")
    proc = cli("view", run, "--out", tmp_path / "site", check=False)
    assert proc.returncode == 2
    assert "interrupted" in proc.stderr and "same heritage-eval command" in proc.stderr
    assert not (tmp_path / "site").exists()


def test_folder_without_run_json_is_still_not_a_run_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ViewerError, match="not a run folder"):
        build([tmp_path / "empty"], tmp_path / "site")


def test_interrupted_run_with_records_builds_and_warns(tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_run(run, [record("a"), record("b")])
    (run / "summary.json").unlink()  # an interrupted first run has no summary yet
    _mark_running(run)
    proc = cli("view", run, "--out", tmp_path / "site")
    warnings = [ln for ln in proc.stderr.splitlines() if ln.startswith("warning:")]
    assert "interrupted or is still running" in warnings[0]  # the first problem listed
    assert "incomplete" in warnings[0]
    assert proc.stdout.startswith("2 samples")
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    problems = html[html.index('class="problems"'):]
    assert "interrupted or is still running" in problems


def test_finished_run_has_no_interrupted_warning(tmp_path: Path) -> None:
    """The control of the test above: the same folder once the run has ended."""
    run = write_run(tmp_path / "run", [record("a")])
    RunSession(run, "toy", {}, partial=False, resumed=False).write_state("complete")
    info = build([run], tmp_path / "site")
    assert not [p for p in info.problems if "interrupted" in p]


# ---- 3. no absolute path of the build in the site's data or index.html ----

def test_site_holds_no_absolute_build_path(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    img = make_image(tmp_path / "imgs" / "a.png", (30, 20))
    make_image(tmp_path / "imgs" / "other.png", (30, 20))  # not linked by the run
    write_run(tmp_path / "runs" / "r1", [record("a", images=["a.png", "gone.png"],
                                                image_root=str(img.parent))])
    (tmp_path / "imgs" / "bad.png").write_bytes(b"not a png")
    write_run(tmp_path / "runs" / "r2", [record("b", images=["bad.png"],
                                                image_root=str(img.parent))])
    site = tmp_path / "out" / "site"
    # the run header shows the run folder as it was given (on purpose): given relative
    # here, so any absolute path in the site came from the build itself
    monkeypatch.chdir(tmp_path)
    info = build([Path("runs/r1"), Path("runs/r2")], site)
    # a missing and an unreadable image are named relative to the site (out/site)
    assert any("image missing: ../../imgs/gone.png: " in p for p in info.problems)
    assert any("image missing: ../../imgs/bad.png: unreadable image" in p
               for p in info.problems), info.problems
    files = [site / "index.html", *sorted((site / "data").rglob("*"))]
    texts = {p: p.read_text(encoding="utf-8") for p in files if p.is_file()}
    for base in {str(site.resolve()), str(site), str(tmp_path.resolve()), str(tmp_path)}:
        leaks = [p.name for p, text in texts.items() if base in text]
        assert not leaks, (base, leaks)
    # the link to the original is relative to the site: out/site -> ../../imgs/a.png
    assert any("../../imgs/a.png" in t for t in texts.values())

    # --serve resolves that relative link as the page sends it (app.js origUrl:
    # "/_up/<number of leading ..>/<rest>") and still sends only listed originals
    server = make_server(site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base_url = f"http://127.0.0.1:{server.server_address[1]}"
        with urllib.request.urlopen(f"{base_url}/_up/2/imgs/a.png") as resp:
            assert resp.read() == img.read_bytes()
        for refused in ("/_up/2/imgs/other.png", "/_up/1/imgs/a.png", "/_up/x/imgs/a.png",
                        "/_up/9999/imgs/a.png"):
            with pytest.raises(urllib.error.HTTPError):
                urllib.request.urlopen(base_url + refused)
    finally:
        server.shutdown()
        server.server_close()
    app = (site / "static" / "app.js").read_text(encoding="utf-8")
    assert "site_dir" not in app


# ---- 4. --shard-size help says what a small value costs ----

def test_shard_size_help_says_the_cost() -> None:
    p = argparse.ArgumentParser()
    VIEW.add_args(p)
    action = next(a for a in p._actions if "--shard-size" in a.option_strings)
    text = " ".join((action.help or "").split())
    assert "one after another" in text and "thousands of files load slowly" in text
    assert "keep the default" in text
    assert p.parse_args(["run", "--shard-size", "1"]).shard_size == 1  # nothing new refused


@pytest.mark.slow
def test_served_page_links_originals_without_absolute_path(browser: Any,
                                                            tmp_path: Path) -> None:
    """In headless Chromium over --serve: the page turns the relative link to the original
    into the server's ``/_up/`` address (app.js ``origUrl``), which sends the image."""
    from selenium.webdriver.support.ui import WebDriverWait

    img = make_image(tmp_path / "imgs" / "a.png", (30, 20))
    run = write_run(tmp_path / "runs" / "r1", [record("a", images=["a.png"],
                                                      image_root=str(img.parent))])
    site = build([run], tmp_path / "out" / "site").index.parent
    server = make_server(site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base_url = f"http://127.0.0.1:{server.server_address[1]}"
        browser.get("about:blank")
        browser.get(f"{base_url}/index.html#s=0")
        WebDriverWait(browser, 10).until(lambda d: d.execute_script(
            "return document.body.getAttribute('data-detail') === '0' && "
            "document.querySelector('#d-body a.orig') !== null"))
        href, full = browser.execute_script(
            "var a = document.querySelector('#d-body a.orig'); "
            "return [a.getAttribute('href'), "
            "document.querySelector('#d-body [data-full]').getAttribute('data-full')]")
        assert href == "/_up/2/imgs/a.png"  # out/site -> ../../imgs/a.png, by hand
        assert full == href  # a 30x20 image gets no zoom copy: it zooms into the original
        with urllib.request.urlopen(base_url + href) as resp:
            assert resp.read() == img.read_bytes()
    finally:
        server.shutdown()
        server.server_close()
