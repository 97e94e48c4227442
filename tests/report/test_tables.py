"""Result tables: Markdown, CSV and LaTeX renderings and atomic writing.

Every expected string below is worked out by hand in a comment (scaled value, rounding,
which cell is best/second, column widths).
"""

from __future__ import annotations

import csv
import io
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from heritage_eval.report import Cell, Column, Table, to_csv, to_latex, to_markdown, write_table

MODEL = Column("model", "Model", kind="text")


def rows_of(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def three_models() -> Table:
    # Acc and F1 are fractions printed as percent (scale 100, 2 decimals), higher is better.
    # Acc: 0.8123 -> 81.23, 0.7456 -> 74.56, 0.6 -> 60.00: best gpt, second Qwen.
    # F1:  0.7001 -> 70.01, 0.7349 -> 73.49, 0.6512 -> 65.12: best Qwen, second gpt.
    return Table(
        columns=[MODEL, Column("acc", "Acc", scale=100, rank="higher"),
                 Column("f1", "F1", scale=100, rank="higher")],
        rows=[{"model": "gpt_4o (50%)", "acc": 0.8123, "f1": 0.7001},
              {"model": "Qwen2-VL", "acc": 0.7456, "f1": 0.7349},
              {"model": "InternVL", "acc": 0.6, "f1": 0.6512}])


# --- the 3 x 2 table in the three formats ------------------------------------------------

def test_three_models_markdown() -> None:
    # Widths: Model column max(len "gpt_4o (50%)" = 12, min 4) = 12; Acc and F1 columns
    # max(len "<u>74.56</u>" = 12, "**81.23**" = 9) = 12. Text left-padded on the right,
    # numbers padded on the left; alignment ":" + 11 dashes (text), 11 dashes + ":" (number).
    # Markdown leaves "_" alone (GFM does not emphasise inside words).
    assert to_markdown(three_models()) == (
        "| Model        |          Acc |           F1 |\n"
        "| :----------- | -----------: | -----------: |\n"
        "| gpt_4o (50%) |    **81.23** | <u>70.01</u> |\n"
        "| Qwen2-VL     | <u>74.56</u> |    **73.49** |\n"
        "| InternVL     |        60.00 |        65.12 |\n")


def test_three_models_latex() -> None:
    # "l" for the text column, "r" for numbers; "_" -> "\_", "%" -> "\%" in the model name.
    assert to_latex(three_models()) == (
        "\\begin{tabular}{l r r}\n"
        "\\toprule\n"
        "Model & Acc & F1 \\\\\n"
        "\\midrule\n"
        "gpt\\_4o (50\\%) & \\textbf{81.23} & \\underline{70.01} \\\\\n"
        "Qwen2-VL & \\underline{74.56} & \\textbf{73.49} \\\\\n"
        "InternVL & 60.00 & 65.12 \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n")


def test_three_models_csv_round_trips() -> None:
    # Scaled values with the column's 2 decimals, no styling; the model name keeps its
    # characters (csv quotes nothing here: no comma, quote or newline in it).
    assert rows_of(to_csv(three_models())) == [
        ["Model", "Acc", "F1"],
        ["gpt_4o (50%)", "81.23", "70.01"],
        ["Qwen2-VL", "74.56", "73.49"],
        ["InternVL", "60.00", "65.12"]]


def test_csv_quotes_commas_and_quotes() -> None:
    # A comma and a double quote in a name must survive csv.reader.
    t = Table([MODEL, Column("x", "x, y", decimals=1)],
              [{"model": 'Model "A", v2', "x": 1.25}])
    # 1.25 to 1 decimal as f"{1.25:.1f}" (an exact tie, to even) -> 1.2.
    assert rows_of(to_csv(t)) == [["Model", "x, y"], ['Model "A", v2', "1.2"]]


# --- ranking ------------------------------------------------------------------------------

def col_cells(md: str, col: int) -> list[str]:
    """Stripped cells of one Markdown column, body rows only."""
    return [line.split("|")[col + 1].strip() for line in md.splitlines()[2:]
            if line.startswith("|")]  # footnotes (e.g. the tie note) follow the rows


def test_ties_bold_every_best_and_underline_the_next_distinct_value() -> None:
    # 0.5, 0.5 best (both bold); 0.4, 0.4 the next distinct value (both underlined); 0.3 plain.
    t = Table([MODEL, Column("a", "A", rank="higher")],
              [{"model": m, "a": v} for m, v in zip("pqrst", [0.5, 0.4, 0.5, 0.3, 0.4],
                                                    strict=True)])
    assert col_cells(to_markdown(t), 1) == [
        "**0.50**", "<u>0.40</u>", "**0.50**", "0.30", "<u>0.40</u>"]


def test_ranking_compares_printed_values() -> None:
    # Scale 100, 2 decimals: 0.81234 -> 81.234 -> 81.23 and 0.81226 -> 81.226 -> 81.23
    # print the same, so both are best although 0.81234 > 0.81226; 0.8 -> 80.00 is second.
    t = Table([MODEL, Column("a", "A", scale=100, rank="higher")],
              [{"model": "p", "a": 0.81234}, {"model": "q", "a": 0.81226},
               {"model": "r", "a": 0.8}])
    assert col_cells(to_markdown(t), 1) == ["**81.23**", "**81.23**", "<u>80.00</u>"]


def test_lower_is_better_with_a_missing_and_a_text_cell() -> None:
    # NED, 3 decimals, lower is better: 0.05 best, 0.123 second, 0.2 plain. None prints
    # "—" and "n/a" prints as is; neither takes part in the ranking.
    t = Table([MODEL, Column("ned", "NED", decimals=3, rank="lower")],
              [{"model": "p", "ned": 0.123}, {"model": "q", "ned": None},
               {"model": "r", "ned": 0.05}, {"model": "s", "ned": "n/a"},
               {"model": "t", "ned": 0.2}])
    assert col_cells(to_markdown(t), 1) == [
        "<u>0.123</u>", "—", "**0.050**", "n/a", "0.200"]
    tex = to_latex(t).splitlines()
    assert tex[4:9] == ["p & \\underline{0.123} \\\\", "q & -- \\\\",
                        "r & \\textbf{0.050} \\\\", "s & n/a \\\\", "t & 0.200 \\\\"]
    assert rows_of(to_csv(t))[1:] == [["p", "0.123"], ["q", ""], ["r", "0.050"],
                                      ["s", "n/a"], ["t", "0.200"]]


def test_small_columns() -> None:
    # One numeric value: bolded (the best reported). All numeric values equal: all bold, no
    # underline. No numeric value: nothing marked. rank=None: nothing marked.
    t = Table([MODEL, Column("one", "One", rank="higher"), Column("eq", "Eq", rank="lower"),
               Column("none", "None", rank="higher"), Column("plain", "Plain")],
              [{"model": "p", "one": 0.7, "eq": 0.3, "none": None, "plain": 0.9},
               {"model": "q", "one": None, "eq": 0.3, "none": "n/a", "plain": 0.1}])
    md = to_markdown(t)
    assert col_cells(md, 1) == ["**0.70**", "—"]
    assert col_cells(md, 2) == ["**0.30**", "**0.30**"]
    assert col_cells(md, 3) == ["—", "n/a"]
    assert col_cells(md, 4) == ["0.90", "0.10"]


def test_rounding_half_away_from_zero_and_no_negative_zero() -> None:
    # as Python's format: 2.675 (binary 2.67499…) -> 2.67; 0.125 (exact tie, to even) ->
    # 0.12; -0.001 -> 0.00 (not -0.00);
    # -1.5 to 1 decimal -> -1.5, in LaTeX "$-$1.5"; 7 to 0 decimals -> "7".
    t = Table([Column("a", "a"), Column("b", "b"), Column("c", "c"),
               Column("d", "d", decimals=1), Column("e", "e", decimals=0)],
              [{"a": 2.675, "b": 0.125, "c": -0.001, "d": -1.5, "e": 7}])
    assert rows_of(to_csv(t))[1] == ["2.67", "0.12", "0.00", "-1.5", "7"]
    assert to_latex(t).splitlines()[4] == "2.67 & 0.12 & 0.00 & $-$1.5 & 7 \\\\"


def test_nan_is_missing_and_numpy_like_reals_are_numbers() -> None:
    # NaN prints "—" like None; Fraction is a numbers.Real (as numpy scalars are): 1/4 -> 0.25.
    from fractions import Fraction
    t = Table([Column("a", "a", rank="higher")],
              [{"a": math.nan}, {"a": Fraction(1, 4)}])  # type: ignore[dict-item]
    assert col_cells(to_markdown(t), 0) == ["—", "**0.25**"]


# --- intervals ----------------------------------------------------------------------------

def interval_table(intervals: str) -> Table:
    # 0.4520 with 95 % CI 0.4210-0.4830, scale 100: value 45.20, bounds 42.10 and 48.30,
    # half-width (0.4830 - 0.4210) / 2 * 100 = 3.10. 0.40 (no interval) is second.
    return Table([MODEL, Column("acc", "Acc", scale=100, rank="higher")],
                 [{"model": "p", "acc": Cell(0.4520, 0.4210, 0.4830)},
                  {"model": "q", "acc": 0.40}],
                 intervals=intervals)  # type: ignore[arg-type]


def test_intervals_plus_minus() -> None:
    t = interval_table("pm")
    assert col_cells(to_markdown(t), 1) == ["**45.20** ± 3.10", "<u>40.00</u>"]
    assert to_latex(t).splitlines()[4] == "p & \\textbf{45.20}{\\scriptsize$\\pm$3.10} \\\\"


def test_intervals_brackets() -> None:
    t = interval_table("brackets")
    assert col_cells(to_markdown(t), 1) == ["**45.20** [42.10, 48.30]", "<u>40.00</u>"]
    assert to_latex(t).splitlines()[4] == (
        "p & \\textbf{45.20}{\\scriptsize\\,[42.10, 48.30]} \\\\")


def test_intervals_in_csv() -> None:
    # Bound columns follow the value column; a row without an interval leaves them empty.
    for style in ("pm", "brackets"):
        assert rows_of(to_csv(interval_table(style))) == [
            ["Model", "Acc", "Acc ci_low", "Acc ci_high"],
            ["p", "45.20", "42.10", "48.30"], ["q", "40.00", "", ""]]
    # intervals="none": no interval anywhere, no bound columns.
    t = interval_table("none")
    assert rows_of(to_csv(t))[0] == ["Model", "Acc"]
    assert col_cells(to_markdown(t), 1) == ["**45.20**", "<u>40.00</u>"]


def test_asymmetric_interval_prints_half_width() -> None:
    # 0.50 with CI 0.40-0.70 (asymmetric): half-width (0.70 - 0.40) / 2 = 0.15 -> "± 0.15".
    t = Table([Column("a", "a")], [{"a": Cell(0.5, 0.4, 0.7)}], intervals="pm")
    assert col_cells(to_markdown(t), 0) == ["0.50 ± 0.15"]


# --- header groups, row groups, marks, title, footnotes ----------------------------------

def grouped() -> Table:
    # MUSE-like: Perception (Acc, F1), Reasoning (Acc), then an ungrouped Overall.
    # Perception Acc: 0.6 best, 0.5 second; F1 0.3 best, 0.2 second; the rest unranked.
    return Table(
        columns=[MODEL, Column("pa", "Acc", scale=100, decimals=1, rank="higher",
                               group="Perception"),
                 Column("pf", "F1", scale=100, decimals=1, rank="higher", group="Perception"),
                 Column("ra", "Acc", scale=100, decimals=1, group="Reasoning"),
                 Column("all", "Overall", scale=100, decimals=1)],
        rows=[{"model": "A", "pa": 0.5, "pf": 0.3, "ra": 0.25, "all": 0.4},
              {"model": "B", "pa": 0.6, "pf": 0.2, "ra": 0.5, "all": 0.45}])


def test_header_groups_latex() -> None:
    # Columns 2-3 are Perception, column 4 Reasoning: two \multicolumn spans with a
    # \cmidrule under each; the Model and Overall columns get empty group cells.
    assert to_latex(grouped()) == (
        "\\begin{tabular}{l r r r r}\n"
        "\\toprule\n"
        " & \\multicolumn{2}{c}{Perception} & \\multicolumn{1}{c}{Reasoning} &  \\\\\n"
        "\\cmidrule(lr){2-3} \\cmidrule(lr){4-4}\n"
        "Model & Acc & F1 & Acc & Overall \\\\\n"
        "\\midrule\n"
        "A & \\underline{50.0} & \\textbf{30.0} & 25.0 & 40.0 \\\\\n"
        "B & \\textbf{60.0} & \\underline{20.0} & 50.0 & 45.0 \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n")


def test_header_groups_markdown_and_csv() -> None:
    # GFM has one header line: grouped headers read "Group / Label". Widths: Model 5,
    # "Perception / Acc" 16, "Perception / F1" 15, "Reasoning / Acc" 15, "Overall" 7.
    assert to_markdown(grouped()) == (
        "| Model | Perception / Acc | Perception / F1 | Reasoning / Acc | Overall |\n"
        "| :---- | ---------------: | --------------: | --------------: | ------: |\n"
        "| A     |      <u>50.0</u> |        **30.0** |            25.0 |    40.0 |\n"
        "| B     |         **60.0** |     <u>20.0</u> |            50.0 |    45.0 |\n")
    assert rows_of(to_csv(grouped()))[0] == [
        "Model", "Perception / Acc", "Perception / F1", "Reasoning / Acc", "Overall"]


def test_same_group_not_consecutive_gives_two_spans() -> None:
    t = Table([Column("a", "a", group="G"), Column("b", "b"), Column("c", "c", group="G")],
              [{"a": 1, "b": 2, "c": 3}])
    lines = to_latex(t).splitlines()
    assert lines[2] == "\\multicolumn{1}{c}{G} &  & \\multicolumn{1}{c}{G} \\\\"
    assert lines[3] == "\\cmidrule(lr){1-1} \\cmidrule(lr){3-3}"


def row_grouped() -> Table:
    # Two blocks; ranking runs over the whole table: 0.9 (OCR block) best, 0.8 second.
    return Table([MODEL, Column("acc", "Acc", rank="higher")],
                 [{"model": "gpt", "acc": 0.8}, {"model": "qwen", "acc": 0.7},
                  {"model": "rapidocr", "acc": 0.9}],
                 row_groups=[("General VLMs", 2), ("OCR specialists", 1)])


def test_row_groups_latex() -> None:
    # The first block label follows the header \midrule; later blocks get their own \midrule.
    assert to_latex(row_grouped()) == (
        "\\begin{tabular}{l r}\n"
        "\\toprule\n"
        "Model & Acc \\\\\n"
        "\\midrule\n"
        "\\multicolumn{2}{l}{\\textit{General VLMs}} \\\\\n"
        "gpt & \\underline{0.80} \\\\\n"
        "qwen & 0.70 \\\\\n"
        "\\midrule\n"
        "\\multicolumn{2}{l}{\\textit{OCR specialists}} \\\\\n"
        "rapidocr & \\textbf{0.90} \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n")


def test_row_groups_markdown_and_csv() -> None:
    # A bold label row opens each block. Model width: "**OCR specialists**" = 19.
    assert to_markdown(row_grouped()) == (
        "| Model               |         Acc |\n"
        "| :------------------ | ----------: |\n"
        "| **General VLMs**    |             |\n"
        "| gpt                 | <u>0.80</u> |\n"
        "| qwen                |        0.70 |\n"
        "| **OCR specialists** |             |\n"
        "| rapidocr            |    **0.90** |\n")
    # CSV: a leading "group" column carries each row's block label.
    assert rows_of(to_csv(row_grouped())) == [
        ["group", "Model", "Acc"], ["General VLMs", "gpt", "0.80"],
        ["General VLMs", "qwen", "0.70"], ["OCR specialists", "rapidocr", "0.90"]]


@pytest.mark.parametrize("groups", [[("a", 2)], [("a", 2), ("b", 2)], [("a", 3), ("b", 0)]])
def test_row_groups_must_cover_the_rows(groups: list[tuple[str, int]]) -> None:
    t = row_grouped()
    t.row_groups = groups
    with pytest.raises(ValueError, match="row"):
        to_markdown(t)


def test_marks_title_and_footnotes() -> None:
    # "†" on a number, "*" on a missing value, "‡" on a model name. Markdown: marks after the
    # value ("*" escaped so it cannot start emphasis); LaTeX: \textsuperscript with \dag,
    # \ddag; CSV: marks of the number and missing cells in a trailing notes column, the
    # text cell keeps its mark. Title and footnotes: bold line / paragraphs in Markdown,
    # "% " comments in LaTeX, absent from CSV.
    t = Table([MODEL, Column("acc", "Acc", scale=100, rank="higher")],
              [{"model": Cell("Qwen", mark="‡"), "acc": Cell(0.5, mark="†")},
               {"model": "gpt", "acc": Cell(None, mark="*")}],
              title="Table 2: accuracy (%)", footnotes=["† fine-tuned", "* refused"])
    assert to_markdown(t) == (
        "**Table 2: accuracy (%)**\n"
        "\n"
        "| Model |        Acc |\n"  # width: "**50.00**†" = 10 ("†" counts 1)
        "| :---- | ---------: |\n"
        "| Qwen‡ | **50.00**† |\n"
        "| gpt   |        —\\* |\n"
        "\n"
        "† fine-tuned\n"
        "\n"
        "\\* refused\n")  # escaped: a line starting "* " would be a list item
    assert to_latex(t) == (
        "% Table 2: accuracy (%)\n"
        "\\begin{tabular}{l r}\n"
        "\\toprule\n"
        "Model & Acc \\\\\n"
        "\\midrule\n"
        "Qwen\\textsuperscript{\\ddag} & \\textbf{50.00}\\textsuperscript{\\dag} \\\\\n"
        "gpt & --\\textsuperscript{*} \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n"
        "% † fine-tuned\n"
        "% * refused\n")
    assert rows_of(to_csv(t)) == [["Model", "Acc", "notes"], ["Qwen‡", "50.00", "Acc: †"],
                                  ["gpt", "", "Acc: *"]]


def test_latex_escapes_specials_and_keeps_chinese() -> None:
    t = Table([Column("m", "名称 & #", kind="text")], [{"m": "a&b%c$d#e_f{g}h~i^j\\k 文心"}])
    lines = to_latex(t).splitlines()
    assert lines[0] == "\\begin{tabular}{l}"
    assert lines[2] == "名称 \\& \\# \\\\"
    assert lines[4] == ("a\\&b\\%c\\$d\\#e\\_f\\{g\\}h\\textasciitilde{}i"
                        "\\textasciicircum{}j\\textbackslash{}k 文心 \\\\")


def test_markdown_escapes_pipes_and_pads_wide_characters() -> None:
    # "文心一言" is 4 wide characters = display width 8; "a|b" escapes to "a\|b" (4).
    t = Table([Column("m", "Model", kind="text"), Column("x", "x", decimals=0)],
              [{"m": "文心一言", "x": 1}, {"m": "a|b", "x": 2}])
    assert to_markdown(t) == (
        "| Model    |    x |\n"
        "| :------- | ---: |\n"
        "| 文心一言 |    1 |\n"
        "| a\\|b     |    2 |\n")


# --- validation ---------------------------------------------------------------------------

def test_invalid_inputs() -> None:
    with pytest.raises(ValueError, match="decimals"):
        Column("a", "a", decimals=-1)
    with pytest.raises(ValueError, match="kind"):
        Column("a", "a", kind="percent")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="both"):
        Cell(0.5, ci_low=0.4)
    with pytest.raises(ValueError, match="ci_low"):
        Cell(0.5, 0.6, 0.4)
    with pytest.raises(ValueError, match="at least one column"):
        to_markdown(Table([], []))
    with pytest.raises(ValueError, match="duplicate"):
        to_csv(Table([Column("a", "a"), Column("a", "b")], []))
    with pytest.raises(ValueError, match="infinite"):
        to_latex(Table([Column("a", "a")], [{"a": math.inf}]))
    with pytest.raises(TypeError, match="not a number"):
        to_markdown(Table([Column("a", "a")], [{"a": True}]))
    with pytest.raises(ValueError, match="intervals"):
        to_markdown(Table([Column("a", "a")], [], intervals="sd"))  # type: ignore[arg-type]


