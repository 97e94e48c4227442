"""Canonicalization of one character image (HCSU paper, §3.3), and the Wild-Resize variant.

Pipeline for one RGB image of shape ``(H, W, 3)``, ``uint8``:

0. *letterbox trim* (our addition, not in the paper): uniform bars along the edges (rows or
   columns whose values span at most ``LETTERBOX_TOLERANCE`` grey levels, e.g. the white or
   black padding some sources add around a crop) are cut off when their level differs
   from the paper just inside them (by more than ``PAPER_TOLERANCE`` grey levels),
   because a third flat grey level would pull Otsu's threshold between the bar and the
   paper instead of between the paper and the ink. A bar of the paper's own level (the
   white margin around a centred character of an already canonical image) is kept; bars
   are cut whole and decided again after each cut (:func:`trim_letterbox`, rule in
   docs/images.md);
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

from heritage_eval.benchmarks.hcsu.canonical_steps import (
    CORNER_FRAC,
    LETTERBOX_TOLERANCE,
    PAPER_TOLERANCE,
    RGB,
    WHITE_LEVEL,
    apply_mask,
    corner_mean,
    filter_components,
    lanczos_resize,
    looks_canonical,
    mask_image,
    pad_square,
    pad_to_square,
    remove_small_components,
    three_channels,
    trim_letterbox,
    u8,
    white_mask,
)

# the steps are part of this module's interface (tests and callers import them here)
__all__ = ["CANONICAL_SIZE", "CORNER_FRAC", "DEFAULT_MIN_AREA_FRAC", "LETTERBOX_TOLERANCE",
           "MAX_INK_FRACTION", "MIN_CONTRAST", "MIN_INK_FRACTION", "PAPER_TOLERANCE",
           "STATUS_NO_GLYPH", "STATUS_OK", "WHITE_LEVEL", "CanonParams", "CanonResult",
           "canonicalize_array", "canonicalize_bgr", "contrast_problem", "corner_mean",
           "ink_problem", "lanczos_resize", "looks_canonical", "pad_to_square",
           "remove_small_components", "trim_letterbox", "wild_resize_array"]

#: Output side in pixels (HCSU images are 256 x 256).
CANONICAL_SIZE = 256
#: Default area threshold for connected components, as a fraction of the image area.
DEFAULT_MIN_AREA_FRAC = 0.0005
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
    :func:`canonicalize_bgr` leaves ``mask`` empty (shape ``(0, 0)``) unless the input
    was already canonical.
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
    if not gray.size:
        lo, hi = 0, 0
    elif gray.ndim == 2 and gray.dtype == np.uint8:  # one C pass instead of two
        low, high, _, _ = cv2.minMaxLoc(gray)
        lo, hi = int(low), int(high)
    else:
        lo, hi = int(gray.min()), int(gray.max())
    if hi - lo < MIN_CONTRAST:
        return (f"contrast range {hi - lo} grey level(s) ({lo}–{hi}) below the minimum "
                f"{MIN_CONTRAST}")
    return None


def ink_problem(mask: NDArray[np.bool_]) -> str | None:
    """Why an ink mask holds no glyph: its foreground fraction is at most
    :data:`MIN_INK_FRACTION` (nothing left) or at least :data:`MAX_INK_FRACTION` (all
    ink: no background), else ``None``."""
    return _fraction_problem(float(mask.mean()) if mask.size else 0.0)


def _fraction_problem(frac: float) -> str | None:
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


def _as_rgb(image: NDArray[np.uint8]) -> RGB:
    if image.ndim == 2:
        return np.ascontiguousarray(np.stack([image] * 3, axis=-1))
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected an (H, W, 3) RGB image, got shape {image.shape}")
    if image.dtype != np.uint8:
        raise ValueError(f"expected uint8 pixels, got {image.dtype}")
    return np.ascontiguousarray(image)


def _clean_canonical(img: RGB, p: CanonParams, keep_stages: bool, to_gray: int
                     ) -> CanonResult:
    """The already-canonical branch (module docstring): non-white pixels are ink, small
    components removed, the rest pure white; no inversion, trim or resampling.
    ``to_gray``: the ``cv2.cvtColor`` code of ``img``'s channel order."""
    ink = u8(cv2.bitwise_not(white_mask(img)))  # 255 where some channel is below WHITE_LEVEL
    refined, kept, removed = _denoise(ink, p)
    out = apply_mask(img, u8(cv2.bitwise_not(refined)))
    gray = cv2.cvtColor(out, to_gray)
    # the ink mask: pixels at least half-way from white to the typical stroke tone (the
    # median of the ink pixels), as a pixel at least half covered by the resampled
    # stroke mask is ink in the main path
    is_ink = refined > 0
    tone = float(np.median(gray[is_ink])) if is_ink.any() else 0.0
    threshold = (255.0 + tone) / 2
    stages = ({"binary": mask_image(ink), "denoised": mask_image(refined),
               "masked": out.copy()} if keep_stages else {})
    return CanonResult(image=out, mask=is_ink & (gray <= threshold),
                       otsu_threshold=float(threshold), corner_flip=False,
                       kept_components=kept, removed_components=removed, stages=stages,
                       already_canonical=True)


