"""Drawing primitives of the MUSE demo scenes (``make_muse_demo.py``): people as simple
shapes with a readable face, and the props of the scenes. Every function draws on a
Pillow ``ImageDraw`` and returns the pixel box ``(x0, y0, x1, y1)`` of what it drew, so
the annotation boxes are exactly the drawn extents."""

from __future__ import annotations

import math
from dataclasses import dataclass

from PIL import ImageDraw

Box = tuple[float, float, float, float]

SKIN = (236, 196, 160)
INK = (40, 30, 25)

#: Height in pixels (head to feet) of each person category at the default scale.
HEIGHTS = {"Man": 150, "Woman": 140, "Boy": 100, "Girl": 95, "Baby": 46}


def union(*boxes: Box) -> Box:
    """Smallest box holding every one of ``boxes``."""
    return (min(b[0] for b in boxes), min(b[1] for b in boxes),
            max(b[2] for b in boxes), max(b[3] for b in boxes))


def grow(box: Box, by: float) -> Box:
    """``box`` enlarged by ``by`` pixels on every side."""
    return (box[0] - by, box[1] - by, box[2] + by, box[3] + by)


@dataclass(frozen=True)
class Person:
    """A figure standing with its feet at ``(cx, feet)``, facing the viewer.

    ``arms``: angles in degrees of the image-left and image-right arm, from hanging
    straight down (0) through horizontal (90) to straight up (180). ``emotion`` picks the
    face (Joy: smile; Sadness: frown and a tear; Surprise: raised brows, open mouth;
    Neutral: straight mouth); ``hat`` one of ``fez``, ``beret``, ``conical``, ``scarf``,
    ``sombrero`` or ``None``; ``clothes`` the RGB colour of the body."""

    kind: str
    cx: float
    feet: float
    emotion: str
    clothes: tuple[int, int, int]
    arms: tuple[float, float] = (15.0, 15.0)
    hat: str | None = None

    @property
    def height(self) -> float:
        return float(HEIGHTS[self.kind])

    @property
    def head(self) -> tuple[float, float, float]:
        """Centre x, centre y and radius of the head."""
        r = self.height * (0.16 if self.kind == "Baby" else 0.11)
        return self.cx, self.feet - self.height + r, r

    def hand(self, side: int) -> tuple[float, float]:
        """Where the arm of ``side`` (0 image-left, 1 image-right) ends."""
        _, hy, r = self.head
        shoulder_y = hy + r * 1.6
        half = self.height * 0.12
        sx = self.cx - half if side == 0 else self.cx + half
        length = self.height * 0.34
        angle = math.radians(self.arms[side])
        dx = math.sin(angle) * length * (-1 if side == 0 else 1)
        return sx + dx, shoulder_y + math.cos(angle) * length


def _face(d: ImageDraw.ImageDraw, p: Person) -> None:
    x, y, r = p.head
    e = r * 0.35
    for ex in (x - e, x + e):
        d.ellipse((ex - r * 0.1, y - r * 0.2, ex + r * 0.1, y), fill=INK)
    if p.emotion == "Joy":
        d.arc((x - r * 0.45, y - r * 0.1, x + r * 0.45, y + r * 0.6), 20, 160, fill=INK,
              width=2)
    elif p.emotion == "Sadness":
        d.arc((x - r * 0.4, y + r * 0.35, x + r * 0.4, y + r * 0.85), 200, 340, fill=INK,
              width=2)
        d.ellipse((x + e - r * 0.1, y + r * 0.05, x + e + r * 0.12, y + r * 0.35),
                  fill=(70, 130, 230))
    elif p.emotion == "Surprise":
        d.ellipse((x - r * 0.18, y + r * 0.3, x + r * 0.18, y + r * 0.7), fill=INK)
        for ex in (x - e, x + e):
            d.arc((ex - r * 0.2, y - r * 0.6, ex + r * 0.2, y - r * 0.2), 200, 340, fill=INK,
                  width=2)
    else:
        d.line((x - r * 0.35, y + r * 0.5, x + r * 0.35, y + r * 0.5), fill=INK, width=2)


