"""A selection option (``--tasks``, ``--categories``, ``--scripts``) names a set: the
same names in another order, repeated or by an alias are the same configuration — one
fingerprint, and a folder that recorded another spelling still resumes, because the
recorded value is read again by today's option rules
(``core/option_spec.selection_reader``, ``core/rundir.py`` ``canonical``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import pytest
from hypothesis import given
from hypothesis import strategies as st

from heritage_eval.api import run_config
from heritage_eval.benchmarks.ancient_bench.benchmark import AncientBench
from heritage_eval.cli.main import main
from heritage_eval.core.config import BenchmarkOptions
from heritage_eval.core.option_spec import opt, selection_reader, split_list
from heritage_eval.core.rundir import _same_config

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "ancient_bench"
NAMES = ["a", "b", "c", "d"]
ALIAS = {"A": "a", "B": "b"}  # an alias of a choice, as a Chinese key is of a task id


class Toy(BenchmarkOptions):
    tasks: Annotated[tuple[str, ...] | None, opt(
        "t", list_choices=(*NAMES, *ALIAS), canonical=ALIAS.get)] = None
    order: Annotated[tuple[str, ...], opt("o", nargs_plus=True)] = ()


@given(st.lists(st.sampled_from([*NAMES, *ALIAS]), min_size=1, max_size=6),
       st.randoms(use_true_random=False))
def test_a_selection_in_any_order_or_spelling_is_one_config(names: list[str],
                                                           rnd: object) -> None:
    shuffled = list(names)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    # the rule, by hand: each name as its choice id, once, in the order of the choices
    ids = {ALIAS.get(n, n) for n in names}
    expected = [c for c in NAMES if c in ids]
    assert split_list([" ".join(shuffled)], [*NAMES, *ALIAS], "", ALIAS.get) == expected
    read = selection_reader(Toy)
    assert read("tasks", shuffled) == expected
    assert _same_config({"tasks": shuffled}, {"tasks": expected}, {}, read)
    # another set of names is another configuration
    other = [n for n in NAMES if n not in ids] or None
    assert not _same_config({"tasks": shuffled}, {"tasks": other}, {}, read)
    # a list that is not a selection keeps its order
    if len(set(names)) > 1 and shuffled != names:
        assert not _same_config({"order": names}, {"order": shuffled}, {}, read)


def test_a_value_todays_rules_refuse_is_compared_as_recorded() -> None:
    read = selection_reader(Toy)
    assert read("tasks", ["zz"]) == ["zz"] and read("tasks", None) is None
    assert not _same_config({"tasks": ["zz"]}, {"tasks": ["a"]}, {}, read)


def test_one_fingerprint_for_the_same_media_in_any_order_or_name() -> None:
    bench = AncientBench()
    prints = {json.dumps(bench.fingerprint(run_config(
        "ancient-bench", data=str(DEMO), out="o", model="rapidocr", categories=value)),
        sort_keys=True)
        for value in ("seals,bronze_rubbings", "Bronze,seals", ["SEAL", "bronze_rubbings"],
                  "seal bronze seals")}
    assert len(prints) == 1
    # a folder recorded with paper names in the user's order reads as today's
    read = selection_reader(bench.Options)
    assert read("categories", ["Seal", "Bronze"]) == ["bronze_rubbings", "seals"]


@pytest.mark.parametrize("value", ["", ",", [], [" "]])
def test_an_empty_selection_of_media_is_refused(value: object) -> None:
    from heritage_eval.core.config import OptionsError

    with pytest.raises(OptionsError, match="needs at least one medium"):
        run_config("ancient-bench", data=".", out="o", categories=value)


@pytest.mark.skipif(not DEMO.is_dir(), reason=f"bundled demo data not found at {DEMO}")
def test_the_same_media_in_another_order_resumes_the_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["run", "ancient-bench", "--data", str(DEMO), "--model", "rapidocr",
            "--limit", "1", "--out", str(tmp_path / "run")]
    assert main([*base, "--categories", "seals,bronze_rubbings"]) == 0
    capsys.readouterr()
    for words in (["Bronze", "seals"], ["Bronze", "--categories", "seal"]):
        # a repeated flag adds up (argparse 'extend'): both media, not only the last
        assert main([*base, "--categories", *words]) == 0
        err = capsys.readouterr().err
        assert "another configuration" not in err
        # both answers came from the cache: the command is the same run
        assert "answers from the cache (cache.sqlite): 2 of 2" in err


def test_chronicles_task_and_script_aliases_are_one_selection() -> None:
    from heritage_eval.benchmarks.registry import benchmark

    bench = benchmark("chronicles-ocr")
    prints = set()
    # 字符提取 is the official key of parsing, 字体分类 of classification; 金文 and 篆书
    # are the release's names of the bronze and seal scripts (chronicles_ocr.names)
    for tasks, scripts in ((["parsing", "classification"], "bronze,seal"),
                           ("字符提取,字体分类", ["金文", "篆书"]),
                           ("classification 字符提取 parsing", "seal 篆书 bronze")):
        config = run_config("chronicles-ocr", data=".", out="o", model="rapidocr",
                            tasks=tasks, scripts=scripts)
        assert config.options.tasks == ("parsing", "classification")  # type: ignore[attr-defined]
        prints.add(json.dumps(bench.fingerprint(config), sort_keys=True))
    assert len(prints) == 1


def test_a_list_option_given_twice_adds_up() -> None:
    import argparse

    from heritage_eval.cliargs.list_option import ListOption

    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", action=ListOption, list_choices=NAMES, default=None)
    assert parser.parse_args(["--tasks", "c", "--tasks", "a,c"]).tasks == ["a", "c"]
    assert parser.parse_args([]).tasks is None


@pytest.mark.skipif(not DEMO.is_dir(), reason=f"bundled demo data not found at {DEMO}")
@pytest.mark.parametrize(("typed", "suggested"), [("Sael", "'Seal'"), ("bronz", "'Bronze'"),
                                                  ("seels", "'seals'"), ("zzz", None)])
def test_an_unknown_medium_gets_the_closest_name(typed: str, suggested: str | None) -> None:
    from heritage_eval.benchmarks.ancient_bench.loader import load_release

    with pytest.raises(ValueError, match="categories not found") as err:
        load_release(DEMO, [typed], keep_samples=False)
    text = str(err.value)
    assert "seals (Seal)" in text  # what was found, by both names
    if suggested is None:
        assert "did you mean" not in text
    else:
        assert f"(did you mean {suggested}?)" in text
