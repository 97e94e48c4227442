"""``he.compare`` on two demo runs (HCSU discrimination, image-similarity vs random):
the notebook views stay small and ``to_pandas`` holds each run's summary.json numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import heritage_eval as he


def test_demo_comparison(hcsu_run: Path, hcsu_random_run: Path) -> None:
    comp = he.compare([hcsu_run, he.load_run(hcsu_random_run)])
    text = repr(comp)
    assert text.startswith("<Comparison hcsu-discrimination: ref baseline:image-similarity")
    assert len(text) <= 200 and "\n" not in text and "2 models" in text
    models = comp.to_pandas()
    assert models["model_spec"].tolist() == ["baseline:image-similarity", "baseline:random"]
    assert comp.sample_set is not None and comp.sample_set.same  # the runs' own numbers
    for (_, row), run in zip(models.iterrows(), (hcsu_run, hcsu_random_run), strict=True):
        summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
        est = summary["models"][row["model_spec"]]["metrics"]["accuracy"]
        assert (row["accuracy"], row["accuracy_ci_low"], row["accuracy_ci_high"],
                row["accuracy_n"], row["accuracy_flags"]) == (
            est["value"], est["ci_low"], est["ci_high"], est["n"], ";".join(est["flags"]))
    (paired,) = comp.to_pandas("paired").to_dict("records")
    # the macro difference on the same records is the difference of the macro means
    assert abs(paired["difference"] - (models["accuracy"][1] - models["accuracy"][0])) < 1e-12
    page = comp._repr_html_()
    assert len(page) < 15_000 and page.count("baseline:random") >= 2


def test_the_out_folder_rule_holds_in_python(hcsu_run: Path, hcsu_random_run: Path,
                                             tmp_path: Path) -> None:
    # guards against: the Python API replacing a user's files the command line refuses to
    out = tmp_path / "mine"
    out.mkdir()
    (out / "compare.md").write_text("my notes\n", encoding="utf-8")
    with pytest.raises(he.OptionsError, match="not empty"):
        he.compare([hcsu_run, hcsu_random_run], out=out)
    assert (out / "compare.md").read_text(encoding="utf-8") == "my notes\n"  # untouched
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    with pytest.raises(he.OptionsError, match="is not a folder"):
        he.compare([hcsu_run, hcsu_random_run], out=a_file)
    he.compare([hcsu_run, hcsu_random_run], out=out, overwrite=True)
    assert (out / "compare.json").is_file() and (out / "compare.md").read_text(
        encoding="utf-8") != "my notes\n"
    he.compare([hcsu_run, hcsu_random_run], out=out)  # an earlier comparison: replaced
