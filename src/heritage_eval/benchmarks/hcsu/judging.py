"""The HCSU judging rubric (Terminology, Richness; 0–10) and the expert-reference Δ.

The judge reads one style description plus the facts of the work it describes
(calligrapher, script, medium) and scores two dimensions (§4.1 protocol 2):
*terminology* (are the calligraphic concepts named and used correctly for this work?)
and *richness* (how much concrete, distinctive visual detail does it give?). The expert
references are judged with the same rubric, and each model's Δ is its mean minus the
experts' mean over the same samples (Table 3).
"""

from __future__ import annotations

from heritage_eval.benchmarks.hcsu.schema import MEDIUM, StyleClass
from heritage_eval.metrics.judge import Rubric

TERMINOLOGY = "terminology"
RICHNESS = "richness"

RUBRIC = Rubric(
    name="hcsu-style-description",
    system=("You are a strict reviewer of writing about Chinese calligraphy. You grade "
            "style descriptions and reply with JSON only."),
    instructions=(
        "Grade the style description below of a calligraphy work.\n"
        "Facts about the work: {context}\n\n"
        "Description:\n\"\"\"\n{text}\n\"\"\"\n\n"
        "Give two scores from 0 to 10 (decimals allowed):\n"
        "- terminology: how correctly the description uses the concepts and terms of "
        "calligraphy (brush technique, stroke types, script features, structure, ink) for "
        "a work with these facts. 0 = no calligraphic terms or mostly wrong ones; 5 = some "
        "correct terms, vague or partly mistaken; 10 = precise terms, all used correctly.\n"
        "- richness: how much concrete visual detail the description gives and how well it "
        "sets this hand apart from others (stroke entries and endings, thickness changes, "
        "proportions, spacing, ink tone, rhythm). 0 = generic praise with no visual detail; "
        "5 = a few specific observations; 10 = many specific, distinctive observations.\n"
        "Judge the text as written; length alone earns nothing.\n"
        "Reply with exactly one JSON object and nothing else, for example "
        "{{\"terminology\": 6, \"richness\": 4.5}}"),
    dimensions=(TERMINOLOGY, RICHNESS))


def judge_context(cls: StyleClass) -> str:
    """The facts shown to the judge for a description of class ``cls``."""
    return (f"calligrapher {cls.calligrapher}; script {cls.script_type}; "
            f"medium {MEDIUM[cls.domain]}")


def expert_item_id(class_key: str) -> str:
    """Judge-request id of the expert reference of a class (never a sample id)."""
    return f"expert::{class_key}"