def _denoise(ink: NDArray[np.uint8], p: CanonParams) -> tuple[NDArray[np.uint8], int, int]:
    """Step 4 on a 0 / 255 ink mask: components under ``max(1, ceil(min_area_frac * H *
    W))`` pixels removed; ``(ink, -1, 0)`` when that area is at most 1 (filter off)."""
    min_area = max(1, int(np.ceil(p.min_area_frac * ink.size))) if p.min_area_frac > 0 else 0
    return filter_components(ink, min_area) if min_area > 1 else (ink, -1, 0)


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
    return _pipeline(_as_rgb(image), is_bei, params or CanonParams(), keep_stages,
                     bgr=False, with_mask=True)


def canonicalize_bgr(image: NDArray[np.uint8], is_bei: bool,
                     params: CanonParams | None = None,
                     keep_stages: bool = False) -> CanonResult:
    """:func:`canonicalize_array` on a BGR image (OpenCV's channel order), for writers
    that encode with OpenCV: ``image`` and ``stages`` come back in BGR order with the
    same pixels as :func:`canonicalize_array` gives for the RGB image, channels
    reversed. ``mask`` is not computed (an empty ``(0, 0)`` array) unless the input is
    already canonical. Same errors as :func:`canonicalize_array`."""
    return _pipeline(_as_rgb(image), is_bei, params or CanonParams(), keep_stages,
                     bgr=True, with_mask=False)


def _pipeline(img: RGB, is_bei: bool, p: CanonParams, keep_stages: bool, bgr: bool,
              with_mask: bool) -> CanonResult:
    """Steps 0–6 (module docstring) with masks held as 0 / 255 uint8 images, so every
    step is one OpenCV pass: the Otsu call also gives the ink mask, masking is a
    bitwise OR with the background, padding ``copyMakeBorder``. Where the appearance is
    an inverted grey level the single grey channel is padded and resampled and only
    then copied to three channels (Lanczos works per channel)."""
    to_gray = cv2.COLOR_BGR2GRAY if bgr else cv2.COLOR_RGB2GRAY
    gray_full = u8(cv2.cvtColor(img, to_gray))
    problem = contrast_problem(gray_full)
    if problem is not None:  # a blank crop: nothing to threshold
        return _no_glyph(p.size, problem)
    if looks_canonical(img, p.size):
        res = _clean_canonical(img, p, keep_stages, to_gray)
        problem = ink_problem(res.mask)
        return res if problem is None else _no_glyph(p.size, problem, res.otsu_threshold)
    rgb, (top, _, left, _) = trim_letterbox(img)
    h, w = rgb.shape[:2]
    gray_rgb = gray_full[top:top + h, left:left + w]  # grey is per pixel: = grey of rgb
    stages: dict[str, RGB] = {}
    if is_bei:
        work = u8(cv2.bitwise_not(rgb))
        if keep_stages:
            stages["inverted"] = work
        gray = u8(cv2.cvtColor(work, to_gray))
    else:
        gray = gray_rgb
    threshold, ink_cv = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    ink = u8(ink_cv)
    flip = corner_mean(gray) <= threshold  # corners fall on the ink side of Otsu
    if flip:  # background is dark: the binary map is inverted
        ink = u8(cv2.bitwise_not(ink))
    if keep_stages:
        stages["binary"] = mask_image(ink)
    refined, kept, removed = _denoise(ink, p)
    background = u8(cv2.bitwise_not(refined))
    if keep_stages:
        stages["denoised"] = mask_image(refined)
    problem = _fraction_problem(cv2.countNonZero(refined) / refined.size)
    if problem is not None:
        return _no_glyph(p.size, problem, float(threshold))
    grey_out = is_bei != flip  # strokes are light in the original: inverted grey level
    masked = apply_mask(u8(cv2.bitwise_not(gray_rgb)) if grey_out else rgb, background)
    if keep_stages:
        stages["masked"] = three_channels(masked)
    square = pad_square(masked, 255)
    out = square if square.shape[0] == p.size else cv2.resize(
        square, (p.size, p.size), interpolation=cv2.INTER_LANCZOS4)
    if with_mask:
        mask_out = cv2.resize(pad_square(background, 255), (p.size, p.size),
                              interpolation=cv2.INTER_AREA) < 128
    else:
        mask_out = np.zeros((0, 0), dtype=bool)
    return CanonResult(image=three_channels(np.asarray(out)), mask=mask_out,
                       otsu_threshold=float(threshold), corner_flip=bool(flip),
                       kept_components=kept, removed_components=removed, stages=stages)


def wild_resize_array(image: NDArray[np.uint8], size: int = CANONICAL_SIZE) -> RGB:
    """Wild-Resize: pad the raw image to a square with the median border colour, then
    Lanczos-resample to ``size`` x ``size``. Returns ``(size, size, 3)`` uint8 RGB (the
    steps are per channel, so a BGR input gives the BGR output)."""
    rgb = _as_rgb(image)
    border = np.concatenate([rgb[0], rgb[-1], rgb[:, 0], rgb[:, -1]], axis=0)
    fill = tuple(int(v) for v in np.median(border, axis=0))
    return lanczos_resize(pad_to_square(rgb, (fill[0], fill[1], fill[2])), size)


