"""``heritage-eval muse assemble``: N questions per task from a generated pool, balanced
over style / theme / difficulty / image, seeded per task, frozen in the generate format."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from heritage_eval.benchmarks.muse.assemble import assemble
from heritage_eval.benchmarks.muse.assemble_alloc import depth_quotas
from heritage_eval.benchmarks.muse.assemble_pool import Candidate
from heritage_eval.benchmarks.muse.assemble_report import fair_share
from heritage_eval.benchmarks.muse.questions import (
    OptionRecord,
    Question,
    QuestionFileHeader,
    QuestionTurn,
    read_questions,
    write_questions,
)
from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS
from heritage_eval.cli.main import main
from tests.conftest import realdata

REAL = realdata("muse")


# --- synthetic pools in the real format -------------------------------------------------

def _count(image: str, k: int = 0, answer: int = 2) -> Question:
    turn = QuestionTurn(task="object_count", prompt="How many jugs are there?",
                        answer_format="number", answer=answer, images=[f"@images/{image}.jpg"])
    return Question(id=f"{image}:object_count:{k}", image_id=image, turns=[turn])


def _jigsaw(image: str, k: int, grid: list[int]) -> Question:
    opts = [OptionRecord(label=lab, text=f"piece {lab}",
                         distractor_type="correct" if lab == "A" else "same_image_piece")
            for lab in "ABCD"]
    turn = QuestionTurn(task="jigsaw_puzzle", prompt="Which piece fills the hole?",
                        answer_format="choice", options=opts, answer="A",
                        params={"grid": grid})
    return Question(id=f"{image}:jigsaw_puzzle:{k}", image_id=image, turns=[turn])


def _pool(path: Path, questions: list[Question]) -> Path:
    tasks = [t for t in TASK_IDS if any(q.turns[0].task == t for q in questions)]
    write_questions(path, QuestionFileHeader(generator_version="test", seed=0, tasks=tasks),
                    questions)
    return path


def _ids(path: Path) -> list[str]:
    return [q.id for q in read_questions(path)[1]]


# --- a pool generated from the real sample ----------------------------------------------

@pytest.fixture(scope="module")
def real_pool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pool") / "pool.jsonl"
    assert main(["muse", "generate", "--annotations", str(REAL / "annotations.json"),
                 "--images", str(REAL), "--out", str(out), "--no-progress"]) == 0
    return out


def _per_task(path: Path) -> Counter[str]:
    """Questions per task: a question counts once for every task it has a turn of."""
    return Counter(t for q in read_questions(path)[1] for t in {turn.task for turn in q.turns})


@pytest.mark.parametrize("n", [5, 15])
def test_real_pool_counts_are_min_of_n_and_available(real_pool: Path, tmp_path: Path, n: int,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    out = tmp_path / "bench.jsonl"
    assert main(["muse", "assemble", "--questions", str(real_pool), "--per-task", str(n),
                 "--seed", "1", "--out", str(out), "--no-progress"]) == 0
    available = _per_task(real_pool)
    # the real sample (SCHEMA.md): 4 remote interactions (2 turns each), 7 images → 7
    # jigsaw / scene / relative-position questions, 13 of 23 people with an emotion cause
    assert available["remote_interaction"] == 4 and available["jigsaw_puzzle"] == 7
    assert available["object_classification"] == 23
    assert available["emotion_cause_inference"] == 13
    got = _per_task(out)
    assert got == {t: min(n, available[t]) for t in available}
    report = json.loads((tmp_path / "bench_balance.json").read_text("utf-8"))
    short = sorted(t for t, r in report["tasks"].items() if r["short"])
    assert short == sorted(t for t in available if available[t] < n)
    assert "remote_interaction" in short
    err = capsys.readouterr().err
    assert "warning: remote_interaction: only 4 question(s) in the pool" in err
    md = (tmp_path / "bench_balance.md").read_text("utf-8")
    assert "## Tasks that cannot reach N" in md and "`remote_interaction`: 4 available" in md


def test_same_seed_byte_identical_other_seed_differs(real_pool: Path, tmp_path: Path) -> None:
    outs = []
    for folder, seed in (("a", 3), ("b", 3), ("c", 4)):
        out = tmp_path / folder / "bench.jsonl"
        assert main(["muse", "assemble", "--questions", str(real_pool), "--per-task", "4",
                     "--seed", str(seed), "--out", str(out), "--no-progress"]) == 0
        outs.append(out)
    a, b, c = outs
    assert a.read_bytes() == b.read_bytes()
    assert (a.parent / "bench_balance.json").read_bytes() == \
        (b.parent / "bench_balance.json").read_bytes()
    pieces_a = sorted(p.relative_to(a.parent) for p in (a.parent / "bench_assets").rglob("*"))
    assert pieces_a and pieces_a == sorted(p.relative_to(b.parent)
                                           for p in (b.parent / "bench_assets").rglob("*"))
    assert set(_ids(a)) != set(_ids(c))
    header = read_questions(c)[0]
    assert header.source["assembly"]["seed"] == 4
    assert header.source["assembly"]["strategy"] == "balanced"
    assert header.source["assembly"]["per_task"] == 4
    assert len(header.source["assembly"]["pool_sha256"]) == 64


def test_output_runs_with_run_muse_and_refuses_overwrite(real_pool: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    out = tmp_path / "frozen" / "bench.jsonl"
    args = ["muse", "assemble", "--questions", str(real_pool), "--per-task", "3",
            "--out", str(out), "--no-progress"]
    assert main(args) == 0
    header, questions = read_questions(out)  # the strict loader of question files
    assert header.schema_version == "muse-questions/2"
    assert header.source["n_questions"] == len(questions)
    # the artworks folder, recomputed relative to the output's folder
    rel = header.source["images_dir_relative"]
    assert (out.parent / rel / "images" / "vibert_the_duet_1897.jpg").is_file()
    # generated images now live in the output's own assets folder
    refs = [o.image for q in questions for t in q.turns for o in t.options if o.image]
    assert refs and all(r.startswith("bench_assets/") and (out.parent / r).is_file()
                        for r in refs)
    before = out.read_bytes()
    assert main([*args, "--seed", "9"]) == 2
    assert "exists" in capsys.readouterr().err and out.read_bytes() == before
    assert main([*args, "--seed", "9", "--overwrite"]) == 0 and out.read_bytes() != before
    run = tmp_path / "run"
    assert main(["run", "muse", "--questions", str(out), "--model", "baseline:random",
                 "--limit", "5", "--out", str(run)]) == 0
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    assert summary  # a scored run folder exists
    assert (run / "samples.jsonl").read_text("utf-8").count("\n") >= 12


def test_strata_sources_csv_then_annotations(real_pool: Path, tmp_path: Path) -> None:
    tasks = json.loads((REAL / "annotations.json").read_text("utf-8"))
    for t in tasks:  # a curator adds the artist to each task's data
        t["data"]["artist"] = Path(t["data"]["image"]).stem.split("_")[0].title()
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks), encoding="utf-8")
    strata = tmp_path / "strata.csv"
    strata.write_text("image_id,style\nutamaro_hour_of_the_dragon,Ukiyo-e\n"
                      "vibert_the_duet_1897,Academic\nnot_in_pool,Cubism\n", encoding="utf-8")
    out = tmp_path / "b.jsonl"
    result = assemble(real_pool, out, 23, annotations=export, strata_csv=strata)
    sources = result.report["strata_sources"]
    # 2 styles from the CSV, the other 5 images' from data.artist; themes from the export
    assert sources == {"style": {"annotations": 5, "csv": 2}, "theme": {"annotations": 7}}
    assert any("not_in_pool" in w for w in result.warnings)
    styles = {r["value"]: r["available"] for r in
              result.report["groups"]["jigsaw_puzzle"]["strata"]["style"]}
    assert styles == {"Academic": 1, "Anker": 1, "Durer": 1, "Gauguin": 1, "Giotto": 1,
                      "Ukiyo-e": 1, "Waldmuller": 1}
    # theme = the scene label's category in the pool header (GENERATION.md: church organ
    # loft → religious; the two unassigned labels keep their own theme)
    themes = {r["value"]: r["available"] for r in
              result.report["groups"]["scene_classification"]["strata"]["theme"]}
    header = read_questions(real_pool)[0]
    expected: Counter[str] = Counter()
    for label, entry in header.source["scene_categories"].items():
        expected[entry["category"] or f"(unassigned) {label}"] += 1
    assert themes == dict(expected) and themes["religious and cultural places"] == 1
    # without --annotations the themes come from the pool's scene questions: the same
    plain = assemble(real_pool, tmp_path / "p.jsonl", 23)
    assert plain.report["strata_sources"] == {"style": {"unknown": 7}, "theme": {"pool": 7}}
    assert {r["value"]: r["available"] for r in plain.report["groups"][
        "scene_classification"]["strata"]["theme"]} == themes


# --- allocation on pools with known strata -------------------------------------------

def test_style_theme_allocation_matches_hand_computation(tmp_path: Path) -> None:
    # cells (style, theme): (S1,T1) 10, (S1,T2) 5, (S2,T1) 1, (S2,T2) 3, (S3,T2) 2; one
    # question per image, one difficulty (count 2). N = 12. By hand:
    # - styles, water-filling over totals S1 15, S2 4, S3 2: S3 2, S2 4, S1 the other 6;
    # - themes: S3 can give only T2 (2), S2 only T1 1 + T2 3, so T2 >= 5; S1's 6 picks
    #   balance the themes: T1 = 1 + x, T2 = 5 + 6 - x, equal at x = 5 → 6 / 6;
    # - so the cells are (S1,T1) 5, (S1,T2) 1, (S2,T1) 1, (S2,T2) 3, (S3,T2) 2.
    #   (Step by step, least-filled first, ties → more candidates left: S1T1, S2T2, S3T2,
    #   S1T1, S2T2, S3T2, S1T1, S2T1, S1T1, S2T2, S1T1, S1T2 → the same.)
    cells = {("S1", "T1"): 10, ("S1", "T2"): 5, ("S2", "T1"): 1, ("S2", "T2"): 3,
             ("S3", "T2"): 2}
    rows, questions = ["image_id,style,theme"], []
    for (style, theme), n in cells.items():
        for k in range(n):
            image = f"{style}{theme}_{k}"
            rows.append(f"{image},{style},{theme}")
            questions.append(_count(image))
    strata = tmp_path / "strata.csv"
    strata.write_text("\n".join(rows) + "\n", encoding="utf-8")
    pool = _pool(tmp_path / "pool.jsonl", questions)
    for seed in (0, 1, 2):  # the counts do not depend on the seed, only which images
        out = tmp_path / f"out{seed}.jsonl"
        result = assemble(pool, out, 12, seed=seed, strata_csv=strata)
        got = Counter(tuple(q.image_id.split("_")[0][i:i + 2] for i in (0, 2))
                      for q in read_questions(out)[1])
        assert got == {("S1", "T1"): 5, ("S1", "T2"): 1, ("S2", "T1"): 1, ("S2", "T2"): 3,
                       ("S3", "T2"): 2}
        g = result.report["groups"]["object_count"]["strata"]
        assert [(r["value"], r["chosen"], r["target"]) for r in g["style"]] == [
            ("S1", 6, 6.0), ("S2", 4, 4.0), ("S3", 2, 2.0)]
        # theme fair share ignores the style constraint: T1 11, T2 10 → 6 / 6
        assert [(r["value"], r["chosen"], r["target"]) for r in g["theme"]] == [
            ("T1", 6, 6.0), ("T2", 6, 6.0)]


def test_difficulty_and_image_cap(tmp_path: Path) -> None:
    # jigsaw grids 3x4 ×6, 4x4 ×2, 3x6 ×1 (one per image), N = 6: water-filling gives
    # 3x6 1, 4x4 2, 3x4 the remaining 3
    grids = [[3, 4]] * 6 + [[4, 4]] * 2 + [[3, 6]]
    pool = _pool(tmp_path / "j.jsonl", [_jigsaw(f"img{i}", 0, g) for i, g in enumerate(grids)])
    out = tmp_path / "j_out.jsonl"
    result = assemble(pool, out, 6)
    got = Counter("x".join(map(str, q.turns[0].params["grid"])) for q in read_questions(out)[1])
    assert got == {"3x4": 3, "4x4": 2, "3x6": 1}
    rows = result.report["groups"]["jigsaw_puzzle"]["strata"]["difficulty"]
    assert [(r["value"], r["target"]) for r in rows] == [
        ("grid=3x4", 3.0), ("grid=3x6", 1.0), ("grid=4x4", 2.0)]
    # images A ×6, B ×2, C ×1 questions. N = 6, slack 1.5: cap ceil(ceil(6 / 3) × 1.5)
    # = 3; round robin over images → A 3, B 2, C 1. N = 7, slack 1: cap ceil(7 / 3) = 3;
    # only A is left once it has 3, so the cap rises to 4 → A 4, B 2, C 1.
    qs = [_count("A", k) for k in range(6)] + [_count("B", k) for k in range(2)] + [_count("C")]
    pool = _pool(tmp_path / "c.jsonl", qs)
    for n, slack, a, cap_end in ((6, 1.5, 3, 3), (7, 1.0, 4, 4)):
        out = tmp_path / f"c{n}.jsonl"
        result = assemble(pool, out, n, image_slack=slack)
        assert Counter(q.image_id for q in read_questions(out)[1]) == {"A": a, "B": 2, "C": 1}
        g = result.report["groups"]["object_count"]
        assert g["image_cap"] == {"start": 3, "end": cap_end}
        assert g["image_max"] == {"image_id": "A", "count": a, "share": round(a / n, 4)}


def test_random_strategy_is_uniform_seeded_per_task(tmp_path: Path) -> None:
    counts = [_count(f"img{i}") for i in range(8)]
    jigsaws = [_jigsaw(f"img{i}", 0, [3, 4]) for i in range(8)]
    # expected: group_seed(4, "object_count") =
    # int(stable_hash(["muse-assemble", 4, "object_count"], 64), 16);
    # numpy.random.default_rng(that).choice(8, size=3, replace=False) → [6, 3, 2]
    # (the 8 candidates in pool order), written in pool order: img2, img3, img6
    expected = ["img2:object_count:0", "img3:object_count:0", "img6:object_count:0"]
    only = _pool(tmp_path / "only.jsonl", counts)
    both = _pool(tmp_path / "both.jsonl", jigsaws + counts)
    for pool in (only, both):  # adding a task does not change another task's draw
        out = tmp_path / f"{pool.stem}_r.jsonl"
        assert main(["muse", "assemble", "--questions", str(pool), "--per-task", "3",
                     "--seed", "4", "--strategy", "random", "--out", str(out),
                     "--no-progress"]) == 0
        assert [i for i in _ids(out) if "object_count" in i] == expected
    # jigsaw: default_rng(group_seed(4, "jigsaw_puzzle")).choice(8, 3, replace=False)
    # → [2, 0, 5]
    assert [i for i in _ids(tmp_path / "both_r.jsonl") if "jigsaw" in i] == [
        "img0:jigsaw_puzzle:0", "img2:jigsaw_puzzle:0", "img5:jigsaw_puzzle:0"]
    header = read_questions(tmp_path / "both_r.jsonl")[0]
    assert header.source["assembly"]["strategy"] == "random"


def _cand(i: int, depth: int) -> Candidate:
    tasks = tuple(TASK_IDS[:depth])
    return Candidate(index=i, lineno=i + 2, offset=0, qid=str(i), image_id=str(i),
                     group="affective_dialogue", tasks=tasks, difficulty="all")


def test_depth_quotas_and_fair_share() -> None:
    # the real sample: 13 dialogues reach task 4, 10 stop at task 3. N = 15: task 4 gets
    # min(15, 13) = 13 full dialogues, tasks 1-3 need 15 → 2 more of depth 3
    cands = [_cand(i, 4) for i in range(13)] + [_cand(13 + i, 3) for i in range(10)]
    assert depth_quotas(cands, 15) == {4: 13, 3: 2}
    assert depth_quotas(cands, 5) == {4: 5}
    assert depth_quotas(cands, 30) == {4: 13, 3: 10}
    # fair_share docstring example: c 1; a and b would get 5.5, b has 5 → a 6
    assert fair_share({"a": 10, "b": 5, "c": 1}, 12) == {"a": 6.0, "b": 5.0, "c": 1.0}
    assert fair_share({"a": 3, "b": 3}, 3) == {"a": 1.5, "b": 1.5}


def test_bad_input_and_strict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pool = _pool(tmp_path / "pool.jsonl", [_count("A"), _count("B", answer=3)])
    lines = pool.read_text("utf-8").splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([lines[0], lines[1], "{not json"]) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["muse", "assemble", "--questions", str(broken), "--per-task", "1",
                 "--out", str(out), "--no-progress"]) == 2
    assert f"{broken}:3: invalid JSON" in capsys.readouterr().err and not out.exists()
    bad_csv = tmp_path / "s.csv"
    bad_csv.write_text("image,artist\nA,x\n", encoding="utf-8")
    assert main(["muse", "assemble", "--questions", str(pool), "--per-task", "1",
                 "--strata", str(bad_csv), "--out", str(out), "--no-progress"]) == 2
    assert f"{bad_csv}:1: expected columns image_id" in capsys.readouterr().err
    assert main(["muse", "assemble", "--questions", str(pool), "--per-task", "5",
                 "--strict", "--out", str(out), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "object_count (2 in the pool)" in err and not out.exists()
    assert not (tmp_path / "out_assets").exists()
    assert main(["muse", "assemble", "--questions", str(pool), "--out", str(pool),
                 "--overwrite"]) == 2
    assert "is the pool itself" in capsys.readouterr().err
    # pool.json next to pool.jsonl would replace the pool's own pool_assets/ folder
    assert main(["muse", "assemble", "--questions", str(pool), "--out",
                 str(tmp_path / "pool.json")]) == 2
    assert "share the pool's assets folder" in capsys.readouterr().err


def test_strata_ids_not_in_the_pool(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    pool = _pool(tmp_path / "pool.jsonl", [_count("A"), _count("B", answer=3)])
    out = tmp_path / "out.jsonl"
    none = tmp_path / "none.csv"
    none.write_text("image_id,style\nA.png,x\nB.png,y\n", encoding="utf-8")
    # before the fix: exit 0, the table silently unused
    assert main(["muse", "assemble", "--questions", str(pool), "--per-task", "1",
                 "--strata", str(none), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"{none}: none of its 2 image id(s) is in the pool (A.png, B.png)" in err
    assert "the pool's ids are like A, B" in err and not out.exists()
    some = tmp_path / "some.csv"
    some.write_text("image_id,style\nA,x\n" + "".join(f"Z{i},y\n" for i in range(7)),
                    encoding="utf-8")
    assert main(["muse", "assemble", "--questions", str(pool), "--per-task", "1",
                 "--strata", str(some), "--out", str(out), "--no-progress"]) == 0
    # 7 of the 8 ids are unknown; the first 5 (sorted) are named
    assert (f"warning: --strata {some}: 7 of its 8 image id(s) not in the pool, ignored: "
            "Z0, Z1, Z2, Z3, Z4 …") in capsys.readouterr().err


def test_assemble_help_is_wrapped(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["muse", "assemble", "--help"])
    text = capsys.readouterr().out
    assert "Sample N questions per task" in text
    assert max(len(line) for line in text.splitlines()) <= 100
