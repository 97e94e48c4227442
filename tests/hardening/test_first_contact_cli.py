"""Issue 22 (first contact): ranking only comparable rows, list options in both forms,
one source form for the exports, a closed stdout pipe, a ``--cache`` folder, and the
suite's exit rule for pairs refused by design. Rules: ``report/comparability.py``,
``core/list_option.py``, ``curate/source_option.py``, ``suite.py`` (``suite_ok``)."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.benchmarks.command_options import OptionsError, namespace_from
from heritage_eval.cli.main import build_parser, main
from heritage_eval.cliargs.list_option import ListOption
from heritage_eval.core.run_parts import cache_problem
from heritage_eval.core.tables import Cell, Column, Table, to_markdown
from heritage_eval.suite import SuiteEntry, suite_ok

REPO = Path(__file__).resolve().parents[2]
AB = REPO / "data" / "demo" / "ancient_bench"


def _commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
              ) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every (command words, parser) of the full parser, depth first."""
    out = [(words, parser)] if words else []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _commands(sub, (*words, name))
    return out


ALL = _commands(build_parser())
TASKS = [(w, a) for w, p in ALL for a in p._actions if isinstance(a, ListOption)]


def test_every_tasks_option_is_the_list_option() -> None:
    # kind: one command splitting on commas, another only on spaces
    assert {w for w, _ in TASKS} >= {("hcsu", "robustness"), ("run", "muse"),
                                    ("muse", "generate")}
    every = [(w, a) for w, p in ALL for a in p._actions if "--tasks" in a.option_strings]
    assert every and all(isinstance(a, ListOption) for _, a in every), every


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_tasks_comma_and_space_forms_agree(data: st.DataObject) -> None:
    # kind: '--tasks a,b' accepted by one command, '--tasks a b' by another
    words, action = data.draw(st.sampled_from(TASKS))
    choices = list(action.list_choices)
    picked = data.draw(st.lists(st.sampled_from(choices), min_size=1, max_size=5))
    seps = data.draw(st.lists(st.sampled_from([",", " ", ", ", ",,", " ,"]),
                              min_size=len(picked) - 1, max_size=len(picked) - 1))
    text = picked[0] + "".join(s + p for s, p in zip(seps, picked[1:], strict=True))
    argv = [action.option_strings[0], *text.split()]  # --tasks, --scripts …
    # by the rule: each once, aliases as their id, in the order of the choices (a
    # selection, not a sequence)
    ids = {(action.canonical(p) or p) if action.canonical else p for p in picked}
    expected = [c for c in choices if c in ids]
    parser = argparse.ArgumentParser()
    parser._add_action(action)
    assert getattr(parser.parse_args(argv), action.dest) == expected, (words, argv)
    # the suite route (a YAML list, or one comma string) reads the same rule
    opts = namespace_from(parser, {action.dest: picked})
    assert getattr(opts, action.dest) == expected
    assert getattr(namespace_from(parser, {action.dest: ",".join(picked)}),
                   action.dest) == expected


