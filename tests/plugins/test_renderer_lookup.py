"""How the viewer finds a plug-in's renderer (``renderer_for``): built-ins first, then
the renderer the plug-in declared (``"module:function"`` or a module with ``render``),
then the generic one; broken declarations fall back with a warning or a note."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from PIL import Image

from heritage_eval.core import plugins
from heritage_eval.core.record import ImageRef, ResponseRecord, SampleRecord, TurnRecord
from heritage_eval.core.types import Outcome
from heritage_eval.viewer.images import ImageStore
from heritage_eval.viewer.renderers import (
    PluginRenderer,
    RenderContext,
    _plugin_renderer,
    render_sample,
    renderer_for,
)
from heritage_eval.viewer.renderers import generic as generic_r
from heritage_eval.viewer.renderers import muse as muse_r
from tests.plugins import renderer_stub

STUB = "tests.plugins.renderer_stub"


@pytest.fixture
def ctx(tmp_path: Path) -> RenderContext:
    Image.new("L", (40, 30), 200).save(tmp_path / "g.png")
    return RenderContext(ImageStore(tmp_path / "site"), str(tmp_path))


Declare = Callable[[str, str], None]


@pytest.fixture
def declare(monkeypatch: pytest.MonkeyPatch) -> Iterator[Declare]:
    """``declare(benchmark, target)``: a renderer declared as a plug-in declares it."""
    plugins.load_all()
    _plugin_renderer.cache_clear()

    def _declare(benchmark: str, target: str) -> None:
        monkeypatch.setitem(plugins._STATE.renderers, benchmark, target)

    yield _declare
    _plugin_renderer.cache_clear()


def record(benchmark: str, answer: str = "<人>") -> SampleRecord:
    turn = TurnRecord(prompt="which?", images=[ImageRef(path="g.png", role="glyph")],
                      response=ResponseRecord(text=answer))
    return SampleRecord(schema="heritage-eval/sample/1", id="s1", benchmark=benchmark,
                        model="m", state=Outcome.SCORED, scores={"accuracy": 1.0}, turns=[turn],
                        answer=answer, reference="人")


def test_function_target(declare: Declare, ctx: RenderContext) -> None:
    declare("stub-bench", f"{STUB}:render")
    found = renderer_for("stub-bench")
    assert found == PluginRenderer(f"{STUB}:render", renderer_stub.render)
    html = render_sample(record("stub-bench"), ctx)
    assert '<p class="stub">&lt;人&gt;</p>' in html  # escaped through ctx.escape
    assert 'alt="glyph"' in html and "40×30" in html  # ctx.figure: the site's image
    assert html.startswith('<article class="sample" data-bench="stub-bench">')


def test_module_target(declare: Declare) -> None:
    declare("stub-bench", STUB)
    assert renderer_for("stub-bench") is renderer_stub


def test_built_in_renderer_wins(declare: Declare) -> None:
    declare("muse", f"{STUB}:render")
    assert renderer_for("muse") is muse_r


def test_undeclared_benchmark_gets_the_generic_renderer() -> None:
    assert renderer_for("no-such-benchmark-declared") is generic_r


@pytest.mark.parametrize("target, problem", [
    ("tests.plugins.no_such_module:render", "cannot be imported (ModuleNotFoundError"),
    (f"{STUB}:NOT_CALLABLE", "is neither a function nor a module with render"),
    ("tests.plugins.conftest", "is neither a function nor a module with render"),
])
def test_unusable_target_warns_once_and_uses_generic(
        declare: Declare, ctx: RenderContext, capsys: pytest.CaptureFixture[str], target: str,
        problem: str) -> None:
    declare("stub-bench", target)
    first = renderer_for("stub-bench")
    html = render_sample(record("stub-bench"), ctx)
    assert isinstance(first, ModuleType) and first is generic_r
    assert "answer (parsed)" in html
    err = capsys.readouterr().err
    assert err.count(f"warning: viewer renderer {target!r} {problem}") == 1


def test_raising_renderer_gets_generic_view_with_escaped_note(
        declare: Declare, ctx: RenderContext) -> None:
    declare("stub-bench", f"{STUB}:broken")
    html = render_sample(record("stub-bench"), ctx)
    assert (f"the {STUB}:broken renderer failed on this record (ValueError: "
            "odd &lt;details&gt;); generic view shown") in html
    assert "answer (parsed)" in html


def test_generic_helper_is_the_generic_part(ctx: RenderContext) -> None:
    rec = record("stub-bench")
    assert ctx.generic(rec) == generic_r.render(rec, ctx)
