"""Canonicalization of one character image (HCSU paper, §3.3), and the Wild-Resize variant.

Pipeline for one RGB image of shape ``(H, W, 3)``, ``uint8``:

0. *letterbox trim* (our addition, not in the paper): uniform bars along the edges (rows or
   columns whose values span at most ``LETTERBOX_TOLERANCE`` grey levels, e.g. the white or
   black padding some sources add around a crop) are cut off when their level differs
   from the paper just inside them (by more than ``PAPER_TOLERANCE`` grey levels),
   because a third flat grey level would pull Otsu's threshold between the bar and the
   paper instead of between the paper and the ink. A bar of the paper's own level (the
   white margin around a centred character of an already canonical image) is kept;
1. *domain inversion*: a Bei image (stone rubbing, light strokes on a dark ground) is
   inverted (``255 - rgb``) so that strokes become dark on a light ground;
2. *Otsu global threshold* (OpenCV) on the grey image: ink = pixels at or below the
   threshold;
3. *corner polarity check*: if the mean grey level of the four corner patches lies at or below
   the Otsu threshold the background is dark (a mislabelled domain), so the binary map is
   inverted, and so is the appearance image, keeping dark-on-light;
4. *connected-component filtering* (OpenCV, 8-connectivity): ink components smaller than
   ``min_area_frac`` x H x W pixels (paper grain, stone cracks) are removed;
5. *appearance reconstruction*: the refined mask is applied to the original RGB image, so
   each kept pixel keeps its real colour and texture on a uniform white ground. Where the
   polarity was inverted (Bei, or a corner flip) the strokes are light in the original,
   so the inverted grey level is used instead (tone and texture kept; an inverted hue has
   no meaning, so the three channels are equal);
6. *geometric normalization*: the result is centred on a white square of side max(H, W)
   (aspect ratio kept) and resampled to ``size`` x ``size`` with Lanczos interpolation.

Already canonical input (decision): an image that is ``size`` x ``size`` and mostly pure
white, border included (:func:`looks_canonical`), is this pipeline's own output. Running
steps 0–6 on it again would cut an ink stroke touching its edge as a letterbox bar and
whiten the anti-aliased stroke edges left by the Lanczos resampling (measured on the real
sample: 27–31 grey levels of mean change before this rule). Such an input is therefore
only cleaned: every non-white pixel (grey < ``WHITE_LEVEL``) counts as ink, small
components are removed as in step 4, everything else becomes pure white, and nothing is
inverted, trimmed or resampled, so canonicalizing twice equals canonicalizing once up
to that cleaning (mean absolute difference well below 2 grey levels on the real sample).

Blank crops (decision): a crop with no glyph — grey levels spanning fewer than
``MIN_CONTRAST`` levels (a uniform image, or one pixel off by one), or an ink fraction
after step 4 at most ``MIN_INK_FRACTION`` or at least ``MAX_INK_FRACTION`` — would
otherwise become an all-white "canonical" image. It gets the status "no glyph found"
with the reason; batch runs (:mod:`.canonical_batch`) log it, list it and never write it.

The Wild-Resize variant skips 1–5: the raw image is centred on a square filled with the
median colour of its border pixels and Lanczos-resampled to ``size`` x ``size``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

RGB = NDArray[np.uint8]

#: Output side in pixels (HCSU images are 256 x 256).
CANONICAL_SIZE = 256
#: Default area threshold for connected components, as a fraction of the image area.
DEFAULT_MIN_AREA_FRAC = 0.0005
#: A border row / column is letterbox padding when its values span at most this many levels.
LETTERBOX_TOLERANCE = 6
#: A bar is kept (not letterbox) when its mean grey level is within this many levels of
#: the median grey level of the first row / column inside it (the paper).
PAPER_TOLERANCE = 16
#: Grey level from which a pixel counts as white (already-canonical detection).
WHITE_LEVEL = 250
#: Side of each corner patch used by the polarity check, as a fraction of min(H, W).
CORNER_FRAC = 0.05
#: Blank-crop check: an image whose grey levels span fewer than this many levels
#: (max - min) has no contrast to threshold: "no glyph found".
MIN_CONTRAST = 24
#: Blank-crop check: after the component filter the ink must cover more than this
#: fraction of the image and less than :data:`MAX_INK_FRACTION` of it.
MIN_INK_FRACTION = 0.001
MAX_INK_FRACTION = 0.95
#: ``CanonResult.status`` values.
STATUS_OK = "ok"
STATUS_NO_GLYPH = "no glyph found"


@dataclass(frozen=True)
class CanonParams:
    """Settings of the canonicalization pipeline.

    ``size``: output side in pixels (> 0). ``min_area_frac``: components with fewer than
    ``max(1, ceil(min_area_frac * H * W))`` pixels are removed (0 disables the filter).
    """

    size: int = CANONICAL_SIZE
    min_area_frac: float = DEFAULT_MIN_AREA_FRAC

    def __post_init__(self) -> None:
        if self.size <= 0:
            raise ValueError(f"size must be positive, got {self.size}")
        if not 0.0 <= self.min_area_frac < 1.0:
            raise ValueError(f"min_area_frac must be in [0, 1), got {self.min_area_frac}")


@dataclass
class CanonResult:
    """Output of :func:`canonicalize_array`.

    ``image``: ``(size, size, 3)`` uint8 RGB, dark strokes on white. ``mask``: ``(size,
    size)`` bool, True where the output shows ink. ``otsu_threshold``: grey level 0–255.
    ``corner_flip``: True when the corner check inverted the polarity. ``removed_components``
    / ``kept_components``: counts from the connected-component filter. ``stages``: name ->
    image at original resolution (``inverted`` for Bei, ``binary``, ``denoised``,
    ``masked``), filled only when requested. ``already_canonical``: the input was
    recognised as this pipeline's output and only cleaned (module docstring).
    ``status``: ``"ok"``, or ``"no glyph found"`` for a blank crop (:func:`glyph_problem`),
    with ``reason``; such a result must not be emitted (``image`` is then all white).
    """

    image: RGB
    mask: NDArray[np.bool_]
    otsu_threshold: float
    corner_flip: bool
    kept_components: int
    removed_components: int
    stages: dict[str, RGB] = field(default_factory=dict)
    already_canonical: bool = False
    status: str = STATUS_OK
    reason: str | None = None

    @property
    def ok(self) -> bool:
        """False for a blank crop (``status`` "no glyph found"): never to be written."""
        return self.status == STATUS_OK


def contrast_problem(gray: NDArray[Any]) -> str | None:
    """Why a grey image (0–255) has no glyph to find by its contrast: its levels span
    fewer than :data:`MIN_CONTRAST` (e.g. a uniform grey 200 image, or one with a single
    pixel at 201), else ``None``."""
    lo, hi = (int(gray.min()), int(gray.max())) if gray.size else (0, 0)
    if hi - lo < MIN_CONTRAST:
        return (f"contrast range {hi - lo} grey level(s) ({lo}–{hi}) below the minimum "
                f"{MIN_CONTRAST}")
    return None


def ink_problem(mask: NDArray[np.bool_]) -> str | None:
    """Why an ink mask holds no glyph: its foreground fraction is at most
    :data:`MIN_INK_FRACTION` (nothing left) or at least :data:`MAX_INK_FRACTION` (all
    ink: no background), else ``None``."""
    frac = float(mask.mean()) if mask.size else 0.0
    if frac <= MIN_INK_FRACTION:
        return f"foreground fraction {frac:.4f} at or below {MIN_INK_FRACTION} (no ink)"
    if frac >= MAX_INK_FRACTION:
        return f"foreground fraction {frac:.4f} at or above {MAX_INK_FRACTION} (no background)"
    return None


def _no_glyph(size: int, reason: str, threshold: float = 0.0) -> CanonResult:
    return CanonResult(image=np.full((size, size, 3), 255, dtype=np.uint8),
                       mask=np.zeros((size, size), dtype=bool), otsu_threshold=threshold,
                       corner_flip=False, kept_components=0, removed_components=0,
                       status=STATUS_NO_GLYPH, reason=reason)


def corner_mean(gray: NDArray[Any], frac: float = CORNER_FRAC) -> float:
    """Mean grey level (0–255) of the four square corner patches of side
    ``max(1, round(frac * min(H, W)))`` pixels."""
    h, w = gray.shape[:2]
    s = max(1, round(frac * min(h, w)))
    patches = [gray[:s, :s], gray[:s, w - s:], gray[h - s:, :s], gray[h - s:, w - s:]]
    return float(np.mean([p.mean() for p in patches]))


def _as_rgb(image: NDArray[np.uint8]) -> RGB:
    if image.ndim == 2:
        return np.ascontiguousarray(np.stack([image] * 3, axis=-1))
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected an (H, W, 3) RGB image, got shape {image.shape}")
    if image.dtype != np.uint8:
        raise ValueError(f"expected uint8 pixels, got {image.dtype}")
    return np.ascontiguousarray(image)


def trim_letterbox(image: RGB, tolerance: int = LETTERBOX_TOLERANCE
                   ) -> tuple[RGB, tuple[int, int, int, int]]:
    """Cut letterbox bars off the four edges of ``image``.

    A bar is a run of edge rows (or columns) each of whose values (all channels) span at
    most ``tolerance`` levels, whose mean grey level differs by more than
    :data:`PAPER_TOLERANCE` from the median grey level of the first row (column) inside
    it; a bar of the paper's own level is not letterbox and is kept. At most a quarter of
    each dimension is cut per side, so a blank image is returned unchanged. Returns
    ``(trimmed view, (top, bottom, left, right) cut sizes)``.
    """
    h, w = image.shape[:2]
    flat = image.reshape(h, w, -1)
    row_flat = (flat.max(axis=(1, 2)).astype(np.int16) - flat.min(axis=(1, 2))) <= tolerance
    col_flat = (flat.max(axis=(0, 2)).astype(np.int16) - flat.min(axis=(0, 2))) <= tolerance

    def run(flags: NDArray[np.bool_], limit: int) -> int:
        n = 0
        while n < limit and flags[n]:
            n += 1
        return n

    grey = flat.mean(axis=2)

    def differs(bar: NDArray[np.float64], inside: NDArray[np.float64]) -> bool:
        return abs(float(bar.mean()) - float(np.median(inside))) > PAPER_TOLERANCE

    top = run(row_flat, h // 4)
    bottom = run(row_flat[::-1], h // 4)
    left = run(col_flat, w // 4)
    right = run(col_flat[::-1], w // 4)
    top = top if top and differs(grey[:top], grey[top]) else 0
    bottom = bottom if bottom and differs(grey[h - bottom:], grey[h - bottom - 1]) else 0
    left = left if left and differs(grey[:, :left], grey[:, left]) else 0
    right = right if right and differs(grey[:, w - right:], grey[:, w - right - 1]) else 0
    return image[top:h - bottom, left:w - right], (top, bottom, left, right)


def looks_canonical(image: RGB, size: int) -> bool:
    """True for a ``size`` x ``size`` image at least half of whose border pixels and at
    least half of all pixels are white (every channel >= ``WHITE_LEVEL``): the output of
    this pipeline (dark strokes on pure white). A raw crop inside white letterbox bars
    fails the second test, because its paper is not pure white."""
    h, w = image.shape[:2]
    if (h, w) != (size, size):
        return False
    white = image.min(axis=-1) >= WHITE_LEVEL
    border = np.concatenate([white[0], white[-1], white[1:-1, 0], white[1:-1, -1]])
    return bool(border.mean() >= 0.5 and white.mean() >= 0.5)


def _clean_canonical(rgb: RGB, p: CanonParams, keep_stages: bool) -> CanonResult:
    """The already-canonical branch (module docstring): non-white pixels are ink, small
    components removed, the rest pure white; no inversion, trim or resampling."""
    ink = rgb.min(axis=-1) < WHITE_LEVEL
    min_area = max(1, int(np.ceil(p.min_area_frac * ink.size))) if p.min_area_frac > 0 else 0
    refined, kept, removed = (remove_small_components(ink, min_area) if min_area > 1
                              else (ink, -1, 0))
    out = np.full_like(rgb, 255)
    out[refined] = rgb[refined]
    gray = cv2.cvtColor(out, cv2.COLOR_RGB2GRAY)
    # the ink mask: pixels at least half-way from white to the typical stroke tone (the
    # median of the ink pixels), as a pixel at least half covered by the resampled
    # stroke mask is ink in the main path
    tone = float(np.median(gray[refined])) if refined.any() else 0.0
    threshold = (255.0 + tone) / 2
    stages = ({"binary": _mask_image(ink), "denoised": _mask_image(refined),
               "masked": out.copy()} if keep_stages else {})
    return CanonResult(image=out, mask=refined & (gray <= threshold),
                       otsu_threshold=float(threshold), corner_flip=False,
                       kept_components=kept, removed_components=removed, stages=stages,
                       already_canonical=True)


def pad_to_square(image: RGB, fill: tuple[int, int, int]) -> RGB:
    """Centre ``image`` on a square canvas of side max(H, W) filled with ``fill`` (RGB)."""
    h, w = image.shape[:2]
    side = max(h, w)
    canvas = np.empty((side, side, 3), dtype=np.uint8)
    canvas[:] = np.asarray(fill, dtype=np.uint8)
    top, left = (side - h) // 2, (side - w) // 2
    canvas[top:top + h, left:left + w] = image
    return canvas


def lanczos_resize(image: RGB, size: int) -> RGB:
    """Resample a square image to ``size`` x ``size`` with OpenCV's Lanczos (8x8) kernel."""
    if image.shape[0] == size and image.shape[1] == size:
        return image.copy()
    out = cv2.resize(image, (size, size), interpolation=cv2.INTER_LANCZOS4)
    return np.asarray(out, dtype=np.uint8)


