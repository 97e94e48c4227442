"""``compare --out``: a non-empty folder is refused unless it holds an earlier comparison
(its ``compare.json`` manifest, files as written) or ``--overwrite`` is given; a path
that is a file is refused naming ``--out``. And the console marks a flagged paired
difference with "†" as ``compare.md`` does, with the one-line explanation.

Rules: heritage_eval.report.compare_out (docs/reference/conventions.md "Files the
commands write", docs/how-to/view-and-compare.md), heritage_eval.report.compare_tables.
paired_marks. Expected outcomes are written down per case by hand."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from heritage_eval.cli.main import main
from heritage_eval.report.compare_out import MANIFEST, OutFolderError, check_out
from tests.report.test_compare import NED, SCORE, rec, write_run

USER_TEXT = "# my own notes\n"


def _runs(root: Path, media: bool = True) -> list[str]:
    groups = ({"medium": "Seal"}, {"medium": "Stele"}) if media else ({}, {})
    keys = ("medium",) if media else ()
    out = []
    for model, scores in (("a", (0.2, 0.9)), ("b", (0.4, 0.5))):
        records = [rec(i, model, {"ned": s}, groups=dict(g))
                   for i, (s, g) in enumerate(zip(scores, groups, strict=True))]
        out.append(str(write_run(root / f"{model}{'' if media else '-flat'}", records,
                                 [NED], keys)))
    return out


def _compare(runs: list[str], out: Path, *extra: str) -> int:
    return main(["compare", *runs, "--out", str(out), *extra])


# --- which --out is accepted: a grid of folder contents x --overwrite ---------------------

def _earlier(out: Path, runs: list[str]) -> None:
    assert _compare(runs, out) == 0


SETUPS = {
    "absent": lambda out, runs: None,
    "empty": lambda out, runs: out.mkdir(),
    "user compare.md": lambda out, runs: (out.mkdir(), (out / "compare.md")
                                          .write_text(USER_TEXT, "utf-8")),
    "user other file": lambda out, runs: (out.mkdir(), (out / "notes.txt")
                                          .write_text(USER_TEXT, "utf-8")),
    "earlier comparison": _earlier,
    "earlier + user notes": lambda out, runs: (_earlier(out, runs), (out / "notes.txt")
                                               .write_text(USER_TEXT, "utf-8")),
    "earlier, compare.md edited": lambda out, runs: (_earlier(out, runs), (
        out / "compare.md").write_text(USER_TEXT, "utf-8")),
    "earlier + user groups_x.md": lambda out, runs: (_earlier(out, runs), (
        out / "groups_x.md").write_text(USER_TEXT, "utf-8")),
    "earlier, manifest not ours": lambda out, runs: (_earlier(out, runs), (
        out / MANIFEST).write_text("[1, 2]", "utf-8")),
}
#: by hand from the rule: accepted without --overwrite only when absent, empty, or an
#: earlier comparison whose files are as written (other, unrelated files allowed)
ACCEPTED = {"absent", "empty", "earlier comparison", "earlier + user notes"}


@pytest.mark.parametrize(("setup", "overwrite"),
                         list(itertools.product(SETUPS, [False, True])))
def test_which_out_folder_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     setup: str, overwrite: bool) -> None:
    # guards against: compare overwriting a user's compare.md (or any file) in a
    # non-empty --out, against docs/reference/conventions.md
    runs = _runs(tmp_path)
    out = tmp_path / "out"
    SETUPS[setup](out, runs)
    before = {p.name: p.read_bytes() for p in out.iterdir()} if out.is_dir() else {}
    capsys.readouterr()
    accepted = overwrite or setup in ACCEPTED
    rc = _compare(runs, out, *(["--overwrite"] if overwrite else []))
    err = capsys.readouterr().err
    if not accepted:
        assert rc == 2 and f"error: --out {out}" in err and "--overwrite" in err
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # untouched
        with pytest.raises(OutFolderError):
            check_out(out)
        return
    assert rc == 0, err
    assert (out / "compare.md").read_text("utf-8") != USER_TEXT
    if "notes.txt" in before:
        assert (out / "notes.txt").read_text("utf-8") == USER_TEXT  # other files kept
    manifest = json.loads((out / MANIFEST).read_text("utf-8"))
    assert "compare.md" in manifest["files"] and "groups_medium.md" in manifest["files"]
    if setup != "earlier + user groups_x.md":  # that file stays in the way (not ours)
        check_out(out)  # what it wrote is itself an accepted --out


def test_the_refusals_name_the_folder_and_the_file(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: a refusal that does not say which file is in the way
    runs = _runs(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "compare.md").write_text(USER_TEXT, "utf-8")
    assert _compare(runs, out) == 2
    assert (f"error: --out {out} is not empty and it holds no earlier comparison (no "
            "compare.json); nothing was written") in capsys.readouterr().err
    (out / "compare.md").unlink()
    assert _compare(runs, out) == 0
    (out / "compare.md").write_text(USER_TEXT, "utf-8")
    assert _compare(runs, out) == 2
    assert (f"error: --out {out}: {out / 'compare.md'} was changed after compare wrote "
            "it") in capsys.readouterr().err


def test_an_out_that_is_a_file_names_the_option(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: a bare "error: File exists (...)" that does not say which option
    runs = _runs(tmp_path)
    target = tmp_path / "file.txt"
    target.write_text(USER_TEXT, "utf-8")
    for flags in ([], ["--overwrite"]):
        assert _compare(runs, target, *flags) == 2
        assert (f"error: --out {target} exists and is not a folder"
                in capsys.readouterr().err)
        assert target.read_text("utf-8") == USER_TEXT
    assert _compare(runs, target / "sub") == 2  # a folder under a file cannot be made
    assert f"error: --out {target / 'sub'}: cannot write" in capsys.readouterr().err


def test_a_new_comparison_removes_the_earlier_ones_stale_tables(tmp_path: Path) -> None:
    # guards against: groups_medium.* of an earlier comparison left beside a new one
    # whose runs have no medium (they would be read as its tables)
    out = tmp_path / "out"
    assert _compare(_runs(tmp_path), out) == 0
    assert (out / "groups_medium.md").is_file()
    (out / "notes.txt").write_text(USER_TEXT, "utf-8")
    assert _compare(_runs(tmp_path, media=False), out) == 0
    names = {p.name for p in out.iterdir()}
    # by hand: compare.md, models.{md,csv,tex}, paired.csv, disagreements.jsonl,
    # compare.json, and the user's notes.txt; no groups_medium.*
    assert names == {"compare.md", "models.md", "models.csv", "models.tex", "paired.csv",
                     "disagreements.jsonl", MANIFEST, "notes.txt"}


# --- the console marks flagged paired differences ----------------------------------------

def _pair_runs(root: Path, a: list[float], b: list[float]) -> list[str]:
    return [str(write_run(root / name, [rec(i, name, {"score": v}) for i, v in enumerate(vs)],
                          [SCORE])) for name, vs in (("a", a), ("b", b))]


rng = random.Random(1)
CASES = {
    # 40 unequal differences: no flag (the interval and p-value stand as they are)
    "no flag": ([rng.random() for _ in range(40)], [rng.random() for _ in range(40)],
                "", ""),
    # every difference 0: constant_fallback interval, p = 1 (not at a floor)
    "constant": ([0.5] * 6, [0.5] * 6, "†", ""),
    # one difference of 6: the sign-flip p cannot be below 2/2^1 = 1 -> p_floor:1, and
    # the interval is not flagged
    "one differs": ([1.0] * 6, [0.0] + [1.0] * 5, "", "†"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_console_marks_a_flagged_difference_as_compare_md_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    # guards against: the console line of a constant_fallback interval lacking the "†"
    # that compare.md carries, or a "†" with no explanation
    a, b, ci_mark, p_mark = CASES[case]
    runs = _pair_runs(tmp_path, a, b)
    assert _compare(runs, tmp_path / "out") == 0
    lines = capsys.readouterr().out.splitlines()
    (line,) = [x for x in lines if x.startswith("  b - a, Score: ")]
    interval = line.split(": ", 1)[1].split(", p = ")[0]
    assert interval.endswith("]" + ci_mark)
    p_value = line.split(", p = ")[1].split(", n = ")[0]
    assert p_value.endswith("†") == bool(p_mark)
    notes = [x for x in lines if x.startswith("  † flagged: ")]
    if not (ci_mark or p_mark):
        assert notes == [] and "†" not in "\n".join(lines)
        return
    (note,) = notes
    assert ("constant_fallback: all values equal" in note) == bool(ci_mark)
    assert ("p_floor:1: the sign-flip test cannot give a p-value below 1" in note) == bool(
        p_mark)
    md = (tmp_path / "out" / "compare.md").read_text("utf-8")
    (row,) = [x for x in md.split("## Paired differences", 1)[1].splitlines()
              if x.startswith("| b ")]
    assert ("]" + "†" in row) == bool(ci_mark)  # the same mark in compare.md
