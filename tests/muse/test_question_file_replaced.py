"""``run muse`` with its question file re-read on each pass (``LAZY_FROM`` patched to 0):
the file replaced during the run by one with the same ids and line count but other
answers (as ``cp other.jsonl q.jsonl``) stops the run with one ``error:`` line naming the
file and advising a re-run, a non-zero exit, and a ``samples.jsonl`` (if any) of whole
JSON lines; running the same command again with ``--resume`` (as advised) completes.
Also: the reason given for a malformed question line says "at column", not "at at
column"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.benchmarks.muse import benchmark as muse_benchmark
from heritage_eval.benchmarks.muse import question_index
from heritage_eval.benchmarks.muse.question_reader import load_question_set
from heritage_eval.cli.main import main
from heritage_eval.core import engine
from heritage_eval.core.types import GenerationSettings, Message, Response
from tests.muse.streaming_data import HashEmbedder, ScriptedModel, write_file


def _other_answers(text: str) -> str:
    """The question file with every count answer n replaced by (n + 1) % 7 (same ids,
    same line count)."""
    out = []
    for line in text.splitlines(keepends=True):
        data = json.loads(line)
        for turn in data.get("turns", ()):
            turn["answer"] = (turn["answer"] + 1) % 7
        out.append(json.dumps(data) + "\n")
    return "".join(out)


class Rewriter(ScriptedModel):
    """:class:`ScriptedModel` that overwrites ``path`` in place with ``text`` at its
    ``at``-th request."""

    def __init__(self, path: Path, text: str, at: int) -> None:
        super().__init__("r")
        self.path, self.text, self.at, self.calls = path, text, at, 0

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        self.calls += 1
        if self.calls == self.at:
            self.path.write_text(self.text, encoding="utf-8")
        return await super().generate(messages, settings, payload)


def test_a_replaced_question_file_stops_the_run_with_one_clear_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    qfile = write_file(tmp_path, n=40, seed=7, kinds=("count",))
    original = qfile.read_text(encoding="utf-8")
    other = _other_answers(original)
    assert other.count("\n") == original.count("\n") and other != original
    monkeypatch.setattr(question_index, "LAZY_FROM", 0)
    monkeypatch.setattr(muse_benchmark, "create_embedder", lambda *a, **k: HashEmbedder())
    model = Rewriter(qfile, other, at=5)
    monkeypatch.setattr(engine, "backend_from_config", lambda config: model)
    out = tmp_path / "run"
    argv = ["run", "muse", "--questions", str(qfile), "--model", "baseline:random",
            "--concurrency", "1", "--out", str(out)]
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert code != 0 and model.calls >= 5
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, err
    assert errors[0].startswith("error: the data changed while running: ")
    assert str(qfile) in errors[0]
    assert "run the same command again with --resume" in errors[0]
    assert "Traceback" not in err
    samples = out / "samples.jsonl"
    if samples.exists():  # whatever was written is whole JSON lines
        for line in samples.read_text(encoding="utf-8").splitlines():
            json.loads(line)
    assert not (out / "summary.json").exists()
    # the same command again: the folder records the original file's SHA-256, so it is
    # refused as another configuration (exit 2, nothing changed) ...
    again = Rewriter(qfile, other, at=-1)  # the same answers, never rewrites
    monkeypatch.setattr(engine, "backend_from_config", lambda config: again)
    assert main(argv) == 2
    assert "another configuration" in capsys.readouterr().err
    # ... and with --resume, as the error line advises, it completes from the cache
    assert main([*argv, "--resume"]) == 0
    assert again.calls < 40  # the answers received before the stop were reused
    assert "Traceback" not in capsys.readouterr().err
    records = [json.loads(x) for x in samples.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 40
    refs = {json.loads(x)["id"]: json.loads(x)["turns"][0]["answer"]
            for x in other.splitlines()[1:]}
    # every record scored against the new file's answers (none from the old key)
    assert sorted(r["details"]["question_id"] for r in records) == sorted(refs)
    for rec in records:
        assert rec["reference"] == refs[rec["details"]["question_id"]], rec["id"]


def test_a_malformed_line_says_at_column_once(tmp_path: Path) -> None:
    qfile = write_file(tmp_path, n=3, seed=1, kinds=("count",))
    with open(qfile, "a", encoding="utf-8") as fh:
        # json.loads gives msg "Unterminated string starting at", colno 18 (1-based
        # column of the opening quote of "abc, counted by hand: `{"id": "q", "x": ` is
        # 17 characters)
        fh.write('{"id": "q", "x": "abc\n')
    qs = load_question_set(qfile)
    reasons = [str(b) for b in qs.bad]
    why = [r for r in reasons if "malformed JSON" in r]
    assert len(why) == 1, reasons
    assert "malformed JSON (Unterminated string starting at column 18)" in why[0]
    assert "at at" not in why[0]
