"""Typed MUSE annotation of one artwork (the annotation-first representation).

One :class:`ImageAnnotation` holds everything every MUSE task is generated from:
characters (person boxes with category, emotion, visual clues, emotion cause), activities
(box, label, description, annotator-written negative descriptions), objects (box, name)
and object counts, the scene label, cultural elements (box, label), relative positions and
remote (non-contact) interactions between boxed entities.

Bounding boxes are COCO ``[x, y, w, h]`` normalized to 0–1 of the image width / height,
``(x, y)`` the top-left corner (the paper's convention).

Importers: :mod:`.labelstudio` maps a Label Studio JSON export onto this schema. An
importer for the official MUSE release would be a sibling module producing the same
:class:`ImageAnnotation` objects (one per artwork; its boxes converted to normalized COCO)
and returning them through :class:`ImportResult`, so ``muse generate`` and every generator
work unchanged (see ``generate.load_annotations``, the single plug-in point).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

PersonCategory = Literal["Woman", "Man", "Girl", "Boy", "Baby"]
#: Person categories of Object Classification (task 1), paper order.
PERSON_CATEGORIES: tuple[str, ...] = ("Woman", "Man", "Girl", "Boy", "Baby")

Emotion = Literal["Anxiety", "Sadness", "Surprise", "Joy", "Disgust", "Fear", "Boredom",
                  "Guilt", "Neutral", "Anger", "Confusion"]
#: The 11 emotion labels of Emotion Detection (task 2), paper order.
EMOTIONS: tuple[str, ...] = ("Anxiety", "Sadness", "Surprise", "Joy", "Disgust", "Fear",
                             "Boredom", "Guilt", "Neutral", "Anger", "Confusion")

Lateral = Literal["left", "none", "right"]
Depth = Literal["front", "none", "back"]
Vertical = Literal["above", "none", "under"]

#: Tolerance for boxes that overshoot the image edge through rounding (normalized units).
BOX_TOLERANCE = 1e-3

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Box(BaseModel):
    """COCO bounding box normalized to 0–1: ``x``, ``y`` top-left, ``w``, ``h`` > 0,
    with ``x + w`` and ``y + h`` at most 1 (within :data:`BOX_TOLERANCE`).

    Raises ``ValidationError`` otherwise.
    """

    model_config = _FROZEN
    x: float = Field(ge=0.0, le=1.0)
    y: float = Field(ge=0.0, le=1.0)
    w: float = Field(gt=0.0, le=1.0)
    h: float = Field(gt=0.0, le=1.0)

    @model_validator(mode="after")
    def _inside(self) -> Box:
        if self.x + self.w > 1.0 + BOX_TOLERANCE:
            raise ValueError(f"box right edge x + w = {self.x + self.w:.4f} exceeds 1")
        if self.y + self.h > 1.0 + BOX_TOLERANCE:
            raise ValueError(f"box bottom edge y + h = {self.y + self.h:.4f} exceeds 1")
        return self

    def coco(self) -> list[float]:
        """``[x, y, w, h]`` as a list (normalized 0–1)."""
        return [self.x, self.y, self.w, self.h]

    @property
    def area(self) -> float:
        return self.w * self.h

    def intersection(self, other: Box) -> float:
        """Area (normalized units², 0–1) shared with ``other``."""
        ix = max(0.0, min(self.x + self.w, other.x + other.w) - max(self.x, other.x))
        iy = max(0.0, min(self.y + self.h, other.y + other.h) - max(self.y, other.y))
        return ix * iy

    def coverage(self, other: Box) -> float:
        """Fraction (0–1) of ``other``'s area that lies inside this box (1 when this box
        contains ``other``)."""
        return self.intersection(other) / other.area if other.area > 0 else 0.0

    def iou(self, other: Box) -> float:
        """Intersection over union with ``other`` (0–1)."""
        inter = self.intersection(other)
        union = self.area + other.area - inter
        return inter / union if union > 0 else 0.0


class Character(BaseModel):
    """A boxed person: ``category`` (Woman/Man/Girl/Boy/Baby), optional ``emotion`` (one
    of :data:`EMOTIONS`), ``visual_clues`` and ``emotion_cause`` (free text)."""

    model_config = _FROZEN
    id: str
    box: Box
    category: PersonCategory
    emotion: Emotion | None = None
    visual_clues: str | None = None
    emotion_cause: str | None = None


class Activity(BaseModel):
    """A boxed activity: short ``label``, one correct ``description`` and the annotators'
    plausible-but-wrong ``negative_descriptions``."""

    model_config = _FROZEN
    id: str
    box: Box
    label: str
    description: str | None = None
    negative_descriptions: tuple[str, ...] = ()


class ObjectBox(BaseModel):
    """A boxed notable object with its ``name`` (e.g. ``"straw hat"``)."""

    model_config = _FROZEN
    id: str
    box: Box
    name: str


class CultureElement(BaseModel):
    """A boxed region showing a cultural identity; ``label`` is free text."""

    model_config = _FROZEN
    id: str
    box: Box
    label: str


class RelativePosition(BaseModel):
    """Position of entity ``a`` relative to entity ``b`` in ``a``'s own frame of reference
    (box ids): lateral left/none/right, depth front/none/back, vertical above/none/under."""

    model_config = _FROZEN
    a: str
    b: str
    lateral: Lateral
    depth: Depth
    vertical: Vertical


class RemoteInteraction(BaseModel):
    """``a`` interacts with ``b`` without touching (box ids); ``evidence`` is the visible
    support (free text)."""

    model_config = _FROZEN
    a: str
    b: str
    evidence: str


class ImageAnnotation(BaseModel):
    """Everything annotated on one artwork.

    ``image_id`` is unique in a dataset; ``image`` the image path relative to the images
    folder; ``width`` / ``height`` the annotated image size in pixels (0 when unknown);
    ``object_counts`` maps an object name to how many instances the picture shows;
    ``source`` names where it came from (``file#task=ID``) for error messages. Region ids are
    unique across characters, activities, objects and cultural elements, and every relation
    refers to existing region ids (``ValidationError`` otherwise).
    """

    model_config = _FROZEN
    image_id: str
    image: str
    width: int = Field(default=0, ge=0)
    height: int = Field(default=0, ge=0)
    characters: tuple[Character, ...] = ()
    activities: tuple[Activity, ...] = ()
    objects: tuple[ObjectBox, ...] = ()
    object_counts: dict[str, int] = Field(default_factory=dict)
    scene: str | None = None
    cultural_elements: tuple[CultureElement, ...] = ()
    relative_positions: tuple[RelativePosition, ...] = ()
    remote_interactions: tuple[RemoteInteraction, ...] = ()
    source: str = ""

    @field_validator("object_counts")
    @classmethod
    def _counts_non_negative(cls, v: dict[str, int]) -> dict[str, int]:
        for name, n in v.items():
            if n < 0:
                raise ValueError(f"object count for {name!r} is negative ({n})")
        return v

    @model_validator(mode="after")
    def _references(self) -> ImageAnnotation:
        seen: set[str] = set()
        for region in self.regions():
            if region.id in seen:
                raise ValueError(f"region id {region.id!r} used by two regions")
            seen.add(region.id)
        pairs = [(r.a, r.b) for r in self.relative_positions]
        pairs += [(r.a, r.b) for r in self.remote_interactions]
        for a, b in pairs:
            for end in (a, b):
                if end not in seen:
                    raise ValueError(f"relation refers to unknown region id {end!r}")
            if a == b:
                raise ValueError(f"relation links region {a!r} to itself")
        return self

    def regions(self) -> list[Character | Activity | ObjectBox | CultureElement]:
        """All boxed regions (characters, activities, objects, cultural elements)."""
        out: list[Character | Activity | ObjectBox | CultureElement] = [*self.characters]
        out.extend(self.activities)
        out.extend(self.objects)
        out.extend(self.cultural_elements)
        return out

    def entities(self) -> list[Character | ObjectBox]:
        """Boxed people and objects (the entities of relations and distractors)."""
        out: list[Character | ObjectBox] = [*self.characters]
        out.extend(self.objects)
        return out

    def region(self, region_id: str) -> Character | Activity | ObjectBox | CultureElement:
        """The region with id ``region_id``; raises ``KeyError`` if absent."""
        for r in self.regions():
            if r.id == region_id:
                return r
        raise KeyError(region_id)

    def entity_text(self, region_id: str) -> str:
        """Short noun phrase naming a region: person category or object name, lower case
        (e.g. ``"woman"``, ``"straw hat"``); activity label or culture label otherwise."""
        r = self.region(region_id)
        if isinstance(r, Character):
            return r.category.lower()
        if isinstance(r, ObjectBox):
            return r.name
        return r.label
