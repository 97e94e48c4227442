"""Site generation from hand-made runs: data pages, index, bad input, CLI, server."""

from __future__ import annotations

import argparse
import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from heritage_eval.cli.view_cmd import VIEW
from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.viewer import ViewerError, build, build_site
from heritage_eval.viewer import pages as pages_mod
from heritage_eval.viewer import site as site_mod
from heritage_eval.viewer.serve import make_server
from tests.viewer.conftest import make_image, record, write_run
from tests.viewer.index_reader import read_index


def _page(path: Path) -> tuple[str, list[str]]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("HE_PAGE(") and text.rstrip().endswith(");")
    name, items = json.loads("[" + text[len("HE_PAGE("):text.rstrip().rindex(")")] + "]")
    return name, items


def test_pages_index_and_thumbnails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pages_mod, "PAGE_SIZE", 2)
    img = make_image(tmp_path / "data" / "a.png", (640, 480))
    recs = [record(f"s{i}", scores={"acc": float(i % 2)}, groups={"medium": "Seal" if i < 3
                                                                  else "Bronze"},
                   images=["a.png"], image_root=str(img.parent), answer=f"ans{i}")
            for i in range(5)]
    run = write_run(tmp_path / "run", recs, group_keys=["medium"])
    info = build([run], tmp_path / "site")
    site = tmp_path / "site"
    assert info.index == site / "index.html" and info.n_samples == 5
    assert sorted(p.name for p in (site / "data").glob("*.js")) == [
        "index-0000.js", "index.js", "r0-p1.js", "r0-p2.js", "r0-p3.js", "search-0000.js"]
    assert [len(_page(site / "data" / f"r0-p{i}.js")[1]) for i in (1, 2, 3)] == [2, 2, 1]
    assert _page(site / "data" / "r0-p2.js")[0] == "r0-p2"
    ix = read_index(site)
    cols = ix["cols"]
    assert ix["n"] == 5 and cols["id"] == ["s0", "s1", "s2", "s3", "s4"]
    assert ix["groups"] == {"medium": ["Seal", "Bronze"]} and cols["g"]["medium"] == [0, 0, 0, 1, 1]
    assert cols["s"]["acc"] == [0.0, 1.0, 0.0, 1.0, 0.0] and cols["st"] == [0] * 5
    assert cols["a"] == ["ans0", "ans1", "ans2", "ans3", "ans4"]
    assert ix["runs"] == [{"name": "run", "benchmark": "toy", "models": ["m1"], "n": 5,
                           "start": 0, "refused": None}]
    # one image, one thumbnail, shared by every sample; never base64 in the data
    assert len(set(cols["th"])) == 1 and (site / "thumbs" / f"{cols['th'][0]}.jpg").is_file()
    assert info.made == 1
    for f in (site / "data").glob("*.js"):
        assert "base64" not in f.read_text(encoding="utf-8")
    html = (site / "index.html").read_text(encoding="utf-8")
    assert 'src="data/index.js"' in html and 'src="static/app.js"' in html
    assert "http://" not in html and "https://" not in html  # no CDN
    assert (site / "static" / "app.js").is_file() and (site / "static" / "style.css").is_file()
    # the site's one script is the package's parts in order (helpers before their use)
    parts = [(Path(site_mod.__file__).parent / "static" / name).read_bytes()
             for name in site_mod.APP_PARTS]
    assert (site / "static" / "app.js").read_bytes() == b"\n".join(parts)
    assert site_mod.APP_PARTS[-1] == "app.js"
    # the original is linked by a path relative to the site
    _, items = _page(site / "data" / "r0-p1.js")
    assert 'href="../data/a.png"' in items[0]
    # re-building reuses the thumbnail
    assert build([run], site).reused == 1


def test_header_metrics_partial_provenance(tmp_path: Path) -> None:
    recs = [record(f"s{i}", scores={"acc": v}, groups={"medium": m})
            for i, (v, m) in enumerate([(1.0, "Seal"), (0.0, "Seal"), (1.0, "Bronze")])]
    recs.append(record("s3", state="unparsed", scores={"acc": 0.0}, answer=None,
                       groups={"medium": "Bronze"}))
    run = write_run(tmp_path / "run", recs, group_keys=["medium"], partial=True,
                    metrics=[MetricSpec("acc", "Accuracy", scale=100.0, decimals=1)])
    make_image(run / "figures" / "plot.png", (300, 200))
    html = build_site([run], tmp_path / "site").read_text(encoding="utf-8")
    assert ">PARTIAL<" in html and "Accuracy" in html
    assert "<b>50.0</b>" in html  # 2 of 4 answered correct, scale 100, 1 decimal
    assert "by medium (2)" in html and "Seal" in html and "Bronze" in html
    assert "abc123" in html and "0.0.test" in html  # prompt hash, package version
    assert "st-unparsed" in html and "invalid rate" in html
    assert 'src="plots/r0/00-plot.png"' in html
    assert (tmp_path / "site" / "plots" / "r0" / "00-plot.png").is_file()


