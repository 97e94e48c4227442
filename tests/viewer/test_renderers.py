"""Per-benchmark detail renderers: what they draw, and that odd records never crash them."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.viewer.images import ImageStore
from heritage_eval.viewer.renderers import RenderContext, render_sample, renderer_for
from heritage_eval.viewer.renderers import muse as muse_r
from tests.viewer.conftest import make_image, record


@pytest.fixture
def ctx(tmp_path: Path) -> RenderContext:
    for name in ("t.png", "a.png", "b.png", "art.jpg", "piece.png"):
        make_image(tmp_path / "img" / name, (100, 80))
    return RenderContext(ImageStore(tmp_path / "site"), str(tmp_path))


def _root(ctx: RenderContext) -> str:
    return str(Path(ctx.run_dir) / "img")


def test_ancient_bench_diff_cells(ctx: RenderContext) -> None:
    rec = record("ab1", benchmark="ancient-bench", answer="天地元黄宇", reference="天地\n玄黃",
                 scores={"ned_score": 0.4, "f1": 0.6}, images=["t.png"],
                 image_root=_root(ctx), details={"normalized_ground_truth": "天地玄黃",
                                                 "normalized_prediction": "天地元黄宇",
                                                 "insertions": 1, "substitutions": 2})
    html = render_sample(rec, ctx)
    cells = re.findall(r'<span class="dc (d-\w+)"[^>]*><i>(.*?)</i><i>(.*?)</i></span>', html)
    assert cells[:4] == [("d-eq", "天地", "天地"), ("d-sub", "玄", "元"), ("d-st", "黃", "黄"),
                         ("d-ins", "\u3000", "宇")]
    assert "character F1" in html and "0.600" in html and 'class="imgwrap zoomable"' in html


def test_ancient_bench_without_normalized_strings(ctx: RenderContext) -> None:
    rec = record("ab2", benchmark="ancient-bench", answer="山 水", reference="山川",
                 details={})
    html = render_sample(rec, ctx)
    assert '<span class="dc d-sub" title="substitution"><i>川</i><i>水</i></span>' in html


def _hcsu(ctx: RenderContext, **kw: Any) -> str:
    details = {"target_image": "t.png", "k": 2, "char": "不",
               "candidates": [{"label": "A", "class": "Bei/x", "image": "a.png",
                               "description": "bold strokes"},
                              {"label": "B", "class": "Bei/y", "image": "b.png",
                               "description": "thin strokes"}]}
    rec = record("h1", benchmark="hcsu-discrimination", answer="A", reference="B",
                 image_root=_root(ctx), details=details | kw, groups={"class": "Bei/y"})
    return render_sample(rec, ctx)


def test_hcsu_discrimination_chosen_and_correct(ctx: RenderContext) -> None:
    html = _hcsu(ctx)
    assert '<div class="cand is-chosen"><div class="cand-h"><b>A</b> Bei/x' in html
    assert '<div class="cand is-correct"><div class="cand-h"><b>B</b> Bei/y' in html
    assert "target 不" in html and html.count('class="imgwrap zoomable"') >= 3


def test_hcsu_description_judge(ctx: RenderContext) -> None:
    rec = record("h2", benchmark="hcsu-description", answer="A bold hand.",
                 reference="Expert text.", image_root=_root(ctx),
                 scores={"bertscore_x10": 6.5, "terminology": 7.0, "richness": None},
                 details={"target_image": "t.png", "judge_raw": "Terminology: 7 because …",
                          "shots": [{"class": "Bei/x", "image": "a.png", "char": "天",
                                     "description": "shot text"}]})
    html = render_sample(rec, ctx)
    assert "BERTScore-F1 ×10" in html and "6.500" in html and "7.000" in html
    assert "judge&#x27;s reply (rationale)" in html and "Terminology: 7 because" in html
    assert "Expert text." in html and "shot text" in html and "shot 1 天" in html


def test_muse_boxes_and_options(ctx: RenderContext) -> None:
    details = {"answer_format": "choice",
               "options": [{"label": "A", "text": None, "box": [0.1, 0.2, 0.3, 0.4],
                            "distractor_type": "correct"},
                           {"label": "B", "text": None, "box": [0.5, 0.5, 0.25, 0.25],
                            "distractor_type": "random_region"},
                           {"label": "C", "text": "None of the above", "box": None,
                            "distractor_type": "none"}],
               "params": {"person_box": [0.0, 0.0, 0.5, 1.0]},
               "metadata": {"true_box": [0.1, 0.2, 0.3, 0.4]}}  # same as A: drawn once
    rec = record("m1", benchmark="muse", answer="B", reference="A", details=details,
                 image_root=_root(ctx), images=["art.jpg"])
    rec.turns[0].images[0].role = "artwork"
    html = render_sample(rec, ctx)
    boxes = re.findall(r'<div class="box (\w+)" style="left:([\d.]+)%;top:([\d.]+)%;'
                       r'width:([\d.]+)%;height:([\d.]+)%"><span>(\w+)</span>', html)
    assert boxes == [("correct", "10.000", "20.000", "30.000", "40.000", "A"),
                     ("chosen", "50.000", "50.000", "25.000", "25.000", "B"),
                     ("param", "0.000", "0.000", "50.000", "100.000", "person")]
    # the meaning is shown, HTML-escaped ("true box's")
    assert "random_region" in html and escape(muse_r.DISTRACTORS["random_region"]) in html
    assert '<span class="tag correct">correct</span>' in html


def test_muse_jigsaw_side_by_side(ctx: RenderContext) -> None:
    details = {"answer_format": "choice",
               "options": [{"label": "A", "image": "piece.png", "distractor_type": "correct"},
                           {"label": "B", "image": "a.png",
                            "distractor_type": "merged_neighbor"}]}
    rec = record("m2", benchmark="muse", answer="B", reference="A", details=details,
                 image_root=_root(ctx), images=["t.png", "piece.png", "a.png"])
    html = render_sample(rec, ctx)
    assert 'class="jigsaw"' in html and "puzzle (grey hole)" in html
    assert "B · merged_neighbor ← chosen" in html


@pytest.mark.parametrize("benchmark", ["ancient-bench", "hcsu-discrimination",
                                       "hcsu-description", "muse", "unknown-bench"])
@pytest.mark.parametrize("details", [
    {}, {"candidates": "oops", "options": [1, None, {"box": "x"}], "shots": [None],
         "params": [1], "metadata": None, "normalized_ground_truth": 5, "dims": 3,
         "chance_floor": {"floor": None}}])
def test_renderers_survive_odd_records(ctx: RenderContext, benchmark: str,
                                       details: dict[str, Any]) -> None:
    rec = record("odd", benchmark=benchmark, answer={"x": [1]}, reference=None,
                 details=details, images=["missing.png"], image_root=_root(ctx))
    html = render_sample(rec, ctx)
    assert html.startswith("<article") and "renderer failed" not in html
    assert "image missing" in html


def test_failing_renderer_falls_back(ctx: RenderContext, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: Any) -> str:
        raise RuntimeError("bad shape")

    monkeypatch.setattr(renderer_for("muse"), "render", boom)
    html = render_sample(record("f", benchmark="muse", answer="A"), ctx)
    assert "muse renderer failed on this record (RuntimeError: bad shape)" in html
    assert "answer (parsed)" in html  # the generic view


def test_text_is_escaped(ctx: RenderContext) -> None:
    rec = record("<script>x</script>", answer="<img src=x onerror=alert(1)>")
    html = render_sample(rec, ctx)
    assert "<script>" not in html and "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


@pytest.mark.parametrize("benchmark", ["toy", "ancient-bench", "hcsu-discrimination", "muse"])
def test_flagged_conditions_show_in_the_head(ctx: RenderContext, benchmark: str) -> None:
    # issue 19: every flagged condition on a record shows in the viewer, for every
    # benchmark's renderer (they all share the generic head)
    rec = record("f1", benchmark=benchmark, state="unparsed", answer=None, response="",
                 details={"model_failure": "content_filter", "failure_policy": "wrong",
                          "refused": True, "truncated": True,
                          "parse_flags": ["several_blocks"],
                          "metric_flags": ["bertscore_truncated"]})
    html = render_sample(rec, ctx)
    chips = re.findall(r'<span class="flag" data-flag="([a-z_]+)">([^<]*)</span>', html)
    assert chips == [("model_failure", "model failure: content_filter (scored as wrong)"),
                     ("truncated", "truncated"), ("parse_flags", "answer: several_blocks"),
                     ("metric_flags", "metric: bertscore_truncated")]
    plain = render_sample(record("f2", benchmark=benchmark), ctx)
    assert 'class="flag"' not in plain


@pytest.mark.parametrize(("gt", "pred", "want"), [
    # by hand: "a" equal, "&" -> "<" substituted, "b<c" equal (escaped in every cell)
    ("a&b<c", "a<b<c", '<span class="dc d-eq"><i>a</i><i>a</i></span>'
                       '<span class="dc d-sub" title="substitution"><i>&amp;</i><i>&lt;</i>'
                       '</span><span class="dc d-eq"><i>b&lt;c</i><i>b&lt;c</i></span>'),
    # nothing to escape: the text as it is; 黃 -> 黄 is a simplified/traditional pair
    ("天地玄黃", "天地玄黄", '<span class="dc d-eq"><i>天地玄</i><i>天地玄</i></span>'
                         '<span class="dc d-st" title="substitution: simplified/traditional '
                         'form only"><i>黃</i><i>黄</i></span>')])
def test_ancient_bench_diff_escaping(ctx: RenderContext, gt: str, pred: str, want: str) -> None:
    rec = record("d", benchmark="ancient-bench", answer=pred, reference=gt,
                 details={"normalized_ground_truth": gt, "normalized_prediction": pred})
    html = render_sample(rec, ctx)
    start = html.index('<div class="diff" lang="zh">') + len('<div class="diff" lang="zh">')
    assert html[start:html.index('</div><div class="legend">')] == want