def _hat(d: ImageDraw.ImageDraw, p: Person) -> Box:
    x, y, r = p.head
    top = y - r
    if p.hat == "fez":
        d.polygon([(x - r * 0.6, top + r * 0.3), (x + r * 0.6, top + r * 0.3),
                   (x + r * 0.45, top - r * 0.7), (x - r * 0.45, top - r * 0.7)],
                  fill=(180, 20, 30))
        d.line((x, top - r * 0.7, x + r * 0.7, top - r * 0.1), fill=INK, width=2)
        return (x - r * 0.6, top - r * 0.7, x + r * 0.7, top + r * 0.3)
    if p.hat == "beret":
        d.ellipse((x - r * 1.1, top - r * 0.5, x + r * 0.9, top + r * 0.5),
                  fill=(30, 30, 60))
        return (x - r * 1.1, top - r * 0.5, x + r * 0.9, top + r * 0.5)
    if p.hat == "conical":
        d.polygon([(x - r * 1.8, top + r * 0.5), (x + r * 1.8, top + r * 0.5),
                   (x, top - r * 1.2)], fill=(225, 200, 120), outline=INK)
        return (x - r * 1.8, top - r * 1.2, x + r * 1.8, top + r * 0.5)
    if p.hat == "scarf":
        d.chord((x - r * 1.15, top - r * 0.2, x + r * 1.15, y + r * 1.3), 180, 360,
                fill=(200, 40, 60))
        d.polygon([(x - r * 0.3, y + r * 0.9), (x + r * 0.3, y + r * 0.9), (x, y + r * 1.6)],
                  fill=(200, 40, 60))
        return (x - r * 1.15, top - r * 0.2, x + r * 1.15, y + r * 1.6)
    if p.hat == "sombrero":
        d.ellipse((x - r * 2.4, top - r * 0.1, x + r * 2.4, top + r * 0.6),
                  fill=(150, 100, 40))
        d.rectangle((x - r * 0.7, top - r * 1.0, x + r * 0.7, top + r * 0.3),
                    fill=(150, 100, 40))
        return (x - r * 2.4, top - r * 1.0, x + r * 2.4, top + r * 0.6)
    return (x - r, top, x + r, top)


def draw_person(d: ImageDraw.ImageDraw, p: Person) -> tuple[Box, Box]:
    """Draw ``p``; returns (whole figure box, head-and-hat box)."""
    x, y, r = p.head
    h, feet = p.height, p.feet
    neck = y + r
    half = h * 0.12
    if p.kind == "Baby":  # a swaddled body below the head
        body = (x - half * 1.2, neck - 2, x + half * 1.2, feet)
        d.ellipse(body, fill=p.clothes)
    elif p.kind in ("Woman", "Girl"):  # a dress: a trapezoid to the feet
        body = (x - half * 1.7, neck, x + half * 1.7, feet)
        d.polygon([(x - half * 0.8, neck), (x + half * 0.8, neck), (x + half * 1.7, feet),
                   (x - half * 1.7, feet)], fill=p.clothes)
    else:  # a tunic and two legs
        hip = feet - h * 0.42
        d.rectangle((x - half, neck, x + half, hip), fill=p.clothes)
        for lx in (x - half * 0.55, x + half * 0.55):
            d.line((lx, hip, lx, feet), fill=INK, width=max(3, round(h / 30)))
        body = (x - half, neck, x + half, feet)
    parts = [body]
    if p.kind != "Baby":
        for side in (0, 1):
            sx = x - half if side == 0 else x + half
            hx, hy = p.hand(side)
            d.line((sx, neck + r * 0.6, hx, hy), fill=p.clothes, width=max(3, round(h / 25)))
            d.ellipse((hx - 3, hy - 3, hx + 3, hy + 3), fill=SKIN)
            parts.append((min(sx, hx) - 3, min(neck, hy) - 3, max(sx, hx) + 3, hy + 3))
    d.ellipse((x - r, y - r, x + r, y + r), fill=SKIN, outline=INK)
    _face(d, p)
    hat = _hat(d, p) if p.hat else (x - r, y - r, x + r, y - r)
    head = union((x - r, y - r, x + r, y + r), hat)
    return union(*parts, head), head