def remove_small_components(mask: NDArray[np.bool_], min_area: int
                            ) -> tuple[NDArray[np.bool_], int, int]:
    """Drop 8-connected components of ``mask`` with fewer than ``min_area`` pixels.

    Returns ``(refined mask, kept count, removed count)``.
    """
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    areas = stats[1:, cv2.CC_STAT_AREA]
    keep = np.zeros(n, dtype=bool)
    keep[1:] = areas >= min_area
    return keep[labels], int(keep.sum()), int(n - 1 - keep.sum())


def canonicalize_array(image: NDArray[np.uint8], is_bei: bool,
                       params: CanonParams | None = None,
                       keep_stages: bool = False) -> CanonResult:
    """Run the §3.3 pipeline on one image (see the module docstring for the steps).

    ``image``: ``(H, W, 3)`` or ``(H, W)`` uint8. ``is_bei``: the image comes from a stone
    rubbing (Bei) and is inverted first. Raises ``ValueError`` for other shapes / dtypes.
    A blank crop — grey levels spanning fewer than :data:`MIN_CONTRAST`, or an ink
    fraction after the component filter at most :data:`MIN_INK_FRACTION` or at least
    :data:`MAX_INK_FRACTION` — gives ``status`` "no glyph found" with the reason
    (:func:`contrast_problem`, :func:`ink_problem`) instead of an all-white image.
    """
    p = params or CanonParams()
    rgb = _as_rgb(image)
    problem = contrast_problem(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))
    if problem is not None:  # a blank crop: nothing to threshold
        return _no_glyph(p.size, problem)
    if looks_canonical(rgb, p.size):
        res = _clean_canonical(rgb, p, keep_stages)
        problem = ink_problem(res.mask)
        return res if problem is None else _no_glyph(p.size, problem, res.otsu_threshold)
    rgb, _ = trim_letterbox(rgb)
    stages: dict[str, RGB] = {}
    work = 255 - rgb if is_bei else rgb
    if keep_stages and is_bei:
        stages["inverted"] = work.copy()
    gray = cv2.cvtColor(work, cv2.COLOR_RGB2GRAY)
    threshold, _ = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    ink = gray <= threshold
    flip = corner_mean(gray) <= threshold  # corners fall on the ink side of Otsu
    if flip:  # background is dark: the binary map is inverted
        ink = ~ink
    if is_bei != flip:  # strokes are light in the original: use the inverted grey level
        appearance = np.ascontiguousarray(np.stack([255 - cv2.cvtColor(
            rgb, cv2.COLOR_RGB2GRAY)] * 3, axis=-1))
    else:
        appearance = rgb
    if keep_stages:
        stages["binary"] = _mask_image(ink)
    h, w = ink.shape
    min_area = max(1, int(np.ceil(p.min_area_frac * h * w))) if p.min_area_frac > 0 else 0
    if min_area > 1:
        refined, kept, removed = remove_small_components(ink, min_area)
    else:
        refined, kept, removed = ink, -1, 0
    if keep_stages:
        stages["denoised"] = _mask_image(refined)
    problem = ink_problem(refined)
    if problem is not None:
        return _no_glyph(p.size, problem, float(threshold))
    masked = np.full_like(rgb, 255)
    masked[refined] = appearance[refined]
    if keep_stages:
        stages["masked"] = masked.copy()
    out = lanczos_resize(pad_to_square(masked, (255, 255, 255)), p.size)
    mask_sq = pad_to_square(_mask_image(refined), (255, 255, 255))
    mask_out = cv2.resize(mask_sq[:, :, 0], (p.size, p.size),
                          interpolation=cv2.INTER_AREA) < 128
    return CanonResult(image=out, mask=mask_out, otsu_threshold=float(threshold),
                       corner_flip=bool(flip), kept_components=kept,
                       removed_components=removed, stages=stages)


def wild_resize_array(image: NDArray[np.uint8], size: int = CANONICAL_SIZE) -> RGB:
    """Wild-Resize: pad the raw image to a square with the median border colour, then
    Lanczos-resample to ``size`` x ``size``. Returns ``(size, size, 3)`` uint8 RGB."""
    rgb = _as_rgb(image)
    border = np.concatenate([rgb[0], rgb[-1], rgb[:, 0], rgb[:, -1]], axis=0)
    fill = tuple(int(v) for v in np.median(border, axis=0))
    return lanczos_resize(pad_to_square(rgb, (fill[0], fill[1], fill[2])), size)


def _mask_image(mask: NDArray[np.bool_]) -> RGB:
    """Black ink on white, as an RGB image (for saved stages)."""
    g = np.where(mask, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(np.stack([g] * 3, axis=-1))
