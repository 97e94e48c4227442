"""Issue 22, item 5: no silent change of the data.

Kinds guarded against, each now an error row naming ``file:line``, a usage error (exit 2)
or a named warning, counted in the totals:

- a MUSE question with no turns vanished from every table;
- a misspelt turn task became a 13th task (now refused, naming the nearest task id);
- an Ancient-Bench prompt file entry with a ``{placeholder}`` was sent as written;
- ``hcsu canonicalize`` passed over a ``bei.zip`` and dropped every Bei image.

Inputs are generated (hypothesis, exhaustive grids); expected values are computed here
from the generated input alone (the edit that made a typo, the layout's folders).
"""

from __future__ import annotations

import itertools
import json
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw
from pydantic import ValidationError

from heritage_eval.benchmarks.ancient_bench.prompts import (
    BASE_PROMPT,
    MEDIUM_PROMPTS,
    load_prompts,
)
from heritage_eval.benchmarks.hcsu.canonical_batch import (
    CanonicalizeError,
    canonicalize_tree,
    is_archive,
)
from heritage_eval.benchmarks.muse.questions import (
    Question,
    QuestionFileHeader,
    QuestionTurn,
    unknown_task_reason,
    write_questions,
)
from heritage_eval.benchmarks.muse.run import load_question_set
from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS

FIXTURE_SETTINGS = settings(max_examples=150, deadline=None,
                            suppress_health_check=[HealthCheck.function_scoped_fixture])


# --- MUSE: misspelt task ids --------------------------------------------------------

