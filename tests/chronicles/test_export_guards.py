"""``heritage-eval export chronicles-ocr`` refuses what it cannot export faithfully.

A ``--tag`` that is not a plain folder name (it would write outside OUT, or into a
folder that ``score`` / the official ``judge.py`` skip), a ``--tag`` without ``=`` or
naming no model of the run, and a run of another benchmark are errors (exit 2, one
``error:`` line, nothing written). A ``--data`` line nested too deeply and a
``samples.jsonl`` line that is not a record are skipped with one ``warning:`` line
naming ``file:line`` (as ``heritage-eval view`` skips a bad record line).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("chronicles_ocr")

from chronicles_ocr.export import check_tag, export_results, parse_tags

import heritage_eval as he

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEMO = REPO / "plugins" / "chronicles-ocr" / "src" / "chronicles_ocr" / "demo"
PRED = HERE / "fixtures" / "predictions"
CLI = Path(sys.executable).with_name("heritage-eval")
TRACEBACK = "Traceback (most recent call last)"


def export(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLI), "export", "chronicles-ocr", *args],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "run"
    he.score("chronicles-ocr", data=str(DEMO), predictions=str(PRED), models=["perfect"],
             out=str(out))
    return out


@pytest.mark.parametrize("tag", ["../../escape", "../x", "a/b", "a\\b", "/abs", "..", ".",
                                 ".hidden", "", "c:x", "tab\there"])
def test_a_tag_that_is_not_a_plain_folder_name_is_refused(run_dir: Path, tmp_path: Path,
                                                          tag: str) -> None:
    out = tmp_path / "deep" / "er" / "out"
    done = export(str(run_dir), str(out), "--tag", f"perfect={tag}")
    assert done.returncode == 2 and "not a plain folder name" in done.stderr
    assert TRACEBACK not in done.stderr
    assert not (tmp_path / "deep").exists() and not (tmp_path / "escape").exists()
    with pytest.raises(ValueError, match="not a plain folder name"):
        check_tag(tag)


@pytest.mark.parametrize(("value", "words"), [
    ("bad", "expected MODEL=TAG"), ("=x", "expected MODEL=TAG"),
    ("nope=x", "no model 'nope'")])
def test_a_tag_without_model_is_refused(run_dir: Path, tmp_path: Path, value: str,
                                        words: str) -> None:
    done = export(str(run_dir), str(tmp_path / "out"), "--tag", value)
    assert done.returncode == 2 and words in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()


def test_a_plain_tag_is_used(run_dir: Path, tmp_path: Path) -> None:
    done = export(str(run_dir), str(tmp_path / "out"), "--tag", "perfect=my-model_1.0")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "my-model_1.0" / "results.jsonl").is_file()
    assert parse_tags(["openai:qwen=q", "m=a=b"]) == {"openai:qwen": "q", "m": "a=b"}


def test_a_run_of_another_benchmark_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "hcsu"
    done = subprocess.run([str(CLI), "run", "hcsu-discrimination", "--data",
                           str(REPO / "data" / "demo" / "hcsu"), "--model", "baseline:random",
                           "--k", "2", "--limit", "1", "--out", str(other)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    done = export(str(other), str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr
    assert "is a run of hcsu-discrimination, not chronicles-ocr" in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_deeply_nested_data_line_is_a_warning(run_dir: Path, tmp_path: Path) -> None:
    data = tmp_path / "Chronicles_OCR.jsonl"
    lines = (DEMO / "Chronicles_OCR.jsonl").read_text(encoding="utf-8").splitlines()
    data.write_text("[" * 100_000 + "]" * 100_000 + "\n" + "\n".join(lines) + "\n",
                    encoding="utf-8")
    done = export(str(run_dir), str(tmp_path / "out"), "--data", str(data))
    assert done.returncode == 0, done.stderr
    assert TRACEBACK not in done.stderr
    warnings = [x for x in done.stderr.splitlines() if x.startswith("warning:")]
    assert warnings == [f"warning: {data}:1: skipped: not valid JSON (nested too deeply)"]
    first = json.loads((tmp_path / "out" / "perfect" / "results.jsonl")
                       .read_text(encoding="utf-8").splitlines()[0])
    assert "annotation" in first  # the other rows' fields are still copied


def test_a_garbage_record_line_is_one_warning(run_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "run"
    broken.mkdir()
    lines = (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    lines[1] = '{"schema": "heritage-eval/sample/1", "id": 5}'
    lines[2] = "{not json"
    (broken / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = export(str(broken), str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("\n") == 2 and "pydantic" not in done.stderr
    assert f"warning: {broken / 'samples.jsonl'}:2: skipped: not a sample record" in \
        done.stderr
    assert f"warning: {broken / 'samples.jsonl'}:3: skipped: not valid JSON" in done.stderr
    notes: list[str] = []
    written = export_results(broken, tmp_path / "api", notes=notes)
    assert list(written) == ["perfect"] and len(notes) == 2
