"""The ``hf:`` backend on a tiny randomly initialised LLaVA built by scripts/make_tiny_vlm.py.

Runs on CPU: batching (4 concurrent requests -> one generate call of 4, same answers as one
at a time), folder errors, the weights fingerprint in the identity, and the three
benchmarks end to end through the real CLI (every record scored or unparsed, batches > 1).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import shutil
import sqlite3
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import realdata

pytest.importorskip("torch")
pytest.importorskip("transformers")

import heritage_eval.models.hf_backend  # noqa: F401  (registers hf: where not built in)
from heritage_eval.cli.main import main
from heritage_eval.core.types import GenerationSettings, ImagePart, Message
from heritage_eval.models.base import BackendOptions, ModelSpecError, create_backend
from heritage_eval.models.hf_backend import HFBackend

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo"
MUSE_REAL = realdata("muse")  # skips without ../shared (fails under CI=true)
CPU = ["--model-option", "device=cpu", "--max-tokens", "8"]


def make_tiny_vlm_module() -> ModuleType:
    """``scripts/make_tiny_vlm.py`` imported as a module (``scripts/`` is no package)."""
    scripts = str(REPO / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    return importlib.import_module("make_tiny_vlm")


def build_tiny_vlm(base: Path, name: str = "tiny-vlm", seed: int = 0) -> Path:
    """The tiny model folder ``base/name`` (built once per pytest session)."""
    path = base / name
    if not (path / "model.safetensors").is_file():
        make_tiny_vlm_module().build(path, seed=seed)
    return path


@pytest.fixture(scope="session")
def tiny_vlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_vlm(tmp_path_factory.getbasetemp())


def _backend(path: Path, **extra: str) -> HFBackend:
    backend = create_backend(f"hf:{path}", BackendOptions(extra={"device": "cpu", **extra}))
    assert isinstance(backend, HFBackend)
    return backend


def _demo_images(n: int) -> list[Path]:
    return sorted((DEMO / "ancient_bench").glob("*/images/*.jpg"))[:n]


def test_missing_folder_or_weights_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelSpecError, match=r"not found: .*no-such-model.*never downloads"):
        create_backend(f"hf:{tmp_path / 'no-such-model'}")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelSpecError, match=r"no config\.json"):
        create_backend(f"hf:{tmp_path / 'empty'}")
    (tmp_path / "empty" / "config.json").write_text("{}")
    with pytest.raises(ModelSpecError, match=r"no weights in .*empty"):
        create_backend(f"hf:{tmp_path / 'empty'}")


def test_bad_options_are_refused(tiny_vlm: Path) -> None:
    with pytest.raises(ModelSpecError, match="dtype"):
        _backend(tiny_vlm, dtype="float8")
    with pytest.raises(ModelSpecError, match="batch_size"):
        _backend(tiny_vlm, batch_size="0")
    with pytest.raises(ModelSpecError, match="not understood"):
        _backend(tiny_vlm, temperature="1")


def test_a_model_that_cannot_load_answers_errors_naming_the_folder(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "no-such-architecture"}')
    (broken / "model.safetensors").write_bytes(b"\0" * 16)
    backend = _backend(broken)
    resp = asyncio.run(backend.generate([Message.user("hi")], GenerationSettings(max_tokens=4),
                                        {}))
    assert resp.text is None and resp.error is not None
    assert f"cannot load model {broken}" in resp.error


def test_identity_follows_the_weights_not_the_folder(tiny_vlm: Path, tmp_path: Path) -> None:
    same = _backend(tiny_vlm).identity()
    assert same["weights_sha256"] and same["config_sha256"]
    moved = tmp_path / "copy"
    shutil.copytree(tiny_vlm, moved)
    assert _backend(moved).identity() == same  # a copied folder keeps its cache
    other = build_tiny_vlm(tmp_path, "reseeded", seed=1)
    changed = _backend(other).identity()
    assert changed["weights_sha256"] != same["weights_sha256"]
    assert _backend(tiny_vlm, dtype="bfloat16").identity()["dtype"] == "bfloat16"


def test_concurrent_requests_are_batched_and_equal_one_at_a_time(tiny_vlm: Path) -> None:
    images = _demo_images(4)
    convs = [[Message.user(ImagePart(path=str(p)), f"Transcribe image {i}.")]
             for i, p in enumerate(images)]
    settings = GenerationSettings(max_tokens=8)

    async def run() -> tuple[list[Any], list[Any], list[int]]:
        backend = _backend(tiny_vlm, batch_size="4", wait_ms="200")
        together = await asyncio.gather(*(backend.generate(c, settings, {}) for c in convs))
        sizes = list(backend.batch_sizes)
        alone = [await backend.generate(c, settings, {}) for c in convs]
        await backend.aclose()
        return list(together), alone, sizes + backend.batch_sizes[len(sizes):]

    together, alone, sizes = asyncio.run(run())
    assert sizes == [4, 1, 1, 1, 1]
    assert [r.meta["batch_size"] for r in together] == [4, 4, 4, 4]
    assert [r.meta["batch_size"] for r in alone] == [1, 1, 1, 1]
    assert [r.text for r in together] == [r.text for r in alone]  # greedy: padding is inert
    for r in together:
        assert r.ok and r.text
        assert r.meta["finish_reason"] in ("stop", "length")
        assert r.usage.completion_tokens is not None and 1 <= r.usage.completion_tokens <= 8
        assert r.usage.prompt_tokens is not None and r.usage.prompt_tokens > 16
        assert r.meta["sent_image_sizes"] and r.meta["device"] == "cpu"


def test_multi_turn_history_and_unreadable_image(tiny_vlm: Path, tmp_path: Path) -> None:
    backend = _backend(tiny_vlm)
    image = ImagePart(path=str(_demo_images(1)[0]))
    history = [Message.system("Be brief."), Message.user(image, "What is this?"),
               Message.assistant("A stele."), Message.user("Which dynasty?")]
    resp = asyncio.run(backend.generate(history, GenerationSettings(max_tokens=4), {}))
    assert resp.ok
    from heritage_eval.core.images import ImageLoadError

    with pytest.raises(ImageLoadError):
        asyncio.run(backend.generate([Message.user(ImagePart(path=str(tmp_path / "x.png")))],
                                     GenerationSettings(max_tokens=4), {}))


# -- the three benchmarks through the CLI -------------------------------------------------


def _records(out: Path) -> list[dict[str, Any]]:
    lines = (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _batch_sizes(out: Path) -> list[int]:
    """``meta.batch_size`` of every cached response of the run (records omit meta)."""
    con = sqlite3.connect(out / "cache.sqlite")
    try:
        rows = con.execute("SELECT response FROM responses").fetchall()
    finally:
        con.close()
    return [int(json.loads(r[0])["meta"]["batch_size"]) for r in rows]


def _check_run(out: Path, n_min: int) -> None:
    records = _records(out)
    assert len(records) >= n_min
    states = {r["state"] for r in records}
    assert states <= {"scored", "unparsed"}, [r.get("error") for r in records]
    assert max(_batch_sizes(out)) > 1


@pytest.mark.slow
def test_ancient_bench_through_the_cli(tiny_vlm: Path, tmp_path: Path) -> None:
    out = tmp_path / "ab"
    code = main(["run", "ancient-bench", "--data", str(DEMO / "ancient_bench"),
                 "--categories", "seals", "bronze_rubbings", "--limit", "2",
                 "--model", f"hf:{tiny_vlm}", *CPU, "--out", str(out)])
    assert code == 0
    _check_run(out, 4)
    assert {r["groups"]["category"] for r in _records(out)} == {"seals", "bronze_rubbings"}


@pytest.mark.slow
def test_hcsu_discrimination_through_the_cli(tiny_vlm: Path, tmp_path: Path) -> None:
    out = tmp_path / "hcsu"
    code = main(["run", "hcsu-discrimination", "--data", str(DEMO / "hcsu"), "--k", "5",
                 "--limit", "2", "--model", f"hf:{tiny_vlm}", *CPU, "--out", str(out)])
    assert code in (0, 1)  # 1: nothing parsed (random weights), still no error record
    _check_run(out, 2)


@pytest.mark.slow
def test_muse_through_the_cli(tiny_vlm: Path, tmp_path: Path) -> None:
    questions = tmp_path / "questions.json"
    assert main(["muse", "generate", "--annotations", str(MUSE_REAL / "annotations.json"),
                 "--images", str(MUSE_REAL / "images"), "--out", str(questions),
                 "--seed", "0"]) == 0
    out = tmp_path / "muse"
    code = main(["run", "muse", "--questions", str(questions), "--limit", "1",
                 "--model", f"hf:{tiny_vlm}", *CPU, "--out", str(out)])
    assert code in (0, 1)
    _check_run(out, 4)
    assert any(len(r["turns"]) > 1 for r in _records(out))  # the multi-turn dialogue ran
