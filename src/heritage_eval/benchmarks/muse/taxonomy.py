"""MUSE task taxonomy: task number, capability, cognitive level, spatial granularity.

One data table (:data:`TASKS`), in the paper's task order 1–12.

Capabilities follow the paper's grouping. Level and granularity are our assignment
(one place to change them; the table is repeated for users in ``GENERATION.md``, and a
test checks that both agree):

- level: ``low`` = recognising what is visible (person category, counting, scene);
  ``mid`` = relating a description, region or label to the image (activity localization and
  description, culture, relative position, emotion); ``high`` = inference beyond the pixels
  or composition of several parts (visual clues, emotion cause, jigsaw, remote interaction).
- granularity: ``pixel`` = the answer depends on exact pixel regions (box choice, jigsaw
  pieces); ``crop`` = reasoning about one boxed region or a pair of regions;
  ``image`` = the whole image.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["low", "mid", "high"]
Granularity = Literal["pixel", "crop", "image"]


@dataclass(frozen=True)
class TaskInfo:
    """Static facts about one task: display ``name``, paper ``number`` (1–12),
    ``capability``, cognitive ``level`` and spatial ``granularity``."""

    name: str
    number: int
    capability: str
    level: Level
    granularity: Granularity


VISUAL_PERCEPTION = "Visual Perception"
SEMANTIC_UNDERSTANDING = "Semantic Understanding"
AFFECTIVE_INTERPRETATION = "Affective Interpretation"
COMPOSITIONAL_REASONING = "Compositional Reasoning"
CULTURAL_UNDERSTANDING = "Cultural Understanding"

CAPABILITIES: tuple[str, ...] = (
    VISUAL_PERCEPTION,
    SEMANTIC_UNDERSTANDING,
    AFFECTIVE_INTERPRETATION,
    COMPOSITIONAL_REASONING,
    CULTURAL_UNDERSTANDING,
)

TASKS: dict[str, TaskInfo] = {
    "object_classification": TaskInfo("Object Classification", 1, VISUAL_PERCEPTION,
                                      "low", "crop"),
    "emotion_detection": TaskInfo("Emotion Detection", 2, AFFECTIVE_INTERPRETATION,
                                  "mid", "crop"),
    "visual_clue_identification": TaskInfo("Visual Clue Identification", 3,
                                           AFFECTIVE_INTERPRETATION, "high", "crop"),
    "emotion_cause_inference": TaskInfo("Emotion Cause Inference", 4,
                                        AFFECTIVE_INTERPRETATION, "high", "image"),
    "activity_localization": TaskInfo("Activity Localization", 5, SEMANTIC_UNDERSTANDING,
                                      "mid", "pixel"),
    "activity_description": TaskInfo("Activity Description", 6, SEMANTIC_UNDERSTANDING,
                                     "mid", "crop"),
    "cultural_identification": TaskInfo("Cultural Identification", 7, CULTURAL_UNDERSTANDING,
                                         "mid", "crop"),
    "jigsaw_puzzle": TaskInfo("Jigsaw Puzzle", 8, COMPOSITIONAL_REASONING, "high", "pixel"),
    "object_count": TaskInfo("Object Count", 9, VISUAL_PERCEPTION, "low", "image"),
    "relative_position": TaskInfo("Relative Position", 10, COMPOSITIONAL_REASONING,
                                  "mid", "crop"),
    "remote_interaction": TaskInfo("Remote Interaction", 11, COMPOSITIONAL_REASONING,
                                   "high", "crop"),
    "scene_classification": TaskInfo("Scene Classification", 12, SEMANTIC_UNDERSTANDING,
                                     "low", "image"),
}

#: Task ids in the paper's order 1..12.
TASK_IDS: tuple[str, ...] = tuple(sorted(TASKS, key=lambda t: TASKS[t].number))

#: The four turns of the affective dialogue (tasks 1–4), in order.
AFFECTIVE_DIALOGUE: tuple[str, ...] = TASK_IDS[:4]


def tasks_of_capability(capability: str) -> list[str]:
    """Task ids with the given capability, in task order; raises ``KeyError`` if unknown."""
    if capability not in CAPABILITIES:
        raise KeyError(capability)
    return [t for t in TASK_IDS if TASKS[t].capability == capability]