def test_missing_key_is_missing_value_and_empty_table_has_a_header() -> None:
    t = Table([Column("a", "A"), Column("b", "B")], [{"a": 1.0}])
    assert col_cells(to_markdown(t), 1) == ["—"]
    assert rows_of(to_csv(Table(t.columns, []))) == [["A", "B"]]


# --- files --------------------------------------------------------------------------------

def test_write_table_writes_three_files_atomically(tmp_path: Path) -> None:
    t = three_models()
    stem = tmp_path / "out" / "table2.v1"  # a dot in the stem is kept; "out" is created
    paths = write_table(t, stem)
    assert paths == [tmp_path / "out" / "table2.v1.md", tmp_path / "out" / "table2.v1.csv",
                     tmp_path / "out" / "table2.v1.tex"]
    assert paths[0].read_text(encoding="utf-8") == to_markdown(t)
    assert paths[1].read_text(encoding="utf-8") == to_csv(t)
    assert paths[2].read_text(encoding="utf-8") == to_latex(t)
    assert sorted(os.listdir(tmp_path / "out")) == ["table2.v1.csv", "table2.v1.md",
                                                    "table2.v1.tex"]  # no temp files
    # Rewriting replaces the old contents; one format as a plain string.
    t.rows[2]["acc"] = 0.9
    assert write_table(t, stem, "csv") == [paths[1]]
    assert rows_of(paths[1].read_text(encoding="utf-8"))[3] == ["InternVL", "90.00", "65.12"]


def test_write_table_rejects_unknown_formats_before_writing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="formats"):
        write_table(three_models(), tmp_path / "t", ["md", "html"])
    assert os.listdir(tmp_path) == []


def test_write_table_failure_leaves_old_file_and_no_temp(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    path = tmp_path / "t.md"
    path.write_text("old", encoding="utf-8")

    def broken_replace(src: object, dst: object) -> None:
        raise OSError("disk full")

    # the tables are written by core.store's atomic writer (which also redacts secrets)
    from heritage_eval.core import store

    monkeypatch.setattr(store.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_table(three_models(), tmp_path / "t", ["md"])
    assert os.listdir(tmp_path) == ["t.md"]
    assert path.read_text(encoding="utf-8") == "old"


def test_import_is_light() -> None:
    # Start-up time matters: importing the package must not pull in pandas or matplotlib.
    code = ("import sys, heritage_eval.report; "
            "print(sorted(m for m in ('pandas', 'matplotlib', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
