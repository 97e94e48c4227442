"""Issue 22, "no traceback, ever": every command fed hostile inputs.

The commands are read from the parser itself (``build_parser(None)``: every sub-command
of ``run``, ``score``, the group commands and the platform commands), and each one's
argument vectors are generated from its own argparse actions
(:mod:`tests.hardening.hostile_argv`). Each command gets each kind at least once: every
path kind — a missing file, a folder where a file is expected (or the reverse), a FIFO,
an empty file, random bytes (invalid UTF-8), a name with a lone surrogate and odd
characters, a symlink loop — on one of its path options or positionals (rotated, so
that the kinds spread over them); two of ``nan``, ``-1``, ``1e999``, ``""`` and ``٣`` on
its numeric options (every value is drawn for many commands); an unknown value for a
choice; a required option left out; and one call with plausible values (demo data,
offline baselines). Each call is a fresh ``python -m heritage_eval.cli.main`` process in
its own sandbox (home, caches and temporary files inside it, offline) with a time limit
(:mod:`tests.hardening.hostile_run`), and must:

- exit with status 0, 1 or 2 (2, a usage error, with a message on stderr; 1 with a
  message on stderr or stdout, where ``validate`` prints its findings);
- never print a Python traceback;
- never hang (the FIFO above all: no call may block on it);
- write nothing outside the outputs it was given (``--out``, ``dst``, ``--json``,
  ``--extract-to``, ``--cache``, with their missing parents and ``NAME_…`` companions)
  and the cache folder, and never change the shared inputs (the demo data, the small
  run folders made for the base calls).

The cases are drawn with a fixed seed (:data:`SEED`); the calls that once misbehaved
are kept in :data:`FOUND` whatever the draw. The ``chronicles-ocr`` plug-in's commands
are left to that plug-in's own tests. The commands in :data:`SLOW` run whole pipelines
in most calls and are marked ``slow``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from heritage_eval.cli.main import build_parser
from tests.hardening.hostile_argv import (
    NUMBER_VALUES,
    NUMBERS_PER_COMMAND,
    PATH_KINDS,
    Case,
    Goods,
    leaf_commands,
    materialise,
    plan_cases,
    slots,
)
from tests.hardening.hostile_run import Outcome, iter_labels, run_case, sandbox_env, tree

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo"
SEED = 22
#: parallel calls (the machine has two cores)
WORKERS = 2
#: commands of plug-ins that are tested on their own
SKIPPED = ("chronicles-ocr",)

COMMANDS = [(w, p) for w, p in leaf_commands(build_parser(None))
            if not any(s in w for s in SKIPPED)]
PARSERS = {w: p for w, p in COMMANDS}
#: commands whose calls run a whole pipeline or import a heavy stack (seconds each)
SLOW = {("muse", "analyze"), ("muse", "generate"), ("hcsu", "shot-sweep"), ("run", "muse"),
        ("run", "hcsu-description"), ("hcsu", "robustness"), ("hcsu", "ablation"),
        ("hcsu", "k-sweep")}
#: the calls this test found misbehaving, kept whatever the seed draws: (command, slot,
#: kind) -> what they did before the fix
FOUND = {
    (("muse", "assemble"), "--strata", "path:fifo"): "hung (CSV opened as is)",
    (("hcsu", "report"), "runs", "path:fifo"): "hung (summary.json opened as is)",
    (("hcsu", "shot-sweep"), "--bertscore-baseline", "path:fifo"): "hung",
    (("hcsu", "k-sweep"), "--cache", "path:random_bytes"): "traceback (sqlite3)",
    (("run", "hcsu-discrimination"), "--cache", "path:symlink_loop"): "traceback",
    (("hcsu", "shot-sweep"), "--data", "path:symlink_loop"): "traceback (resolve)",
    (("paper", "hcsu-table4"), "runs", "path:symlink_loop"): "traceback (resolve)",
    (("paper", "muse-table2"), "runs", "path:symlink_loop"): "traceback (resolve)",
    (("run", "hcsu-discrimination"), "--out", "path:odd_name"): "traceback (UTF-8)",
    (("validate", "muse"), "--images", "path:odd_name"): "traceback (UTF-8)",
    (("paper", "ab-table3"), "--types", "path:random_bytes"): "traceback (UTF-8)",
}


def _cli(args: Sequence[str], root: Path) -> bool:
    """Run one command for a fixture (sandboxed like the calls); whether it exited 0."""
    for sub in ("cwd", "home", "cache", "tmp"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "heritage_eval.cli.main", *args],
                          cwd=root / "cwd", env=sandbox_env(root), capture_output=True,
                          timeout=300, check=False)
    return proc.returncode == 0


@pytest.fixture(scope="module")
def goods(tmp_path_factory: pytest.TempPathFactory) -> Goods:
    """Small run folders and a question file for the base calls, made once."""
    root = tmp_path_factory.mktemp("goods")
    box = root / "box"
    questions, hcsu_run, muse_run = root / "questions.jsonl", root / "hcsu-run", root / "muse"
    ab_run, predictions, manifest = root / "ab-run", root / "predictions", root / "iiif.json"
    assert _cli(["muse", "generate", "--annotations", str(DEMO / "muse" / "annotations.json"),
                 "--images", str(DEMO / "muse" / "images"), "--out", str(questions)], box)
    assert _cli(["run", "hcsu-discrimination", "--data", str(DEMO / "hcsu"), "--model",
                 "baseline:random", "--k", "2", "--limit", "2", "--out", str(hcsu_run)], box)
    assert _cli(["run", "muse", "--questions", str(questions), "--images",
                 str(DEMO / "muse" / "images"), "--model", "baseline:random", "--limit", "1",
                 "--out", str(muse_run)], box)
    # an Ancient-Bench run needs the bundled OCR (the 'ocr' extra); without it the
    # commands that read one get the HCSU run and refuse it, which is still a case
    if not (_cli(["run", "ancient-bench", "--data", str(DEMO / "ancient_bench"), "--model",
                  "rapidocr", "--limit", "1", "--out", str(ab_run)], box)
            and _cli(["export", "predictions", str(ab_run), "--out", str(predictions)], box)):
        ab_run, predictions = hcsu_run, root / "no-predictions"
        predictions.mkdir()
    manifest.write_text(json.dumps({"@context": "http://iiif.io/api/presentation/3/context"
                                    ".json", "type": "Manifest", "items": []}), "utf-8")
    return Goods(DEMO / "ancient_bench", DEMO / "hcsu", DEMO / "muse", questions, hcsu_run,
                 muse_run, ab_run, predictions, manifest)


def test_the_commands_are_read_from_the_parser() -> None:
    # every group of the parser is reached, and each command gets each kind it can take
    words = {w for w, _ in COMMANDS}
    numbers_seen: set[str] = set()
    assert {("run", "hcsu-discrimination"), ("score", "ancient-bench"), ("compare",),
            ("view",), ("hcsu", "k-sweep"), ("export", "predictions"),
            ("validate", "muse")} <= words
    for w, parser in COMMANDS:
        cases = plan_cases(w, parser, SEED)
        kinds = {c.kind for c in cases}
        roles = {s.role for s in slots(parser)}
        if "path" in roles:
            assert {f"path:{k}" for k in PATH_KINDS} <= kinds, w
        n_numbers = sum(s.role == "number" for s in slots(parser))
        assert sum(k.startswith("number:") for k in kinds) == (
            NUMBERS_PER_COMMAND if n_numbers else 0), w
        numbers_seen |= {k for k in kinds if k.startswith("number:")}
        assert ("choice" in kinds) == ("choice" in roles), w
        assert ("missing" in kinds) == any(s.required for s in slots(parser)), w
        assert plan_cases(w, parser, SEED) == cases  # the seed fixes the draw
    assert numbers_seen == {f"number:{v}" for v in NUMBER_VALUES}  # each value is tried


def _shared(goods: Goods) -> dict[str, tuple[str, int, int]]:
    shared: dict[str, tuple[str, int, int]] = {}
    for base in (DEMO, goods.questions.parent):
        shared |= {f"{base}/{k}": v for k, v in tree(base).items() if "/box/" not in
                   f"/{k}/" and not k.startswith("box")}
    return shared


def _run(cases: Sequence[Case], goods: Goods, root: Path) -> None:
    """Run ``cases`` (two at a time) and assert that each behaved and that the shared
    inputs are unchanged."""
    calls = [materialise(c, slots(PARSERS[c.words]), goods, root / f"c{i}", SEED)
             for i, c in enumerate(cases)]
    before = _shared(goods)
    with ThreadPoolExecutor(WORKERS) as pool:
        outcomes: list[Outcome] = list(pool.map(run_case, calls))
    bad = list(iter_labels(outcomes))
    assert not bad, f"{len(bad)} of {len(outcomes)} call(s) misbehaved:\n" + "\n".join(bad)
    after = _shared(goods)
    assert after == before, sorted(k for k in set(before) | set(after)
                                   if before.get(k) != after.get(k))[:10]


@pytest.mark.parametrize("words", [
    pytest.param(w, marks=pytest.mark.slow) if w in SLOW else w for w, _ in COMMANDS],
    ids=" ".join)
def test_hostile_inputs_end_with_a_message(words: tuple[str, ...], goods: Goods,
                                           tmp_path: Path) -> None:
    _run(plan_cases(words, PARSERS[words], SEED), goods, tmp_path)


def test_the_calls_found_misbehaving_now_end_with_a_message(goods: Goods,
                                                            tmp_path: Path) -> None:
    cases = []
    for words, name, kind in FOUND:
        slot = next(s for s in slots(PARSERS[words]) if s.name == name)
        cases.append(Case(words, kind, slot))
    _run(cases, goods, tmp_path)


@pytest.mark.parametrize("value", ["bad\udcffname", "\udcff", "a\\\udcffb", "\udcff\udc80"])
def test_a_lone_surrogate_is_written_as_its_json_escape(value: str, tmp_path: Path) -> None:
    # kind: a file name that is not valid UTF-8 (as Python decodes it) in a summary.json
    # or a validate report failed the write with UnicodeEncodeError
    from heritage_eval.core.store import atomic_write_text

    path = tmp_path / "s.json"
    atomic_write_text(path, json.dumps({"path": value}, ensure_ascii=False))
    text = path.read_bytes().decode("utf-8")  # valid UTF-8
    # reference: json.dumps with ensure_ascii (the default) writes the same escapes
    assert text == json.dumps({"path": value})
    assert json.loads(text) == {"path": value}  # and it reads back to the same name