def test_bad_input_still_builds(tmp_path: Path) -> None:
    good = record("ok", images=["gone.jpg"], image_root=str(tmp_path / "imgs"))
    run = write_run(tmp_path / "bad", [good], extra_lines=['{"schema": "heritage-eval/sa'])
    other = tmp_path / "future"
    other.mkdir()
    line = json.loads(record("x").to_json_line()) | {"schema": "heritage-eval/sample/9"}
    (other / "samples.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    info = build([run, other], tmp_path / "site")
    html = info.index.read_text(encoding="utf-8")
    assert info.n_samples == 1
    assert any("samples.jsonl:2: skipped" in p for p in info.problems)
    assert any("image missing" in p and "gone.jpg" in p for p in info.problems)
    assert "heritage-eval/sample/9" in html and "samples not shown" in html
    assert "summary.json: missing" in html  # the second folder has no summary
    assert "problems (" in html and "samples.jsonl:2: skipped" in html
    _, items = _page(tmp_path / "site" / "data" / "r0-p1.js")
    assert "image missing" in items[0] and "gone.jpg" in items[0] and "<img" not in items[0]
    ix = read_index(tmp_path / "site")
    assert ix["cols"]["th"] == ["!"] and ix["runs"][1]["refused"]


def test_not_a_run_folder(tmp_path: Path) -> None:
    with pytest.raises(ViewerError, match="not a run folder"):
        build([tmp_path], tmp_path / "site")
    with pytest.raises(ViewerError, match="does not exist"):
        build([tmp_path / "nope"], tmp_path / "site")
    with pytest.raises(ViewerError):
        build([], tmp_path / "site")


def test_disagreement_flags() -> None:
    from heritage_eval.viewer.compare import Disagreements, question_key

    recs = [(0, record("q1", model="a", scores={"acc": 1.0})),
            (0, record("q2", model="a", scores={"acc": 1.0})),
            (0, record("q3", model="a", scores={"ned": 0.50})),
            (0, record("q4", model="a", scores={"ned": 0.50})),
            (1, record("q1", model="b", scores={"acc": 0.0})),
            (1, record("q2", model="b", scores={"acc": 1.0})),
            (1, record("q3", model="b", scores={"ned": 0.45})),
            (1, record("q4", model="b", scores={"ned": 0.35})),
            (1, record("q5", model="b"))]
    d = Disagreements()
    for run, r in recs:
        d.add(question_key(r.benchmark, r.id), run, r.model, r.state.value, r.scores)
    # q1: 0/1 metric differs; q2 same; q3 differs by 0.05 < 0.1; q4 by 0.15; q5 alone
    assert [int(d.differs(question_key(r.benchmark, r.id))) for _, r in recs] == [
        1, 0, 0, 1, 1, 0, 0, 1, 0]


def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    VIEW.add_args(p)
    return p.parse_args(argv)


def test_cli_view(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_run(tmp_path / "r1", [record("a")])
    run2 = write_run(tmp_path / "r2", [record("a", model="m2", scores={"acc": 0.0})])
    assert VIEW.handler(_args(str(run))) == 0
    assert (run / "viewer" / "index.html").is_file()
    assert "open file://" in capsys.readouterr().out
    assert VIEW.handler(_args(str(run), str(run2))) == 2
    assert "--out DIR is required" in capsys.readouterr().err
    assert VIEW.handler(_args(str(run), str(run2), "--out", str(tmp_path / "both"))) == 0
    ix = read_index(tmp_path / "both")
    assert ix["compare"] is True and ix["cols"]["dis"] == [1, 1]
    assert VIEW.handler(_args(str(tmp_path / "nope"))) == 2
    assert VIEW.name == "view" and "static HTML" in VIEW.help


def test_cli_view_processes_give_the_same_site(tmp_path: Path) -> None:
    # --processes N renders in N worker processes; the data pages must be the same bytes
    # as rendering here (--processes 0); index.js differs only in the site folder's path
    run = write_run(tmp_path / "r", [record(f"s{i}", scores={"acc": i % 2}) for i in range(40)])
    for n in ("0", "2"):
        assert VIEW.handler(_args(str(run), "--out", str(tmp_path / f"site{n}"),
                                  "--processes", n)) == 0
    data0, data2 = tmp_path / "site0" / "data", tmp_path / "site2" / "data"
    names = sorted(p.name for p in data0.iterdir())
    assert names == sorted(p.name for p in data2.iterdir())
    for name in names:
        a, b = (data0 / name).read_text(), (data2 / name).read_text()
        assert a.replace(str(tmp_path / "site0"), "X") == b.replace(str(tmp_path / "site2"),
                                                                    "X"), name
    with pytest.raises(SystemExit):
        _args(str(run), "--processes", "-1")


def test_serve_loopback_and_allowlist(tmp_path: Path) -> None:
    img = make_image(tmp_path / "imgs" / "a.png", (30, 20))
    secret = tmp_path / "imgs" / "secret.txt"
    secret.write_text("no")
    run = write_run(tmp_path / "run", [record("a", images=["a.png"],
                                              image_root=str(img.parent))])
    site = build_site([run], tmp_path / "site").parent
    server = make_server(site, 0)
    host, port = server.server_address[:2]
    assert host == "127.0.0.1"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{port}"
        with urllib.request.urlopen(f"{base}/index.html") as resp:
            assert b"heritage-eval viewer" in resp.read()
        with urllib.request.urlopen(f"{base}/_fs{img.resolve()}") as resp:
            assert resp.read() == img.read_bytes()
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"{base}/_fs{secret.resolve()}")
    finally:
        server.shutdown()
        server.server_close()


def test_index_has_short_reference(tmp_path: Path) -> None:
    long_ref = "x" * 100
    recs = [record("s0", answer="A", reference="B"),
            record("s1", answer=None, response="said  C\n", reference={"label": "C"}),
            record("s2", answer="A", reference=long_ref),
            record("s3", answer="A", reference=None)]
    run = write_run(tmp_path / "run", recs)
    build([run], tmp_path / "site")
    cols = read_index(tmp_path / "site")["cols"]
    n = pages_mod.SHORT_ANSWER
    # by hand: a str as is, a dict as compact JSON, a long text cut to n-1 chars + "…",
    # no reference empty; the answer column falls back to the response on one line
    assert cols["ref"] == ["B", '{"label": "C"}', "x" * (n - 1) + "…", ""]
    assert cols["a"] == ["A", "said C", "A", "A"]
    assert len(cols["ref"][2]) == n


def _cjk_by_name(ch: str) -> bool:
    import unicodedata

    name = unicodedata.name(ch, "")
    return name.startswith(("CJK ", "IDEOGRAPHIC ", "HIRAGANA ", "KATAKANA ", "HANGUL ",
                            "BOPOMOFO ", "KANBUN ")) and name != "IDEOGRAPHIC SPACE"


def test_has_cjk_against_unicode_names() -> None:
    from heritage_eval.viewer.site import has_cjk

    # exhaustive over planes 0-3, against the Unicode character names (an independent
    # source): every character named CJK, ideographic, kana, bopomofo, kanbun or Hangul is
    # CJK (the ideographic space aside),
    # and nothing below U+1100 (Latin, Greek, Cyrillic, Arabic, Indic …) is
    for cp in range(0x40000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        if _cjk_by_name(ch):
            assert has_cjk([ch]), hex(cp)
        elif cp < 0x1100:
            assert not has_cjk([ch]), hex(cp)
    assert not has_cjk(["\u3000", "plain text", ""]) and has_cjk(["abc", "a漢"])


@pytest.mark.parametrize(("text", "family", "shown"), [
    ("王羲之", None, True), ("王羲之", "Noto Sans CJK SC", False), ("plain", None, False)])
def test_missing_cjk_font_notice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 text: str, family: str | None, shown: bool) -> None:
    from heritage_eval.report import fonts

    monkeypatch.setattr(fonts, "cjk_family", lambda: family)
    run = write_run(tmp_path / "run", [record("s0", answer=text, reference=text)])
    html = build_site([run], tmp_path / "site").read_text(encoding="utf-8")
    ix = read_index(tmp_path / "site")
    assert ('id="font-notice"' in html) is shown and ix["cjk_notice"] is shown
    assert ix["cjk"] is (text != "plain")
    if shown:
        assert "fonts-noto-cjk" in html and html.index("font-notice") < html.index("<main>")