def _levenshtein(a: str, b: str) -> int:
    """Edit distance by the textbook dynamic programme (independent of difflib)."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


@st.composite
def typos(draw: st.DrawFn) -> tuple[str, str]:
    """``(task id, the id with one edit)``: a character deleted, replaced, inserted or two
    neighbours swapped; never a task id itself."""
    task = draw(st.sampled_from(TASK_IDS))
    i = draw(st.integers(0, len(task) - 1))
    c = draw(st.sampled_from(string.ascii_lowercase + "_"))
    kind = draw(st.sampled_from(["delete", "replace", "insert", "swap"]))
    if kind == "delete":
        typo = task[:i] + task[i + 1:]
    elif kind == "replace":
        typo = task[:i] + c + task[i + 1:]
    elif kind == "insert":
        typo = task[:i] + c + task[i:]
    else:
        j = min(i + 1, len(task) - 1)
        typo = task[:i] + task[j] + task[i] + task[j + 1:] if j > i else task[:-1] + c
    if typo in TASK_IDS or typo == task:
        typo = task + "x"
    return task, typo


@FIXTURE_SETTINGS
@given(pair=typos())
def test_one_edit_typo_is_refused_naming_the_task(pair: tuple[str, str]) -> None:
    task, typo = pair
    reason = unknown_task_reason(typo)
    assert reason is not None and reason.startswith(f"unknown task {typo!r}")
    # the suggestion is a task at the smallest edit distance from the typo (1 here, the
    # edit made above; no two task ids are within 2 edits of each other)
    suggested = reason.split("did you mean '", 1)[1].split("'", 1)[0]
    assert suggested in TASK_IDS
    assert _levenshtein(typo, suggested) == min(_levenshtein(typo, t) for t in TASK_IDS) \
        == _levenshtein(typo, task) <= 2
    assert suggested == task
    with pytest.raises(ValidationError, match="unknown task"):
        QuestionTurn(task=typo, prompt="p", answer_format="open", answer="r")


def test_task_ids_are_far_apart() -> None:
    # why a one-edit typo has one nearest id: the ids differ pairwise by >= 3 edits
    assert min(_levenshtein(a, b) for a, b in itertools.combinations(TASK_IDS, 2)) >= 3


@pytest.mark.parametrize(("given_task", "near"), [
    ("Object Count", "object_count"), ("object-count", "object_count"),
    ("OBJECT_COUNT", "object_count"), ("scene", None), ("", None)])
def test_case_space_and_hyphen_variants_are_refused_with_a_hint(given_task: str,
                                                                 near: str | None) -> None:
    reason = unknown_task_reason(given_task)
    assert reason is not None
    assert (f"did you mean {near!r}?" in reason) if near else ("did you mean" not in reason)
    assert unknown_task_reason("object_count") is None


# --- MUSE: every line is a question or an error row naming file:line -----------------

def _turn(task: str) -> dict[str, Any]:
    return QuestionTurn(task="object_count", prompt="How many? [count] <n>",
                        answer_format="number", tag="count", answer=1
                        ).model_dump(mode="json") | {"task": task}


line_kinds = st.sampled_from(["good", "no_turns", "typo", "one_bad_turn_of_two"])


@FIXTURE_SETTINGS
@given(kinds=st.lists(line_kinds, min_size=1, max_size=10), pair=typos())
def test_no_question_line_vanishes(kinds: list[str], pair: tuple[str, str],
                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    """Property: questions read + error rows == question lines; each error row names
    ``file:line`` of its line and why (no turns / unknown task)."""
    _, typo = pair
    path = tmp_path_factory.mktemp("muse") / "q.jsonl"
    write_questions(path, QuestionFileHeader(generator_version="t", seed=0,
                                             tasks=["object_count"]), [])
    lines = []
    for n, kind in enumerate(kinds):
        turns = {"good": [_turn("object_count")], "no_turns": [],
                 "typo": [_turn(typo)],
                 "one_bad_turn_of_two": [_turn("object_count"), _turn(typo)]}[kind]
        lines.append(json.dumps({"kind": "question", "id": f"q{n}", "image_id": "i",
                                 "turns": turns}))
    with path.open("a", encoding="utf-8") as fh:
        fh.write("".join(line + "\n" for line in lines))
    qs = load_question_set(path)
    assert [q.id for q in qs.questions] == [f"q{n}" for n, k in enumerate(kinds)
                                            if k == "good"]
    bad = [n for n, k in enumerate(kinds) if k != "good"]
    assert qs.bad_lines == [n + 2 for n in bad]  # line 1 is the header
    for n, row in zip(bad, qs.bad, strict=True):
        reason = row.reason or ""
        assert reason.startswith(f"{path}:{n + 2}: question rejected: ")
        why = "no turns" if kinds[n] == "no_turns" else f"unknown task {typo!r}"
        assert why in reason


def test_question_model_refuses_zero_turns() -> None:
    with pytest.raises(ValidationError, match="the question has no turns"):
        Question(id="q", image_id="i", turns=[])


def test_muse_run_counts_the_rejected_lines(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """End to end: a misspelt task is no 13th task in summary.json; the two rejected lines
    are error records naming file:line and counted in the provenance."""
    from heritage_eval.cli.main import main

    path = tmp_path / "q.jsonl"
    write_questions(path, QuestionFileHeader(generator_version="t", seed=0,
                                             tasks=["object_count"]), [])
    rows = [{"kind": "question", "id": "good", "image_id": "i", "turns": [_turn("object_count")]},
            {"kind": "question", "id": "typo", "image_id": "i", "turns": [_turn("objet_count")]},
            {"kind": "question", "id": "empty", "image_id": "i", "turns": []}]
    with path.open("a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    main(["run", "muse", "--questions", str(path), "--model", "baseline:random",
          "--out", str(out)])
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    errors = {r["source"]: r["error"] for r in records if r["state"] == "error"}
    assert set(errors) == {"q.jsonl:3", "q.jsonl:4"}
    assert "unknown task 'objet_count' (did you mean 'object_count'?)" in errors["q.jsonl:3"]
    assert "no turns" in errors["q.jsonl:4"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["provenance"]["bad_lines"] == 2
    tasks = {r["groups"].get("task") for r in records if r["groups"]}
    assert tasks == {"object_count"}
    assert "q.jsonl:3" in capsys.readouterr().err


# --- Ancient-Bench prompt files: no {placeholder} is sent ------------------------------

FIELD_NAMES = ["", "0", "name", "medium", "a.b", "x[0]", "k!r", "k:>5"]
pieces = st.one_of(
    st.text(alphabet="ab 永。<>/", max_size=6),
    st.sampled_from(["{{", "}}", "{{x}}"]),
    st.sampled_from([f"{{{f}}}" for f in FIELD_NAMES]),
    st.sampled_from(["{", "}", "{a", "a}"]),
)


def _reference(text: str) -> tuple[bool, str | None]:
    """``(refused, text sent)`` by a scan of the braces written here (not
    ``string.Formatter``): ``{{`` / ``}}`` are literal braces; any other brace opens a
    field (refused: no placeholder is allowed) or is unbalanced (refused)."""
    out, i = [], 0
    while i < len(text):
        two = text[i:i + 2]
        if two in ("{{", "}}"):
            out.append(two[0])
            i += 2
        elif text[i] in "{}":
            return True, None
        else:
            out.append(text[i])
            i += 1
    return False, "".join(out)


@FIXTURE_SETTINGS
@given(parts=st.lists(pieces, min_size=1, max_size=6),
       key=st.sampled_from(["base", "seals", "Seal", "calligraphys"]))
def test_prompt_entries_are_sent_without_placeholders(
        parts: list[str], key: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    text = "".join(parts) + "x"  # never blank
    path = tmp_path_factory.mktemp("prompts") / "p.json"
    path.write_text(json.dumps({key: text}, ensure_ascii=False), encoding="utf-8")
    refused, sent = _reference(text)
    if refused:
        with pytest.raises(ValueError, match=rf"prompt file .*p\.json: entry '{key}'"):
            load_prompts(path)
        return
    prompts = load_prompts(path)
    folder = {"Seal": "seals"}.get(key, key)
    if key == "base":
        assert prompts.base == sent
        assert prompts.media == MEDIUM_PROMPTS
    else:
        assert prompts.base == BASE_PROMPT and prompts.media[folder] == sent


def test_ancient_bench_run_with_a_placeholder_is_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from heritage_eval.cli.main import main

    data = tmp_path / "data" / "seals"
    (data / "images").mkdir(parents=True)
    Image.new("RGB", (8, 8)).save(data / "images" / "a.png")
    (data / "conv.jsonl").write_text(json.dumps({"image": "a.png", "human_gt": "永"}) + "\n")
    prompts = tmp_path / "p.json"
    prompts.write_text(json.dumps({"seals": "Read the {medium} carefully."}))
    out = tmp_path / "run"
    assert main(["run", "ancient-bench", "--data", str(tmp_path / "data"), "--model",
                 "baseline:empty", "--prompts", str(prompts), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "entry 'seals' uses unknown placeholder(s) medium; it may use none" in err
    assert not out.exists()


# --- hcsu canonicalize: a zipped domain is never dropped without a word ---------------

def _glyph(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    img = Image.new("L", (40, 40), 255)
    ImageDraw.Draw(img).rectangle([10, 10, 30, 30], fill=0)
    img.save(path)


LAYOUTS = list(itertools.product([False, True], repeat=5))


@pytest.mark.parametrize(("bei_dir", "bei_zip", "tie_dir", "tie_zip", "stray"), LAYOUTS)
def test_canonicalize_refuses_a_domain_only_zipped(
        bei_dir: bool, bei_zip: bool, tie_dir: bool, tie_zip: bool, stray: bool,
        tmp_path: Path) -> None:
    """Refused iff some domain is only a zip (expected from the layout itself); every
    other archive is listed in the report and canonicalize.json."""
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    for name, present in (("bei", bei_dir), ("tie", tie_dir)):
        if present:
            _glyph(src / name / "cls" / "a.png")
    for name, present in (("bei.zip", bei_zip), ("tie.zip", tie_zip)):
        if present:
            (src / name).write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip
    if stray:
        (src / "extra").mkdir()
        (src / "extra" / "more.ZIP").write_bytes(b"PK\x05\x06" + bytes(18))
    only_zipped = [d for d, has_dir, has_zip in (("bei", bei_dir, bei_zip),
                                                 ("tie", tie_dir, tie_zip))
                   if has_zip and not has_dir]
    if only_zipped:
        with pytest.raises(CanonicalizeError) as caught:
            canonicalize_tree(src, dst, workers=1, progress=False)
        for d in only_zipped:
            assert f"{src / (d + '.zip')}: the {d.title()} images are zipped" in \
                str(caught.value)
            assert "extract it first" in str(caught.value)
        assert not dst.exists()
        return
    report = canonicalize_tree(src, dst, workers=1, progress=False)
    expected = sorted([f"{d}.zip" for d, has_zip in (("bei", bei_zip), ("tie", tie_zip))
                       if has_zip] + (["extra/more.ZIP"] if stray else []))
    assert sorted(n.split(":", 1)[0] for n in report.not_read) == expected
    manifest = json.loads((dst / "canonicalize.json").read_text())
    assert manifest["not_read"] == report.not_read
    # every image is accounted for (written or named as a blank crop), none left out
    assert report.written + len(report.no_glyph) == int(bei_dir) + int(tie_dir)


@pytest.mark.parametrize(("name", "archive"), [
    ("bei.zip", True), ("wild.zip.001", True), ("x.Z01", True), ("a.tar.gz", True),
    ("b.tgz", True), ("c.7z", True), ("d.rar", True), ("e.png", False),
    ("zip.png", False), ("notes.txt", False), ("bei_annotations.json", False)])
def test_archive_names(name: str, archive: bool) -> None:
    assert is_archive(name) is archive


def test_canonicalize_cli_exit_2_for_a_zipped_domain(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    from heritage_eval.cli.main import main

    src = tmp_path / "src"
    _glyph(src / "tie" / "cls" / "a.png")
    (src / "bei.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    assert main(["hcsu", "canonicalize", str(src), str(tmp_path / "dst")]) == 2
    assert "the Bei images are zipped" in capsys.readouterr().err


@pytest.mark.parametrize("with_release", [False, True])
def test_canonicalize_refuses_a_wild_archive_alone(tmp_path: Path, with_release: bool) -> None:
    """The Wild parts alone: refused once (not once per part); beside a release folder
    they are only named as not read."""
    src = tmp_path / "src"
    src.mkdir()
    for part in ("wild.zip.001", "wild.zip.002"):
        (src / part).write_bytes(b"\0" * 8)
    if with_release:
        _glyph(src / "tie" / "cls" / "a.png")
        report = canonicalize_tree(src, tmp_path / "dst", workers=1, progress=False)
        assert [n.split(":", 1)[0] for n in report.not_read] == ["wild.zip.001",
                                                                 "wild.zip.002"]
        return
    with pytest.raises(CanonicalizeError) as caught:
        canonicalize_tree(src, tmp_path / "dst", workers=1, progress=False)
    assert str(caught.value).count("the Wild images are in a split archive") == 1
