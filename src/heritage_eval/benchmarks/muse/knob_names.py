"""The names of the MUSE generator knobs settable with ``muse generate --set`` (global
ones first, then ``TASK.KNOB`` in task order), as a plain list.

They are the fields of :class:`~.params.GenerationParams` (:func:`~.params.knob_lines`
gives them with their defaults); written out here so that ``muse generate --help``, which
names them, does not import the parameter models (pydantic, and NumPy through the text
embedder). tests/cli/test_startup_imports.py checks that the two lists are equal.
"""

from __future__ import annotations

#: Every knob name, e.g. ``"draw_boxes"``, ``"jigsaw_puzzle.grids"``.
KNOB_NAMES: tuple[str, ...] = (
    "draw_boxes", "box_decimals", "answer_style",
    "object_classification.max_per_image", "object_classification.n_options",
    "emotion_detection.max_per_image", "emotion_detection.n_options",
    "visual_clue_identification.max_per_image",
    "emotion_cause_inference.max_per_image",
    "activity_localization.max_per_image", "activity_localization.n_options",
    "activity_localization.distractor_types", "activity_localization.max_overlap",
    "activity_localization.sub_region_scale", "activity_localization.none_correct_rate",
    "activity_description.max_per_image", "activity_description.n_options",
    "activity_description.distractor_types", "activity_description.max_overlap",
    "activity_description.ca_length_ratio", "activity_description.max_short_options",
    "activity_description.none_correct_rate",
    "cultural_identification.max_per_image", "cultural_identification.n_options",
    "cultural_identification.n_clusters", "cultural_identification.exact_clusters",
    "cultural_identification.embedder", "cultural_identification.embedder_base_url",
    "cultural_identification.max_negative_cosine",
    "jigsaw_puzzle.max_per_image", "jigsaw_puzzle.n_options", "jigsaw_puzzle.grids",
    "jigsaw_puzzle.shapes", "jigsaw_puzzle.edges", "jigsaw_puzzle.distractor_types",
    "jigsaw_puzzle.zoom", "jigsaw_puzzle.hole_color", "jigsaw_puzzle.piece_background",
    "jigsaw_puzzle.questions_per_image", "jigsaw_puzzle.png_compress_level",
    "object_count.max_per_image",
    "relative_position.max_per_image",
    "remote_interaction.max_per_image", "remote_interaction.n_options",
    "remote_interaction.distractor_types", "remote_interaction.max_overlap",
    "remote_interaction.max_cross_iou",
    "scene_classification.max_per_image", "scene_classification.n_options",
    "scene_classification.table", "scene_classification.assign",
    "scene_classification.min_margin",
)
