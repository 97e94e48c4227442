"""``export hf`` and its read-back under misuse: an --out on or around the source, shards
missing or corrupted, samples dropped, temporaries of killed runs, the
--allow-outside-paths advice of the loaders (also for ``export tei`` and ``stats``)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from heritage_eval.cli.main import main
from heritage_eval.curate.hf.read import HfReadError, materialise
from heritage_eval.curate.hf.tempdirs import STALE_AFTER_S, host_tag

ROOT = Path(__file__).resolve().parents[2]
DEMO_AB = ROOT / "data" / "demo" / "ancient_bench"
DEMO_HCSU = ROOT / "data" / "demo" / "hcsu"
DEMO_MUSE = ROOT / "data" / "demo" / "muse"


@pytest.fixture(autouse=True)
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    folder = tmp_path / "he_cache"
    monkeypatch.setenv("HERITAGE_EVAL_HF_CACHE", str(folder))
    return folder


def _export(*words: str) -> int:
    return main(["export", "hf", *words, "--no-progress"])


def _release(root: Path, media: tuple[str, ...] = ("seals", "calligraphys")) -> Path:
    """A 2-medium release copied from the demo (3 lines and images each)."""
    for medium in media:
        shutil.copytree(DEMO_AB / medium, root / medium)
    return root


def _snapshot(folder: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under ``folder``."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# ---- 1. --out must not replace the source ------------------------------------------

@pytest.mark.parametrize("where", ["source", "parent"])
def test_out_on_or_above_the_source_is_refused(tmp_path: Path, where: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    parent = tmp_path / "parent"
    src = _release(parent / "src2")
    (parent / "other.txt").write_text("keep me")
    before = _snapshot(parent)
    out = src if where == "source" else parent
    assert _export("ancient-bench", str(src), "--out", str(out), "--overwrite") == 2
    err = capsys.readouterr().err
    assert ("is the source" if where == "source" else "contains the source") in err
    assert _snapshot(parent) == before  # nothing touched: every file, same bytes
    assert not [p for p in [*tmp_path.iterdir(), *parent.iterdir()]
                if p.name.startswith(".")]  # no temp folder made either


def test_out_inside_the_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _release(tmp_path / "src")
    before = _snapshot(src)
    # replacing a non-empty folder inside the source (a medium) is refused ...
    assert _export("ancient-bench", str(src), "--out", str(src / "seals"),
                   "--overwrite") == 2
    assert "inside the source" in capsys.readouterr().err
    assert _snapshot(src) == before
    # ... a new folder inside it removes nothing of the source, so it is allowed
    assert _export("ancient-bench", str(src), "--out", str(src / "hf")) == 0
    assert {k: v for k, v in _snapshot(src).items() if not k.startswith("hf/")} == before


def test_muse_out_on_the_question_folder_is_refused(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    qfile = _questions(tmp_path / "mq" / "questions.jsonl")
    before = _snapshot(qfile.parent)
    assert _export("muse", str(qfile), "--out", str(qfile.parent), "--overwrite") == 2
    assert "contains the source" in capsys.readouterr().err
    assert _export("muse", str(qfile), "--out", str(qfile.parent / "questions_assets"),
                   "--overwrite") == 2  # the generated images' folder
    assert "inside the source" in capsys.readouterr().err
    assert _snapshot(qfile.parent) == before


def _questions(path: Path) -> Path:
    """A question file generated from the demo MUSE annotations (5 images)."""
    assert main(["muse", "generate", "--annotations", str(DEMO_MUSE / "annotations.json"),
                 "--images", str(DEMO_MUSE / "images"), "--out", str(path),
                 "--tasks", "jigsaw_puzzle", "object_count", "--no-progress"]) == 0
    return path


# ---- 2. read-back of an incomplete export ------------------------------------------

def test_missing_shard_of_a_series_is_named(tmp_path: Path, cache: Path) -> None:
    out = tmp_path / "hf"
    # 0.05 MiB shards: each ~50 kB demo image needs its own shard (3 per medium)
    assert _export("ancient-bench", str(_release(tmp_path / "src")), "--out", str(out),
                   "--max-shard-mb", "0.05") == 0
    seals = sorted((out / "data" / "seals").glob("*.parquet"))
    assert len(seals) >= 2
    n = len(seals)
    gone = f"data/seals/test-00001-of-{n:05d}.parquet"
    (out / gone).unlink()
    with pytest.raises(HfReadError, match=f"1 shard\\(s\\) missing: {gone}"):
        materialise(out, "ancient-bench")
    assert not cache.exists() or not any(cache.iterdir())  # nothing read back


def test_rows_missing_against_the_card_are_named(tmp_path: Path) -> None:
    out = tmp_path / "hf"
    assert _export("ancient-bench", str(_release(tmp_path / "src")), "--out", str(out)) == 0
    # a whole config's shards gone: no series is incomplete, the card's counts say so
    moved = tmp_path / "seals_shards"
    shutil.move(out / "data" / "seals", moved)
    # card: default 6 rows (3 + 3, the two demo conv.jsonl), seals 3
    with pytest.raises(HfReadError, match=r"config 'default': 3 row\(s\) in 1 shard\(s\), "
                                          r"the card says 6; config 'seals': 0 row\(s\)"):
        materialise(out, "ancient-bench")
    shutil.move(moved, out / "data" / "seals")
    # one row dropped from a shard that keeps its name
    shard = next((out / "data" / "seals").glob("*.parquet"))
    table = pq.read_table(shard)
    pq.write_table(pa.Table.from_pylist(table.to_pylist()[:2], schema=table.schema), shard)
    with pytest.raises(HfReadError, match=r"config 'seals': 2 row\(s\) in 1 shard\(s\), "
                                          r"the card says 3"):
        materialise(out, "ancient-bench")


def test_corrupted_shard_is_named(tmp_path: Path) -> None:
    out = tmp_path / "hf"
    assert _export("ancient-bench", str(_release(tmp_path / "src")), "--out", str(out)) == 0
    shard = next((out / "data" / "seals").glob("*.parquet"))
    data = bytearray(shard.read_bytes())
    data[4:260] = b"\xff" * 256  # the first page header (after the 'PAR1' magic); footer kept
    shard.write_bytes(bytes(data))
    with pytest.raises(HfReadError, match="corrupted parquet shard") as info:
        materialise(out, "ancient-bench")
    assert str(shard) in str(info.value)


def test_read_back_errors_name_the_export(tmp_path: Path) -> None:
    out = tmp_path / "hf"
    assert _export("ancient-bench", str(_release(tmp_path / "src")), "--out", str(out)) == 0
    shard = next((out / "data" / "seals").glob("*.parquet"))
    table = pq.read_table(shard)
    rows = table.to_pylist()
    rows[0]["image_name"] = "../x.jpg"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)
    with pytest.raises(HfReadError, match=f"^export {re.escape(str(out))}: row "
                                          "'seals/seals_000001'"):
        materialise(out, "ancient-bench")


# ---- 3. dropped samples -> exit 1 ----------------------------------------------------

def test_hcsu_with_a_malformed_annotation_file_exits_1(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    src = tmp_path / "hcsu"
    shutil.copytree(DEMO_HCSU, src)
    (src / "tie_annotations.json").write_text("[{\"filename\": ", encoding="utf-8")
    out = tmp_path / "hf"
    assert _export("hcsu", str(src), "--out", str(out)) == 1
    captured = capsys.readouterr()
    assert "tie_annotations.json" in captured.err and "problem(s)" in captured.err
    # 70 Bei records in data/demo/hcsu/bei_annotations.json: still written
    assert "wrote 70 rows" in captured.out
    assert sum(pq.ParquetFile(p).metadata.num_rows for p in out.glob("data/*/*.parquet")) == 70


def test_muse_with_a_missing_asset_exits_1(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    qfile = _questions(tmp_path / "mq" / "questions.jsonl")
    asset = sorted((qfile.parent / "questions_assets").rglob("*.png"))[0]
    asset.unlink()
    capsys.readouterr()
    out = tmp_path / "hf"
    assert _export("muse", str(qfile), "--out", str(out)) == 1
    captured = capsys.readouterr()
    assert asset.name in captured.err and "null image" in captured.err
    n_questions = len(qfile.read_text(encoding="utf-8").splitlines()) - 1  # minus header
    assert f"wrote {n_questions} rows" in captured.out


# ---- 5. temporaries of killed runs ---------------------------------------------------

def _killed_temp(parent: Path, name: str) -> Path:
    """The temp folder a process made with ``make_temp_dir`` before ``kill -9``."""
    code = ("import os, signal, sys; from pathlib import Path; "
            "from heritage_eval.curate.hf.tempdirs import make_temp_dir; "
            "p = make_temp_dir(Path(sys.argv[1]), sys.argv[2]); (p / 'part.parquet')"
            ".write_bytes(b'x'); print(p, flush=True); os.kill(os.getpid(), signal.SIGKILL)")
    proc = subprocess.run([sys.executable, "-c", code, str(parent), name],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == -9
    return Path(proc.stdout.strip())


def test_export_removes_a_killed_exports_temp_only(tmp_path: Path) -> None:
    dead = _killed_temp(tmp_path, "hf")
    live = tmp_path / f".hf.tmp-{host_tag()}-{os.getpid()}-live"  # this process: in use
    live.mkdir()
    old = tmp_path / ".hf.tmp-legacy"  # older naming, no owner: removed only when old
    old.mkdir()
    hour_ago = time.time() - STALE_AFTER_S - 60
    os.utime(old, (hour_ago, hour_ago))
    fresh = tmp_path / ".hf.tmp-fresh"
    fresh.mkdir()
    other = tmp_path / ".hfx.tmp-00000000-1-a"  # another --out's name
    other.mkdir()
    assert dead.is_dir() and dead.name.startswith(f".hf.tmp-{host_tag()}-")
    assert _export("ancient-bench", str(_release(tmp_path / "src")), "--out",
                   str(tmp_path / "hf")) == 0
    assert not dead.exists() and not old.exists()
    assert live.is_dir() and fresh.is_dir() and other.is_dir()


def test_read_back_removes_a_killed_read_backs_temp(tmp_path: Path, cache: Path) -> None:
    out = tmp_path / "hf"
    assert _export("ancient-bench", str(_release(tmp_path / "src")), "--out", str(out)) == 0
    cache.mkdir(parents=True, exist_ok=True)
    dead = _killed_temp(cache, "a" * 64)
    foreign = cache / f".{'b' * 64}.tmp-ffffffff-1-x"  # another host's: age unknown, kept
    foreign.mkdir()
    mine = cache / "notes.txt"  # not a temp name: never touched
    mine.write_text("x")
    dest = materialise(out, "ancient-bench")
    assert not dead.exists() and foreign.is_dir() and mine.is_file()
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        [dest.name, foreign.name, "notes.txt"])


# ---- 6. --allow-outside-paths on export hf, export tei, stats -------------------------

def _outside_release(tmp_path: Path) -> Path:
    root = tmp_path / "rel"
    (root / "seals").mkdir(parents=True)
    shutil.copyfile(DEMO_AB / "seals" / "images" / "seals_000001.jpg", tmp_path / "out.jpg")
    (root / "seals" / "conv.jsonl").write_text(
        json.dumps({"image": "../../out.jpg", "human_gt": "長樂"}) + "\n", encoding="utf-8")
    return root


def test_allow_outside_paths_is_accepted_where_advised(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    root = _outside_release(tmp_path)
    assert _export("ancient-bench", str(root), "--out", str(tmp_path / "a")) == 1
    assert "pass --allow-outside-paths" in capsys.readouterr().err  # the advice ...
    assert _export("ancient-bench", str(root), "--out", str(tmp_path / "b"),
                   "--allow-outside-paths") == 0  # ... works
    table = pq.read_table(next((tmp_path / "b" / "data" / "seals").glob("*.parquet")))
    assert table.column("image").to_pylist()[0]["bytes"] == (tmp_path / "out.jpg").read_bytes()
    assert main(["export", "tei", "--data", str(root), "--out", str(tmp_path / "t"),
                 "--no-progress", "--allow-outside-paths"]) == 0
    assert (tmp_path / "t" / "seals" / "out.xml").is_file()  # inside --out, not ../../
    assert not (tmp_path / "out.xml").exists()
    assert main(["stats", "ancient-bench", "--data", str(root), "--out", str(tmp_path / "s"),
                 "--no-figures", "--allow-outside-paths"]) == 0
    body = json.loads((tmp_path / "s" / "stats.json").read_text(encoding="utf-8"))
    assert body["counts"]["images"] == 1


def test_read_back_note_names_the_export_in_every_process(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from heritage_eval.curate.hf import read

    out = tmp_path / "hf"
    assert _export("ancient-bench", str(_release(tmp_path / "src")), "--out", str(out)) == 0
    capsys.readouterr()
    dest = materialise(out, "ancient-bench")
    note = f"note: {out} is a Hugging Face export; read back into {dest}"
    assert note in capsys.readouterr().err
    materialise(out, "ancient-bench")
    assert capsys.readouterr().err == ""  # once per process
    monkeypatch.setattr(read, "_NOTED", set())  # a later process: the copy exists already
    materialise(out, "ancient-bench")
    assert note in capsys.readouterr().err  # so errors naming the copy's files are traceable
