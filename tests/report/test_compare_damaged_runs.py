"""``compare`` never mixes a ``summary.json`` with a ``samples.jsonl`` that does not hold
it, and never compares a folder with itself.

Rules (heritage_eval.report.runs.check_records, heritage_eval.report.compare.same_folder,
docs/how-to/view-and-compare.md "Damaged run folders"): a run folder whose
``samples.jsonl`` has an unreadable line, or holds per model another number of records
(or of records in a state) than its ``summary.json`` counts, is refused with exit 2, the
message naming the file (and the first bad line) and ``--resume``; one folder given
twice under any spelling is refused with exit 2. Expected outcomes are derived from the
bytes of the damaged file (where the cut falls), not from the code under test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heritage_eval.cli.main import main
from heritage_eval.core.record import SampleRecord
from heritage_eval.report.compare import CompareError, compare_runs
from heritage_eval.report.runs import RunReadError, read_run
from tests.report.test_compare import NED, rec, write_run

MEDIA = ("Seal", "Stele", "Cliff")
NL = b"\n"


def _records(model: str, n: int) -> list[SampleRecord]:
    return [rec(i, model, {"ned": (i % 7) / 7}, groups={"medium": MEDIA[i % 3]})
            for i in range(n)]


def _pair(root: Path, n: int = 9) -> tuple[Path, Path]:
    return (write_run(root / "a", _records("a", n), [NED], ("medium",)),
            write_run(root / "b", _records("b", n), [NED], ("medium",)))


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(2, 8), frac=st.floats(0.0, 1.0))
def test_a_cut_samples_file_is_refused_wherever_the_cut_falls(
        tmp_path_factory: pytest.TempPathFactory, n: int, frac: float) -> None:
    # guards against: a truncated copy keeping its summary's numbers (all media, n 27)
    # beside the other run recomputed on the common samples, and ranked best
    a, b = _pair(tmp_path_factory.mktemp("cut"), n)
    samples = a / "samples.jsonl"
    data = samples.read_bytes()
    cut = int(frac * len(data))
    samples.write_bytes(data[:cut])
    kept = data[:cut]
    # by hand from the bytes: every line ends with "\n"; a cut inside a line leaves an
    # unreadable line numbered (newlines kept) + 1; a cut at a line end leaves fewer
    # records; only the whole file (or all but its final newline) is intact
    if cut >= len(data) - 1:
        assert compare_runs([a, b]).paired[0].n == n
        return
    with pytest.raises(RunReadError) as info:
        compare_runs([a, b])
    msg = str(info.value)
    assert "--resume" in msg and f"{a / 'summary.json'}" in msg
    if kept and not kept.endswith(b"\n"):
        assert msg.startswith(f"{samples}:{kept.count(NL) + 1}: unreadable line")
    else:
        assert (f"{samples} does not hold the records that {a / 'summary.json'} counts for "
                f"model 'a' (records: {kept.count(NL)} in samples.jsonl, {n} in "
                "summary.json") in msg


def _drop_line(lines: list[str]) -> list[str]:
    return lines[1:]


def _repeat_line(lines: list[str]) -> list[str]:
    return [*lines, lines[0]]


def _other_model(lines: list[str]) -> list[str]:
    return [*lines, rec(99, "c", {"ned": 0.5}, groups={"medium": "Seal"}).to_json_line()]


def _state_changed(lines: list[str]) -> list[str]:
    # same number of records, one scored record turned into an error
    return [rec(0, "a", {"ned": None}, state="error", groups={"medium": "Seal"})
            .to_json_line(), *lines[1:]]


@pytest.mark.parametrize(("edit", "expected"), [
    (_drop_line, "records: 8 in samples.jsonl, 9 in summary.json"),
    (_repeat_line, "records: 10 in samples.jsonl, 9 in summary.json"),
    (_other_model, "for model 'c' (records: 1 in samples.jsonl, 0 in summary.json)"),
    (_state_changed, "records in state scored: 8 in samples.jsonl, 9 in summary.json; "
                     "records in state error: 1 in samples.jsonl, 0 in summary.json"),
])
def test_records_other_than_the_summary_counts_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: object,
        expected: str) -> None:
    # guards against: a samples.jsonl of whole, valid lines that is not the one the
    # summary was computed from (a line lost or repeated by a copy, another run's lines)
    a, b = _pair(tmp_path)
    samples = a / "samples.jsonl"
    assert callable(edit)
    samples.write_text("".join(x + "\n" for x in edit(samples.read_text("utf-8")
                                                       .splitlines())), "utf-8")
    with pytest.raises(RunReadError, match="--resume"):
        compare_runs([a, b])
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert f"error: {samples} does not hold the records" in err and expected in err
    assert not (tmp_path / "cmp").exists()  # nothing written
    read_run(a)  # readers that do not set the summary beside the records still read it


def test_the_reported_case_exits_2_naming_the_file_and_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: the new-user report (samples.jsonl cut to half its bytes, exit 0,
    # the damaged run bolded best); line number by hand from the kept bytes
    a, b = _pair(tmp_path, 27)
    samples = a / "samples.jsonl"
    data = samples.read_bytes()
    half = data[: len(data) // 2]
    samples.write_bytes(half)
    assert not half.endswith(b"\n")  # the cut falls inside a line here
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert f"error: {samples}:{half.count(NL) + 1}: unreadable line" in err
    assert "run the same command again with --resume" in err
    assert not (tmp_path / "cmp").exists()


def test_a_summary_that_states_no_counts_is_not_checked(tmp_path: Path) -> None:
    # guards against: refusing a hand-made summary without n_records / states (nothing
    # to hold the records against); its records are still compared: 9 pairs
    import json

    a, b = _pair(tmp_path)
    summary = json.loads((a / "summary.json").read_text("utf-8"))
    for block in summary["models"].values():
        del block["n_records"], block["states"]
    (a / "summary.json").write_text(json.dumps(summary), "utf-8")
    assert compare_runs([a, b]).paired[0].n == 9


# --- the same folder twice ---------------------------------------------------------------

def _spellings(run: Path) -> list[tuple[str, str]]:
    link = run.parent / "link"
    if not link.exists():
        link.symlink_to(run, target_is_directory=True)
    return [(str(run), str(run)), (str(run), str(run) + "/"),
            (str(run), str(run.parent / ".." / run.parent.name / run.name)),
            (str(run), "./" + run.name), (str(run), str(link)), (str(link), str(run) + "/.")]


def test_one_folder_twice_is_refused_however_spelled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: `compare X X` pairing a model with itself (difference 0, a
    # meaningless interval), also through a trailing slash, "..", "./" or a symlink
    a, _ = _pair(tmp_path)
    monkeypatch.chdir(tmp_path)
    for i, (first, second) in enumerate(_spellings(a)):
        with pytest.raises(CompareError, match="are the same run folder"):
            compare_runs([first, second])
        out = tmp_path / f"cmp{i}"
        assert main(["compare", first, second, "--out", str(out)]) == 2, second
        err = capsys.readouterr().err
        assert f"error: {Path(first)} and {Path(second)} are the same run folder" in err
        assert not out.exists()


def test_a_copy_of_a_folder_is_another_folder(tmp_path: Path) -> None:
    # guards against: refusing two folders that merely hold equal files (a copy is a
    # legitimate, if dull, comparison): every difference is 0 by construction
    a, _ = _pair(tmp_path)
    shutil.copytree(a, tmp_path / "copy")
    comp = compare_runs([a, tmp_path / "copy"])
    assert comp.paired[0].difference == pytest.approx(0.0)


# --- the coverage warning names the run that lacks groups --------------------------------

@pytest.mark.parametrize("samples", ["common", "all"])
@pytest.mark.parametrize("lacking_first", [False, True])
def test_the_coverage_warning_names_the_run_that_lacks_media(
        tmp_path: Path, samples: str, lacking_first: bool) -> None:
    # guards against: the warning naming the complete run as "without" media. Run "full"
    # has an NED value for Seal, Stele and Cliff; run "short" answered its Cliff
    # sample but has no NED score there (state scored, score null: it counts for the
    # common samples, so nothing is dropped and the gap stays), so by hand short
    # covers 2 of 3 media, without Cliff, under either --samples rule
    full = write_run(tmp_path / "full", [rec(i, "full", {"ned": 0.5},
                                             groups={"medium": m})
                                         for i, m in enumerate(MEDIA)], [NED], ("medium",))
    short = write_run(tmp_path / "short", [rec(i, "short", {"ned": None if m == "Cliff"
                                                              else 0.4},
                                               groups={"medium": m})
                                           for i, m in enumerate(MEDIA)], [NED], ("medium",))
    runs = [short, full] if lacking_first else [full, short]
    comp = compare_runs(runs, samples=samples)
    parts = {"full": "full: 3 of 3", "short": "short: 2 of 3 (without Cliff)"}
    order = ["short", "full"] if lacking_first else ["full", "short"]
    assert (f"NED: the headline is the mean over medium groups and the models cover "
            f"different ones ({'; '.join(parts[m] for m in order)}): their headline "
            "values are not comparable") in comp.warnings


def test_a_model_that_loses_nothing_keeps_the_numbers_of_its_records(tmp_path: Path) -> None:
    # guards against: a model whose records are all common keeping numbers its records
    # do not give. "b" errs on s1 (Stele): under --samples common s1 leaves both, so
    # each covers Seal and Cliff; a's NED by hand: mean over media of (0/7, 2/7) = 1/7
    a = write_run(tmp_path / "a", _records("a", 3), [NED], ("medium",))
    b_recs = _records("b", 3)
    b_recs[1] = rec(1, "b", {"ned": None}, state="error", groups={"medium": "Stele"})
    b = write_run(tmp_path / "b", b_recs, [NED], ("medium",))
    comp = compare_runs([a, b])
    assert not any("cover different" in w for w in comp.warnings)
    ned = {m.name: m.block["metrics"]["ned"]["value"] for m in comp.models}
    assert ned["a"] == pytest.approx((0 / 7 + 2 / 7) / 2)
    assert ned["b"] == pytest.approx((0 / 7 + 2 / 7) / 2)
