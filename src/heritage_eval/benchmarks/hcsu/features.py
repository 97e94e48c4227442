"""Classic style features of a character image, for the offline HCSU baselines.

The image is first canonicalized (§3.3 pipeline, 256 x 256, dark strokes on white), so
background and size do not dominate. Four blocks, each a non-negative vector summing
to 1, describe the hand rather than the character's identity as far as classic features
can:

- ``orientation``: histogram of gradient orientations over the whole image (HOG from
  scikit-image with a single block, 12 bins): horizontal-heavy clerical strokes, curved
  seal strokes, slanted running strokes differ;
- ``width``: stroke widths (twice the distance transform on the skeleton, scikit-image),
  relative to the character's height, in 10 bins over [0, 0.25];
- ``tone``: grey levels of the ink pixels, 8 bins over 0–255 (ink density, flying white);
- ``shape``: ink coverage of the bounding box, and the box's aspect ratio mapped to
  [0, 1] by ``w / (w + h)`` (as two-bin distributions).

:func:`style_distance` is the mean over blocks of the L1 distance between two images'
block vectors (each in [0, 2]), so it lies in [0, 2].
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
from numpy.typing import NDArray
from skimage.feature import hog
from skimage.morphology import skeletonize

from heritage_eval.benchmarks.hcsu.canonical import canonicalize_array
from heritage_eval.core.images import load_image

#: Version of the feature definition; part of the baselines' cache identity.
FEATURE_VERSION = "1"
Vector = NDArray[np.float64]


@dataclass(frozen=True)
class StyleFeatures:
    """The four L1-normalised feature blocks of one image (see the module docstring)."""

    orientation: Vector
    width: Vector
    tone: Vector
    shape: Vector

    def blocks(self) -> tuple[Vector, ...]:
        return (self.orientation, self.width, self.tone, self.shape)


def _normalise(v: NDArray[np.float64]) -> Vector:
    total = float(v.sum())
    return v / total if total > 0 else np.full_like(v, 1.0 / len(v))


def features_from_canonical(image: NDArray[np.uint8], mask: NDArray[np.bool_]) -> StyleFeatures:
    """Features of a canonical image (``(S, S, 3)`` uint8) and its ink ``mask`` (S x S)."""
    gray = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    cells = hog(gray, orientations=12, pixels_per_cell=(32, 32), cells_per_block=(1, 1),
                feature_vector=False)
    orientation = _normalise(np.asarray(cells, dtype=np.float64).reshape(-1, 12).sum(axis=0))
    ys, xs = np.nonzero(mask)
    if len(ys) == 0:
        empty = np.full(10, 0.1)
        return StyleFeatures(orientation, empty, np.full(8, 1 / 8), np.array([0.5, 0.5, 0.5,
                                                                              0.5]) / 2)
    h = int(ys.max() - ys.min() + 1)
    w = int(xs.max() - xs.min() + 1)
    dist = cv2.distanceTransform(mask.astype(np.uint8), cv2.DIST_L2, 5)
    skel = skeletonize(mask)
    widths = 2.0 * dist[skel] / max(h, 1)
    width = _normalise(np.histogram(widths, bins=10, range=(0.0, 0.25))[0].astype(np.float64))
    tone = _normalise(np.histogram(gray[mask], bins=8, range=(0, 256))[0].astype(np.float64))
    coverage = float(mask.sum()) / float(h * w)
    aspect = w / float(w + h)
    shape = np.array([coverage, 1 - coverage, aspect, 1 - aspect], dtype=np.float64) / 2
    return StyleFeatures(orientation, width, tone, shape)


@lru_cache(maxsize=4096)
def image_features(path: str, is_bei: bool) -> StyleFeatures:
    """Canonicalize the image at ``path`` (inverting it first when ``is_bei``) and return
    its features; cached per (path, domain). Raises ``ImageLoadError`` naming the file."""
    rgb = np.asarray(load_image(path), dtype=np.uint8)
    res = canonicalize_array(rgb, is_bei)
    return features_from_canonical(res.image, res.mask)


def style_distance(a: StyleFeatures, b: StyleFeatures) -> float:
    """Mean L1 distance over the four blocks, in [0, 2]; 0 for identical features."""
    return float(np.mean([np.abs(x - y).sum() for x, y in zip(a.blocks(), b.blocks(),
                                                               strict=True)]))
