"""What each distractor type id means, for the legends of the distractor figures.

The ids are those recorded in ``OptionRecord.distractor_type`` by the generators (the
*Tasks* table of ``GENERATION.md`` and each generator's docstring); a figure's legend
shows ``id: meaning`` so that codes such as ``oosi`` or ``ca_d`` need no look-up.
"""

from __future__ import annotations

#: distractor type id -> short meaning (legend text)
MEANINGS: dict[str, str] = {
    "correct": "the correct option",
    "none": "\u201cNone of the above\u201d while the truth was an option",
    # task 5, activity localization
    "other_activity": "the box of another activity",
    "person_or_object": "the box of a person or object",
    "sub_region": "a sub-box inside the true box",
    "random_region": "a random box of about the true box's size",
    # task 6, activity description (the paper's codes)
    "oa": "another activity's description, same image",
    "oosi": "an object of the same image (short phrase)",
    "oodi": "an object of another image (short phrase)",
    "oisi": "a person of the same image (short phrase)",
    "oidi": "a person of another image (short phrase)",
    "so": "the true description with two noun phrases swapped",
    "ca_s": "2\u20133 other descriptions of the same image, concatenated",
    "ca_d": "1\u20133 descriptions of another image, concatenated",
    "neg": "the annotators' negative description",
    # task 8, jigsaw puzzle
    "same_image_piece": "another piece of the same image",
    "merged_neighbor": "the piece merged with a neighbour",
    "zoomed_region": "a zoomed-in region",
    "other_image_piece": "a piece of another image",
    # task 11, remote interaction
    "other_interaction": "entity / evidence of another interaction",
    "same_image_entity": "another boxed person or object of the image",
    "mismatched_pair": "a text shown with a box that is not its own",
    "cross_image": "an entity / evidence of another image",
    # tasks 1, 2, 7, 12
    "other_category": "another person category",
    "other_emotion": "another emotion",
    "other_cluster": "a culture label of another cluster",
    "other_scene_category": "a scene label of another category",
}

UNKNOWN = "(undocumented type)"


def meaning(code: str) -> str:
    """The meaning of ``code`` (:data:`UNKNOWN` for an id not in :data:`MEANINGS`)."""
    return MEANINGS.get(code, UNKNOWN)


def legend_label(code: str) -> str:
    """``"code: meaning"``, the legend entry of one distractor type."""
    return f"{code}: {meaning(code)}"
