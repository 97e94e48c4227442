"""The example plug-in through the Python API, and a broken plug-in beside it.

Expected values are counted by hand from ``ANSWERS`` (conftest) against the bundled
references.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.plugins.conftest import heritage_eval, python, replay_args

API_SCRIPT = """
import json, sys
import heritage_eval as he

data, answers, out = sys.argv[1:4]
run = he.evaluate("oracle-recognition", data=data, model="oracle-replay:demo",
                  model_option=[f"answers={answers}"], out=out, k=2)
acc = run.metrics()["accuracy"]
frame = run.to_pandas()
errors = {}
for bad in ({"k": 0}, {"kk": 2}):
    try:
        he.evaluate("oracle-recognition", data=data, model="baseline:random",
                    out=out + "-bad", **bad)
    except he.OptionsError as exc:
        errors[next(iter(bad))] = str(exc)
import os
assert not os.path.exists(out + "-bad")  # refused before anything is written
loaded = he.load_run(out)
print(json.dumps({"status": run.status, "label": acc["label"], "value": acc["value"],
                  "n": acc["n"], "records": len(run), "loaded": len(loaded),
                  "per_period": frame.groupby("period")["accuracy"].sum().to_dict(),
                  "errors": errors}, ensure_ascii=False))
"""


def test_evaluate_from_python(plugin_site: Path, demo_data: Path, answers_file: Path,
                              tmp_path: Path) -> None:
    proc = python(["-c", API_SCRIPT, str(demo_data), str(answers_file), str(tmp_path / "run")],
                  [plugin_site])
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    # k = 2, by hand: I = 人 日 ✓, 目 ✗, 山 ✓ (3); V = 水 ✓, "" ✗, 林 木 ✓, none ✗ (2)
    assert got["status"] == 0 and got["records"] == 8 and got["loaded"] == 8
    assert got["label"] == "Acc@2" and got["n"] == 8 and got["value"] == 5 / 8
    assert got["per_period"] == {"I": 3.0, "V": 2.0}
    # the typed options check the Python route too: k's range, unknown keywords
    assert "k" in got["errors"]["k"] and ">= 1" in got["errors"]["k"]
    assert "kk" in got["errors"]["kk"]


def _broken_plugin(root: Path) -> Path:
    """A distribution whose entry point raises on import: the ``*.dist-info`` metadata
    that ``pip install`` would write (what ``importlib.metadata`` reads), and the module."""
    info = root / "broken_oracle_demo-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-oracle-demo\n"
                                   "Version: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[heritage_eval.benchmarks]\nbroken-demo = broken_plugin_demo:PLUGIN\n",
        encoding="utf-8")
    (root / "broken_plugin_demo.py").write_text(
        'raise RuntimeError("deliberately broken at import")\n', encoding="utf-8")
    return root


def test_a_broken_plugin_is_a_warning_and_the_others_still_work(
        plugin_site: Path, demo_data: Path, answers_file: Path, tmp_path: Path) -> None:
    paths = [plugin_site, _broken_plugin(tmp_path / "broken")]
    warning = ("warning: plug-in 'broken-demo' (broken_plugin_demo:PLUGIN, group "
               "heritage_eval.benchmarks) failed to load: RuntimeError: deliberately "
               "broken at import")
    proc = heritage_eval(["list"], paths)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count(warning) == 1
    names = {line.split()[0] for line in proc.stdout.splitlines() if line.startswith("  ")}
    assert {"oracle-recognition", "ancient-bench", "oracle-replay"} <= names
    assert "broken-demo" not in names
    proc = heritage_eval(replay_args(demo_data, answers_file, tmp_path / "run", "--limit",
                                     "1"), paths)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count(warning) == 1
    assert (tmp_path / "run" / "summary.json").is_file()
