"""``--references-avoid-target-char`` (our addition to the paper's protocol): what it
changes in the questions, its default, and how it is recorded in run.json without making
older run folders "another configuration"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from heritage_eval.benchmarks.hcsu.discrimination import DiscriminationConfig, build_questions
from heritage_eval.benchmarks.hcsu.loader import load_hcsu
from heritage_eval.benchmarks.hcsu.sampling import same_character, select_targets
from heritage_eval.cli.main import main
from heritage_eval.core.types import stable_hash
from tests.hcsu.conftest import REAL

#: Two classes of one domain; the target 永 of class 甲 and class 乙's images 永 and 九.
FILES = {"甲-楷书": ["永_1", "和_1"], "乙-行书": ["永_1", "九_1"]}


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    root = tmp_path / "hcsu"
    records = []
    for style, stems in FILES.items():
        who, script = style.split("-")
        (root / "tie" / style).mkdir(parents=True)
        for stem in stems:
            Image.new("L", (32, 32), 255).save(root / "tie" / style / f"{stem}.png")
            records.append({"filename": f"{style}/{stem}.png", "char": stem[0],
                            "calligrapher": who, "script_type": script, "quality": "clear",
                            "description": f"style of {who}"})
    (root / "tie_annotations.json").write_text(json.dumps(records, ensure_ascii=False),
                                               encoding="utf-8")
    return root


def _reference_chars(root: Path, avoid: bool, seeds: range) -> set[str]:
    """Characters shown by class 乙's reference for the target 甲/永, over ``seeds``."""
    ds = load_hcsu(root)
    target = next(i for i in ds.images if i.id.endswith("甲-楷书/永_1"))
    chars = set()
    for seed in seeds:
        cfg = DiscriminationConfig(k=2, seed=seed, avoid_target_char=avoid)
        q = build_questions(ds, [target], cfg)[0].question
        assert q is not None and q.notes == ()
        ref = next(c.image for c in q.candidates if c.class_key.endswith("乙-行书"))
        chars.add(Path(ref).stem[0])
    return chars


def test_option_changes_the_references(tiny: Path) -> None:
    # On (default): 乙's reference for the target 永 is always its other character 九.
    assert _reference_chars(tiny, True, range(20)) == {"九"}
    # Off: drawn from both of 乙's images; over 20 seeds both appear (a seeded draw; the
    # chance that 20 fair draws all fall on one image is 2 / 2**20).
    assert _reference_chars(tiny, False, range(20)) == {"永", "九"}


def test_default_keeps_references_off_the_target_char_on_real_data() -> None:
    # The real sample shares 30 characters between classes; with the default no
    # reference shows its target's character unless a note says it had to.
    ds = load_hcsu(Path(REAL))
    cfg = DiscriminationConfig(k=2)
    assert cfg.avoid_target_char is True
    assert cfg.spec()["references_avoid_target_char"] is True
    for item in build_questions(ds, select_targets(ds, 90, 0), cfg):
        q = item.question
        assert q is not None
        by_path = {str(i.path): i.char for i in ds.images}
        same = [c for c in q.candidates if same_character(by_path[c.image], q.char)]
        assert len(same) == len(q.notes)


def _run(root: Path, out: Path, *extra: str) -> int:
    return main(["run", "hcsu-discrimination", "--data", str(root), "--model",
                 "baseline:image-similarity", "--k", "2", "--out", str(out), *extra])


def test_recorded_in_run_json_and_old_folders_resume(tiny: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    out = tmp_path / "run"
    assert _run(tiny, out) == 0
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["config"]["references_avoid_target_char"] is True
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["provenance"]["task"]["references_avoid_target_char"] is True
    # A folder written before the option existed (no key in its config) is the same
    # configuration while the option stays at its default ...
    del run["config"]["references_avoid_target_char"]
    run["config_hash"] = stable_hash(run["config"])
    (out / "run.json").write_text(json.dumps(run, ensure_ascii=False), encoding="utf-8")
    assert _run(tiny, out) == 0
    # ... and another configuration once it is turned off (exit 2, named).
    capsys.readouterr()
    assert _run(tiny, out, "--no-references-avoid-target-char") == 2
    err = capsys.readouterr().err
    assert "references_avoid_target_char" in err and "--resume" in err
    assert _run(tiny, tmp_path / "off", "--no-references-avoid-target-char") == 0
    off = json.loads((tmp_path / "off" / "run.json").read_text(encoding="utf-8"))
    assert off["config"]["references_avoid_target_char"] is False
