"""The size cap of images sent to a model (a light module: no Pillow import)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class SizeCap:
    """Limit on the size of an image sent to a model.

    ``max_side``: longest side in pixels (``None``: no limit). ``max_pixels``: width x
    height (``None``: no limit). Both may be set; the tighter one wins. Aspect ratio is
    kept; images are never upscaled.
    """

    max_side: int | None = None
    max_pixels: int | None = None

    def target_size(self, width: int, height: int) -> tuple[int, int]:
        """Size after applying the cap to a ``width`` x ``height`` image (pixels)."""
        scale = 1.0
        if self.max_side is not None and max(width, height) > self.max_side:
            scale = min(scale, self.max_side / max(width, height))
        if self.max_pixels is not None and width * height > self.max_pixels:
            scale = min(scale, math.sqrt(self.max_pixels / (width * height)))
        if scale >= 1.0:
            return width, height
        return max(1, int(width * scale)), max(1, int(height * scale))
