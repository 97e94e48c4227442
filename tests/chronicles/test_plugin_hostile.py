"""``run chronicles-ocr``, ``score chronicles-ocr`` and ``export chronicles-ocr`` fed
hostile inputs: no traceback, ever (the platform's rule,
tests/hardening/test_hostile_every_command.py, which leaves this plug-in's commands to
this file).

The cases are made with the platform's generator (tests/hardening/hostile_argv.py), for
every option of the plug-in's and every kind: each path option gets a missing file, a
file where a folder is expected (or the reverse), a FIFO, an empty file, random bytes,
an odd name and a symlink loop; numeric options get ``nan``, ``-1``, ``1e999``, ``""``
and ``٣``; choices an unknown value; required options are left out; and each command
runs once with plausible values (the demo set, the probe predictions). Every call must
exit 0, 1 or 2 with a message, print no traceback, not hang and write nothing outside
its ``--out``.

Only the plug-in's own options get hostile values here (``--data``, ``--tasks``,
``--scripts``, ``--protocol``, ``--seed``, ``--predictions``, ``--models``, and every
argument of ``export``: ``RUN``, ``OUT``, ``--data``, ``--tag``); the platform's
(``--out``, ``--cache``, ``--model`` …) are the platform's to test.
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("chronicles_ocr")

from chronicles_ocr.scoring import ScoreOptions

from heritage_eval.cli.main import build_parser
from tests.hardening.hostile_argv import (
    NUMBER_VALUES,
    PATH_KINDS,
    Case,
    Goods,
    leaf_commands,
    materialise,
    slots,
)
from tests.hardening.hostile_run import iter_labels, run_case

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[1] / "plugins" / "chronicles-ocr" / "src" / "chronicles_ocr" / "demo"
PRED = HERE / "fixtures" / "predictions"
SEED = 22
COMMANDS = {w: p for w, p in leaf_commands(build_parser(None)) if "chronicles-ocr" in w}
#: the options the plug-in declares (the run's are a subset of the score's)
OWN = frozenset(ScoreOptions.model_fields)


#: the paths each command takes from the user (the export's OUT is an output)
PATHS = {"run": {"data"}, "score": {"data", "predictions"}, "export": {"run", "out", "data"}}


def test_every_command_is_found() -> None:
    assert set(COMMANDS) == {("run", "chronicles-ocr"), ("score", "chronicles-ocr"),
                             ("export", "chronicles-ocr")}


@pytest.fixture(scope="module")
def scored_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A chronicles-ocr run folder (the probe tag ``perfect`` scored): the export's RUN."""
    out = tmp_path_factory.mktemp("hostile") / "run"
    cli = Path(sys.executable).with_name("heritage-eval")
    done = subprocess.run([str(cli), "score", "chronicles-ocr", "--data", str(DEMO),
                           "--predictions", str(PRED), "--models", "perfect", "--out",
                           str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("words", sorted(COMMANDS), ids=" ".join)
def test_hostile_inputs_end_with_a_message(words: tuple[str, ...], tmp_path: Path,
                                           scored_run: Path) -> None:
    parser = COMMANDS[words]
    all_slots = slots(parser)
    # export's arguments are all the plug-in's own
    own = [s for s in all_slots if s.dest in OWN or words[0] == "export"]
    cases = [Case(words, "base", None)]
    cases += [Case(words, f"path:{k}", s) for s in own if s.role == "path" for k in PATH_KINDS]
    cases += [Case(words, f"number:{v}", s) for s in own if s.role == "number"
              for v in NUMBER_VALUES]
    cases += [Case(words, "choice", s) for s in own if s.role == "choice"]
    cases += [Case(words, "missing", s) for s in own if s.required]
    assert {s.dest for s in own if s.role == "path"} == PATHS[words[0]]
    # the generator's plausible values: --data is its "hcsu" folder, --predictions its
    # predictions folder, the export's RUN its "hcsu" run; the other folders are never
    # asked for by these commands
    unused = tmp_path / "unused"
    goods = Goods(ancient_bench=unused, hcsu=DEMO, muse=unused, questions=unused,
                  hcsu_run=scored_run, muse_run=unused, ab_run=unused, predictions=PRED,
                  manifest=unused)
    calls = [materialise(c, all_slots, goods, tmp_path / f"c{i}", SEED)
             for i, c in enumerate(cases)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(run_case, calls))
    bad = list(iter_labels(outcomes))
    assert not bad, "\n".join(bad)
    base = next(o for o in outcomes if o.call.case.kind == "base")
    assert base.returncode == 0, base.stderr  # the plausible call works
