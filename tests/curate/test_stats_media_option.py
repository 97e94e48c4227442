"""``stats ancient-bench --media`` follows the list-option rule of every command
(docs/reference/conventions.md, "List options"): commas and spaces alike, a repeated
option adds, folder or paper names in any case, each once, in the paper's order; an empty
list, an unknown name are usage errors (exit 2, nothing written)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heritage_eval.cli.main import main
from heritage_eval.curate.stats import ancient_bench as ab

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "ancient_bench"
#: the paper's Table 2 order of the nine media (folder, paper name), written out by hand
#: from the Ancient-Bench paper, not read from the package
PAPER = [("oracle_bone_artifacts", "Oracle"), ("bronze_rubbings", "Bronze"),
         ("bamboo_wooden_slips", "Slip"), ("silk_manuscripts", "Silk"), ("seals", "Seal"),
         ("inscription_rubbings", "Stele"), ("cliff_carvings", "Cliff"),
         ("traditional_chinese_book_editions", "Edition"), ("calligraphys", "Calligraphy")]
FOLDERS = [f for f, _ in PAPER]


def _stats(out: Path, *media: str) -> int:
    return main(["stats", "ancient-bench", "--data", str(DEMO), "--out", str(out),
                 "--no-figures", *media])


def _chosen(out: Path) -> list[str]:
    return list(json.loads((out / "stats.json").read_text(encoding="utf-8"))["media"])


# every spelling of one selection, as the user may type it after `stats ancient-bench`
SEAL_STELE = ["seals", "inscription_rubbings"]  # paper order: Seal (5th) before Stele (6th)
GRID_OK = [
    (["--media", "seals,Stele"], SEAL_STELE),            # commas
    (["--media", "seals Stele"], SEAL_STELE),            # white space in one value
    (["--media", "seals", "Stele"], SEAL_STELE),         # two words after one flag
    (["--media", "Stele", "--media", "seals"], SEAL_STELE),  # repeated flag, other order
    (["--media", " Stele ,\tseals, "], SEAL_STELE),      # stray separators around
    (["--media", "seal,SEAL,seals,Seal"], ["seals"]),    # duplicates in any spelling
    (["--media", "STELE"], ["inscription_rubbings"]),    # case of a paper name
    (["--media", "Inscription_Rubbings"], ["inscription_rubbings"]),  # case of a folder
    (["--media", "calligraphy,oracle"], ["oracle_bone_artifacts", "calligraphys"]),
    ([], FOLDERS),                                       # no --media: every medium
]


@pytest.mark.parametrize(("media", "expected"), GRID_OK)
def test_spellings_of_one_selection(tmp_path: Path, media: list[str],
                                    expected: list[str]) -> None:
    # guards against: "seal stele" read as one unknown name, "--media Seal Stele" refused
    # as unrecognized arguments, duplicates counted twice, the user's order kept
    assert _stats(tmp_path / "out", *media) == 0
    assert _chosen(tmp_path / "out") == expected


GRID_EMPTY = ["", ",", " ", ", ,", "\t"]


@pytest.mark.parametrize("value", GRID_EMPTY)
def test_an_empty_selection_is_refused(tmp_path: Path, value: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: --media "" / "," / " " silently counting every medium
    assert _stats(tmp_path / "out", "--media", value) == 2
    err = capsys.readouterr().err
    assert "--media" in err and "at least one medium" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("value", "hint"), [
    ("Sael", "did you mean 'Seal'?"),       # one letter swapped: the paper name offered
    ("seels", "did you mean 'seals'?"),     # close to the folder name
    ("seals,papyrus", None),                # one good, one unknown: still refused
    ("papyrus", None),                      # nothing close: no suggestion
])
def test_an_unknown_medium_is_refused(tmp_path: Path, value: str, hint: str | None,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: an unknown name listed without the paper names or a suggestion
    assert _stats(tmp_path / "out", "--media", value) == 2
    err = capsys.readouterr().err
    bad = value.split(",")[-1]
    assert f"media not found under {DEMO}: {bad}" in err
    assert ("did you mean" in err) == (hint is not None)
    if hint:
        assert hint in err
    assert "seals (Seal)" in err and "inscription_rubbings (Stele)" in err  # both names
    assert not (tmp_path / "out").exists()


def test_media_with_no_value_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:  # argparse: "expected at least one argument"
        _stats(tmp_path / "out", "--media")
    assert exc.value.code == 2


def test_the_python_api_reads_the_same_way(tmp_path: Path) -> None:
    # the same rule through ab.collect: [] names no medium (not "all"), ["seal stele"]
    with pytest.raises(ValueError, match="at least one medium"):
        ab.collect(DEMO, categories=[], progress=False)
    with pytest.raises(ValueError, match="at least one medium"):
        ab.collect(DEMO, categories=[" , "], progress=False)
    stats = ab.collect(DEMO, categories=["Stele seal"], progress=False)
    assert list(stats.media) == SEAL_STELE


def _spelling(index: int, style: int) -> str:
    folder, paper = PAPER[index]
    return [folder, paper, paper.upper(), paper.lower(), folder.upper()][style]


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.tuples(st.integers(0, 8), st.integers(0, 4)), min_size=1,
                      max_size=6),
       seps=st.lists(st.sampled_from([",", " ", ", ", " ,", "\t", ",,"]), min_size=6,
                     max_size=6),
       split=st.integers(0, 6))
def test_any_spelling_of_a_subset_reads_as_that_subset(tmp_path: Path,
                                                       picks: list[tuple[int, int]],
                                                       seps: list[str], split: int) -> None:
    # guards against: the order, separators, case, repeats or the number of --media flags
    # changing the selection; the expected list is the picked media in Table 2's order
    words = [_spelling(i, style) for i, style in picks]
    first, rest = words[:split] or words[:1], words[split:] if split else words[1:]
    argv = ["--media", "".join(w + s for w, s in zip(first, seps, strict=False))]
    if rest:
        argv += ["--media", *rest]
    out = Path(tempfile.mkdtemp(dir=tmp_path)) / "out"  # a new folder per example
    assert _stats(out, *argv) == 0
    assert _chosen(out) == [FOLDERS[i] for i in sorted({i for i, _ in picks})]