def fruit(d: ImageDraw.ImageDraw, x: float, y: float, r: float = 9) -> Box:
    """An orange fruit centred at ``(x, y)``."""
    d.ellipse((x - r, y - r, x + r, y + r), fill=(240, 140, 30), outline=INK)
    d.line((x, y - r, x + 3, y - r - 4), fill=(60, 120, 40), width=2)
    return (x - r, y - r - 4, x + r + 3, y + r)


def window(d: ImageDraw.ImageDraw, box: Box) -> Box:
    """A window with a cross frame."""
    x0, y0, x1, y1 = box
    d.rectangle(box, fill=(190, 220, 245), outline=(110, 80, 50), width=4)
    d.line(((x0 + x1) / 2, y0, (x0 + x1) / 2, y1), fill=(110, 80, 50), width=3)
    d.line((x0, (y0 + y1) / 2, x1, (y0 + y1) / 2), fill=(110, 80, 50), width=3)
    return box


def violin(d: ImageDraw.ImageDraw, x: float, y: float) -> Box:
    """A violin body at ``(x, y)`` with its neck pointing up-left, and a bow."""
    d.ellipse((x - 9, y - 16, x + 9, y + 16), fill=(150, 70, 20), outline=INK)
    d.line((x - 4, y - 14, x - 14, y - 36), fill=INK, width=3)
    d.line((x - 26, y - 4, x + 28, y + 2), fill=(120, 100, 80), width=2)
    return (x - 26, y - 36, x + 28, y + 16)


def boat(d: ImageDraw.ImageDraw, x: float, y: float) -> Box:
    """A sailing boat whose hull's top edge is centred at ``(x, y)``."""
    d.polygon([(x - 30, y), (x + 30, y), (x + 20, y + 12), (x - 20, y + 12)],
              fill=(120, 70, 40))
    d.line((x, y, x, y - 40), fill=INK, width=2)
    d.polygon([(x + 2, y - 38), (x + 2, y - 4), (x + 26, y - 4)], fill=(250, 250, 245))
    return (x - 30, y - 40, x + 30, y + 12)


def kite(d: ImageDraw.ImageDraw, x: float, y: float, hand: tuple[float, float]) -> Box:
    """A diamond kite centred at ``(x, y)`` on a string down to ``hand``."""
    d.line((x, y + 22, hand[0], hand[1]), fill=INK, width=1)
    d.polygon([(x, y - 22), (x + 16, y), (x, y + 22), (x - 16, y)], fill=(220, 40, 40),
              outline=INK)
    return (x - 16, y - 22, x + 16, y + 22)


def jug(d: ImageDraw.ImageDraw, x: float, bottom: float) -> Box:
    """A clay jug standing on ``bottom``, centred on ``x``."""
    d.ellipse((x - 12, bottom - 30, x + 12, bottom), fill=(170, 90, 50), outline=INK)
    d.rectangle((x - 5, bottom - 38, x + 5, bottom - 27), fill=(170, 90, 50), outline=INK)
    d.arc((x + 6, bottom - 30, x + 20, bottom - 14), 270, 90, fill=INK, width=2)
    return (x - 12, bottom - 38, x + 20, bottom)


def tree(d: ImageDraw.ImageDraw, x: float, ground: float, size: float = 60) -> Box:
    """A round-crowned tree standing on ``ground``."""
    d.rectangle((x - 6, ground - size, x + 6, ground), fill=(110, 70, 40))
    d.ellipse((x - size * 0.5, ground - size * 1.8, x + size * 0.5, ground - size * 0.8),
              fill=(60, 140, 60))
    return (x - size * 0.5, ground - size * 1.8, x + size * 0.5, ground)


def flag(d: ImageDraw.ImageDraw, x: float, y: float, colour: tuple[int, int, int]) -> Box:
    """A triangular bunting flag hanging from ``(x, y)``."""
    d.polygon([(x - 10, y), (x + 10, y), (x, y + 22)], fill=colour, outline=INK)
    return (x - 10, y, x + 10, y + 22)