@pytest.mark.parametrize("words", sorted({w for w, _ in TASKS}), ids=" ".join)
@pytest.mark.parametrize("bad", ["nope", "a,,nope", ","])
def test_tasks_refused_values_are_usage_errors(words: tuple[str, ...], bad: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    action = next(a for w, a in TASKS if w == words)
    value = bad.replace("a", action.list_choices[0], 1) if bad.startswith("a") else bad
    parser = argparse.ArgumentParser(prog="x")
    parser._add_action(action)
    with pytest.raises(SystemExit) as info:
        parser.parse_args([action.option_strings[0], value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {action.option_strings[0]}" in err and (
        "nope" in err or "at least one" in err)
    with pytest.raises(OptionsError):
        namespace_from(parser, {action.dest: value})


# --- a closed stdout pipe ----------------------------------------------------------------

def _cli(*words: str) -> tuple[int, str]:
    """Run the CLI with stdout a pipe whose reader is already gone."""
    r, w = os.pipe()
    os.close(r)  # the reader went away before anything was written
    env = {**os.environ, "PYTHONUNBUFFERED": "0"}
    proc = subprocess.run([sys.executable, "-m", "heritage_eval.cli.main", *words],
                          stdout=w, stderr=subprocess.PIPE, text=True, env=env,
                          timeout=120, check=False)
    os.close(w)
    return proc.returncode, proc.stderr


HELPS = [("list",), ("--help",), *[(*w, "--help") for w, _ in ALL]]


@pytest.mark.slow
@pytest.mark.parametrize("words", HELPS, ids=" ".join)
def test_closed_pipe_ends_quietly(words: tuple[str, ...]) -> None:
    # kind: 'heritage-eval list | head' ending in a BrokenPipeError traceback
    code, err = _cli(*words)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert code in (0, 141), (code, err)


def test_list_piped_into_head() -> None:
    # the shell form of the report: the reader reads one line and leaves
    script = f"set -o pipefail; {sys.executable} -m heritage_eval.cli.main list | head -1"
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.stdout.startswith("run (model evaluations):")
    assert "Traceback" not in proc.stderr and proc.returncode in (0, 141), proc.stderr


# --- --cache ------------------------------------------------------------------------------

def test_cache_problem_grid(tmp_path: Path) -> None:
    # kind: a --cache that cannot be a SQLite file gives a sqlite3 traceback
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x")
    refused = {tmp_path / "folder": "is a folder",
               tmp_path / "file" / "c.sqlite": "is not a folder",
               tmp_path / "file" / "deeper" / "c.sqlite": "is not a folder"}
    for path, why in refused.items():
        problem = cache_problem(path)
        assert problem is not None and why in problem and str(path) in problem
    for ok in (tmp_path / "new.sqlite", tmp_path / "new" / "dir" / "c.sqlite",
               tmp_path / "file"):  # an existing file is the cache itself
        assert cache_problem(ok) is None


def test_cache_folder_is_a_usage_error(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "cachedir"
    folder.mkdir()
    # a usage error (exit 2) from the typed configuration's check, before anything runs
    assert main(["run", "ancient-bench", "--data", str(AB), "--model", "rapidocr",
                 "--out", str(tmp_path / "run"), "--cache", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"argument --cache: {folder} is a folder" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()  # refused before anything is written


# --- suites: a pair refused by design is skipped --------------------------------------------

STATUSES = ("done", "partial", "skipped", "nothing-answered", "not-run")


def test_suite_exit_rule_exhaustive() -> None:
    # kind: one refused-by-design pair made every suite exit 1. Grid: every sequence of
    # 0..3 statuses; reference written independently from the README sentence.
    for n in range(4):
        for statuses in itertools.product(STATUSES, repeat=n):
            entries = [SuiteEntry("b", "m", Path("o"), {}, status=s) for s in statuses]
            ran = sum(s in ("done", "partial") for s in statuses)
            failed = sum(s in ("nothing-answered", "not-run") for s in statuses)
            assert suite_ok(entries) == (ran >= 1 and failed == 0), statuses


@pytest.mark.parametrize(("models", "code"), [(["rapidocr", "baseline:random"], 0),
                                              (["rapidocr"], 1)])
def test_suite_refused_pair_is_skipped(tmp_path: Path, models: list[str], code: int,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "suite.yaml"
    config.write_text(json.dumps({
        "out": "runs", "options": {"limit": 1}, "models": models,
        "benchmarks": [{"hcsu-discrimination": {"data": str(REPO / "data/demo/hcsu"),
                                                "k": 5}}]}), "utf-8")
    assert main(["run", "--config", str(config)]) == code
    runs = json.loads((tmp_path / "runs" / "suite.json").read_text("utf-8"))["runs"]
    status = {r["model"]: r["status"] for r in runs}
    assert status["rapidocr"] == "skipped"
    assert all(s in ("done", "partial") for m, s in status.items() if m != "rapidocr")


# --- export: one source form ----------------------------------------------------------------

def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_export_tei_source_forms_agree(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    # kind: 'export hf BENCH SOURCE' but 'export tei --data SOURCE'
    common = ["--categories", "seals", "--license", "CC BY 4.0", "--no-progress"]
    assert main(["export", "tei", str(AB), "--out", str(tmp_path / "a"), *common]) == 0
    assert main(["export", "tei", "--data", str(AB), "--out", str(tmp_path / "b"),
                 *common]) == 0
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert a and a.keys() == b.keys()
    capsys.readouterr()
    assert main(["export", "tei", "--out", str(tmp_path / "c")]) == 2
    assert "SOURCE (or --data SOURCE)" in capsys.readouterr().err
    assert main(["export", "tei", str(AB), "--data", str(tmp_path), "--out",
                 str(tmp_path / "d")]) == 2
    assert "two sources given" in capsys.readouterr().err


def test_export_hf_source_forms_agree(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    for form, out in ((["ancient-bench", str(AB)], "a"),
                      (["ancient-bench", "--data", str(AB)], "b")):
        assert main(["export", "hf", *form, "--out", str(tmp_path / out), "--license",
                     "other", "--no-progress"]) == 0
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert a.keys() == b.keys() and any(k.endswith(".parquet") for k in a)
    assert {k: v for k, v in a.items() if k.endswith(".parquet")} == \
        {k: v for k, v in b.items() if k.endswith(".parquet")}
    capsys.readouterr()
    assert main(["export", "hf", "ancient-bench", "--out", str(tmp_path / "c")]) == 2
    assert "give the source" in capsys.readouterr().err


# --- ranking: only comparable rows ------------------------------------------------------------

def _cells(md: str) -> dict[str, str]:
    """Model -> value cell of the pipe-table rows of ``md`` (header and rule skipped)."""
    rows = [ln for ln in md.splitlines() if ln.startswith("|")][2:]
    return {ln.split("|")[1].strip(): ln.split("|")[2].strip() for ln in rows}


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 20)), st.booleans()),
                     min_size=1, max_size=8),
       rank=st.sampled_from(["higher", "lower"]))
def test_unranked_cells_take_no_part(rows: list[tuple[int | None, bool]], rank: str) -> None:
    # differential: a table with unranked cells ranks as the same table without those
    # rows (the renderer's own rule, applied to the comparable rows only), and an
    # unranked cell is never bold or underlined
    col = [Column("m", "M", kind="text"), Column("v", "V", decimals=0, rank=rank)]  # type: ignore[arg-type]
    full = Table(col, [{"m": f"r{i}", "v": Cell(v, unranked=u)}
                       for i, (v, u) in enumerate(rows)])
    kept = Table(col, [{"m": f"r{i}", "v": v} for i, (v, u) in enumerate(rows) if not u])
    lines, ref = _cells(to_markdown(full)), _cells(to_markdown(kept))
    if kept.rows:
        assert all(lines[k] == v for k, v in ref.items())
    for i, (_, u) in enumerate(rows):
        if u:
            assert "**" not in lines[f"r{i}"] and "<u>" not in lines[f"r{i}"]


def _scored(tmp: Path, model: str, media: list[str], perfect: bool) -> Path:
    """A ``score ancient-bench`` run of ``model`` over ``media`` of the demo: answers are
    the ground truth (``perfect``) or one wrong character."""
    preds = tmp / f"preds-{model}"
    for medium in media:
        results = preds / model / medium / "results"
        results.mkdir(parents=True)
        for line in (AB / medium / "conv.jsonl").read_text("utf-8").splitlines():
            item = json.loads(line)
            answer = item["human_gt"] if perfect else "乙"
            (results / f"{Path(item['image']).stem}.json").write_text(
                json.dumps({"answer": answer}, ensure_ascii=False), "utf-8")
    out = tmp / f"run-{model}"
    assert main(["score", "ancient-bench", "--data", str(AB), "--predictions", str(preds),
                 "--out", str(out), "--categories", *media]) == 0
    return out


NINE = sorted(p.name for p in AB.iterdir() if (p / "conv.jsonl").is_file())


@pytest.fixture
def two_and_nine(tmp_path: Path) -> tuple[Path, Path]:
    """A perfect run over 2 media (Overall 100) and a poor one over all 9."""
    return (_scored(tmp_path, "two-media", ["seals", "cliff_carvings"], True),
            _scored(tmp_path, "nine-media", NINE, False))


def _row(md: str, model: str) -> str:
    return next(ln for ln in md.splitlines() if ln.startswith(f"| {model} "))


def test_compare_does_not_rank_a_headline_over_fewer_media(
        two_and_nine: tuple[Path, Path], tmp_path: Path) -> None:
    # kind: a 2-media Overall bolded above a 9-media one
    from heritage_eval.report.compare import compare_runs, write_comparison

    comp = compare_runs(list(two_and_nine), samples="all")
    write_comparison(comp, tmp_path / "cmp", formats=("md",))
    md = (tmp_path / "cmp" / "groups_medium.md").read_text("utf-8")
    two, nine = _row(md, "two-media"), _row(md, "nine-media")
    overall_two = two.rstrip(" |").split("|")[-2:]  # NED, F1 of Overall
    assert all("**" not in c and "<u>" not in c and "†" in c for c in overall_two), two
    assert all("**" in c for c in nine.rstrip(" |").split("|")[-2:]), nine  # only ranked
    assert "**" in two.split("|")[2]  # per medium it is still ranked (seals: 100)
    assert "headline not ranked" in md and "two-media (without" in md
    models_md = (tmp_path / "cmp" / "models.md").read_text("utf-8")
    assert "**" not in _row(models_md, "two-media").split("|")[2]


def test_ab_table3_and_compare_mark_other_data_and_partial(
        two_and_nine: tuple[Path, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    # kind: runs over different data merged silently; a PARTIAL run ranked
    two, nine = two_and_nine
    third = _scored(tmp_path, "other-data", NINE, True)
    summary = json.loads((third / "summary.json").read_text("utf-8"))
    summary["provenance"]["data_counts"]["per_category"]["seals"] += 1  # other data
    (third / "summary.json").write_text(json.dumps(summary, ensure_ascii=False), "utf-8")
    s2 = json.loads((two / "summary.json").read_text("utf-8"))
    s2["partial"] = True
    (two / "summary.json").write_text(json.dumps(s2, ensure_ascii=False), "utf-8")
    capsys.readouterr()
    assert main(["paper", "ab-table3", str(two), str(nine), str(third), "--samples", "all",
                 "--intervals", "none", "--out", str(tmp_path / "t3"), "--formats",
                 "md"]) == 0
    err = capsys.readouterr().err
    assert "runs over different data" in err and str(third) in err
    md = (tmp_path / "t3" / "ab_table3.md").read_text("utf-8")
    for model in ("other-data", "two-media"):
        cells = _row(md, model).split("|")[2:-1]
        assert all("**" not in c and "<u>" not in c for c in cells), cells
        assert all("‡" in c for c in cells if c.strip() not in ("", "—")), cells
    assert "other-data (other data)" in md and "two-media (PARTIAL run)" in md
    assert all("**" in c for c in _row(md, "nine-media").split("|")[2:-1])  # alone
    from heritage_eval.report.compare import compare_runs

    comp = compare_runs([two, nine, third], samples="all")
    assert comp.not_ranked == {"two-media": "PARTIAL run", "other-data": "other data"}
    assert any("runs over different data" in w and str(third) in w for w in comp.warnings)


def _summary(per: dict[str, int], sha: str | None = None,
             limit: int | None = None) -> dict[str, object]:
    prov: dict[str, object] = {"data_info": {"data": "/x", "samples": sum(per.values()),
                                             "per_category": per}, "limit": limit}
    if sha is not None:
        prov["question_file_sha256"] = sha
    return {"provenance": prov}


@settings(max_examples=200, deadline=None)
@given(per=st.dictionaries(st.sampled_from("abcdefghi"), st.integers(1, 5), min_size=1),
       data=st.data())
def test_data_conflict_rule(per: dict[str, int], data: st.DataObject) -> None:
    # kind: runs over different data compared silently, or a run over a selection of
    # the media (or a --limit run) called other data
    from heritage_eval.report.comparability import data_identity

    full = data_identity(_summary(per))
    assert full is not None and not full.conflicts(full)
    subset = data.draw(st.lists(st.sampled_from(sorted(per)), min_size=1, unique=True))
    sel = data_identity(_summary({c: per[c] for c in subset}))
    assert sel is not None and not sel.conflicts(full) and not full.conflicts(sel)
    changed = data.draw(st.sampled_from(subset))
    other = data_identity(_summary({**{c: per[c] for c in subset},
                                    changed: per[changed] + 1}))
    assert other is not None and other.conflicts(full) and full.conflicts(other)
    assert data_identity(_summary({changed: 99}, limit=1)) is None  # not judged
    # a recorded hash decides when both runs have it, whatever the counts say
    h1, h2 = (data_identity(_summary(per, "aa")), data_identity(_summary({changed: 99}, "aa")))
    assert h1 is not None and h2 is not None and not h1.conflicts(h2)
    h3 = data_identity(_summary(per, "bb"))
    assert h3 is not None and h1.conflicts(h3)


@settings(max_examples=200, deadline=None)
@given(covers=st.lists(st.frozensets(st.sampled_from("abcd")), min_size=1, max_size=5))
def test_headline_over_other_groups_is_unranked(covers: list[frozenset[str]]) -> None:
    from heritage_eval.core.benchmark import MetricSpec
    from heritage_eval.report.comparability import unranked_headline
    from heritage_eval.report.runs import ModelRun

    spec = MetricSpec("ned", "NED", macro_over="medium")
    models = [ModelRun(f"m{i}", f"m{i}", Path(f"r{i}"), [], {"groups": {"medium": {
        g: {"ned": {"value": 0.5}} for g in c}}}) for i, c in enumerate(covers)]
    union = frozenset().union(*covers)  # by hand: the groups some model covers
    expected = {f"m{i}": sorted(union - c) for i, c in enumerate(covers) if c != union}
    assert unranked_headline(models, spec) == expected
    assert unranked_headline(models, MetricSpec("acc", "Acc")) == {}  # not a macro metric


@pytest.mark.parametrize("argv", [
    ["validate", "ancient-bench", "--data", "ab"],
    ["validate", "hcsu", "--data", "hcsu", "--k", "5"],
])
def test_validate_with_a_relative_data_folder(argv: list[str], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # kind: a relative --data (as the README writes it) was joined to itself by the path
    # resolver ("data/x/data/x/conv.jsonl: No such file"): every file unreadable, exit 1
    import shutil

    from heritage_eval.cli.main import main

    demo = Path(__file__).resolve().parents[2] / "data" / "demo"
    shutil.copytree(demo / "ancient_bench", tmp_path / "ab")
    shutil.copytree(demo / "hcsu", tmp_path / "hcsu")
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 0
