"""A refused list value names the closest choice (``core.option_spec.split_list``), and
the command line adds no option name to an error about a known option's value (it used
to say "did you mean '--tasks'?" to a user who had typed ``--tasks``)."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS
from heritage_eval.cli.main import main
from heritage_eval.cli.suggest import hint
from heritage_eval.core.option_spec import split_list


@given(task=st.sampled_from(TASK_IDS), data=st.data())
def test_a_one_letter_slip_names_the_task(task: str, data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(task) - 1))
    typo = task[:at] + task[at + 1:]  # one letter left out
    with pytest.raises(ValueError) as exc:
        split_list([typo], TASK_IDS, "--tasks")
    # the 12 MUSE task ids share no long run of letters, so the one with a letter
    # dropped is the closest (difflib ratio 2(n-1)/(2n-1) >= 0.8); checked for all
    # 12 x len(id) slips
    assert f"invalid choice(s) {typo!r} (did you mean {task!r}?)" in str(exc.value)


def test_nothing_close_names_nothing() -> None:
    with pytest.raises(ValueError) as exc:
        split_list(["3", "zz"], TASK_IDS, "--tasks")
    assert "did you mean" not in str(exc.value)
    assert "invalid choice(s) '3', 'zz' (choose from object_classification," in str(
        exc.value)


def test_a_bad_value_of_a_known_option_gets_no_option_hint() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks")
    parser.add_argument("--model", required=True)
    assert hint(parser, "argument --tasks: invalid choice(s) '3'", ["--tasks", "3"]) == ""
    # behind a "required" error a mistyped option is still named
    assert hint(parser, "the following arguments are required: --model",
                ["--modle", "x"]) == " (did you mean '--model'?)"


def test_command_line_message(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "muse", "--data", "q.jsonl", "--tasks", "object_cuont"])
    err = capsys.readouterr().err
    assert "invalid choice(s) 'object_cuont' (did you mean 'object_count'?)" in err
    assert "'--tasks'?" not in err
