"""Render the bundled MUSE demo set: five simple scenes and their Label Studio annotation.

Output::

    <out>/images/<scene>.png     480x360 RGB scenes drawn with Pillow shapes
    <out>/annotations.json       a Label Studio JSON export in the MUSE schema
    <out>/MANIFEST.json          seed, library versions, sha256 per file

The scenes are made by the project (no artwork is copied): people are shapes with a
readable face (smile, frown with a tear, open mouth, straight mouth) and a hat that marks
a culture; every annotation box is the extent of what was drawn, so the annotation fits
the picture exactly. Each scene has people with emotion, visual clues and cause, two
activities (one with a wrong "negative" description), counted objects with one box per
instance, a scene label from the shipped scene table, one culture region, one relative
position and one remote interaction, so ``heritage-eval muse generate`` makes questions
for all 12 tasks. Nothing is random: ``--seed`` is recorded only; same Pillow and zlib,
same bytes.

Usage: ``python scripts/make_muse_demo.py [--out DIR]``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _demo_io as dio
import _muse_shapes as sh
from _muse_shapes import Box, Person

W, H = 480, 360


class Scene:
    """One picture being drawn and the annotation items gathered while drawing it."""

    def __init__(self, name: str, scene_label: str, sky: tuple[int, int, int],
                 ground: tuple[int, int, int], horizon: int) -> None:
        self.name, self.scene_label = name, scene_label
        self.img = Image.new("RGB", (W, H), sky)
        self.d = ImageDraw.Draw(self.img)
        self.d.rectangle((0, horizon, W, H), fill=ground)
        self.items: list[dict[str, Any]] = []
        self.counts: dict[str, int] = {}
        self._n = {"p": 0, "a": 0, "o": 0, "c": 0}

    def _id(self, prefix: str) -> str:
        self._n[prefix] += 1
        return f"{prefix}{self._n[prefix]}"

    def _box(self, rid: str, from_name: str, box: Box, kind: str, value: Any) -> None:
        x0, y0 = max(0.0, box[0]), max(0.0, box[1])
        x1, y1 = min(float(W), box[2]), min(float(H), box[3])
        geometry = {"x": round(x0 / W * 100, 4), "y": round(y0 / H * 100, 4),
                    "width": round((x1 - x0) / W * 100, 4),
                    "height": round((y1 - y0) / H * 100, 4), "rotation": 0}
        key = {"rectanglelabels": "rectanglelabels", "choices": "choices",
               "textarea": "text"}[kind]
        self.items.append({"id": rid, "from_name": from_name, "to_name": "image",
                           "type": kind, "original_width": W, "original_height": H,
                           "image_rotation": 0, "value": {**geometry, key: [value]}})

    def _image_level(self, from_name: str, kind: str, value: Any) -> None:
        key = {"choices": "choices", "textarea": "text", "number": "number"}[kind]
        self.items.append({"id": from_name, "from_name": from_name, "to_name": "image",
                           "type": kind, "value": {key: value if kind == "number"
                                                   else [value]}})

    def person(self, p: Person, clues: str, cause: str) -> tuple[str, Box, Box]:
        """Draw a person and annotate it (category, emotion, visual clues, cause)."""
        box, head = sh.draw_person(self.d, p)
        pid = self._id("p")
        self._box(pid, "character", box, "rectanglelabels", p.kind)
        self._box(pid, "emotion", box, "choices", p.emotion)
        self._box(pid, "visual_clues", box, "textarea", clues)
        self._box(pid, "emotion_cause", box, "textarea", cause)
        return pid, box, head

    def obj(self, name: str, box: Box) -> Box:
        """Annotate one object instance (its ``count_<name>`` is written at the end)."""
        self._box(self._id("o"), "object", box, "rectanglelabels", name)
        self.counts[name] = self.counts.get(name, 0) + 1
        return box

    def activity(self, label: str, box: Box, description: str,
                 negative: str | None = None) -> None:
        aid = self._id("a")
        self._box(aid, "activity", box, "rectanglelabels", label)
        self._box(aid, "activity_description", box, "textarea", description)
        if negative:
            self._box(aid, "negative_description", box, "textarea", negative)

    def culture(self, label: str, box: Box) -> None:
        self._box(self._id("c"), "culture", box, "rectanglelabels", label)

    def relations(self, position: str, remote: str) -> None:
        """Image-level items: scene, counts, relative position, remote interaction."""
        self._image_level("scene", "choices", self.scene_label)
        for name, n in sorted(self.counts.items()):
            self._image_level(f"count_{name.replace(' ', '_')}", "number", n)
        self._image_level("relative_position", "textarea", position)
        self._image_level("remote_interaction", "textarea", remote)


def market() -> Scene:
    s = Scene("market", "open-air market", (200, 225, 245), (205, 185, 145), 200)
    seller = Person("Woman", 160, 290, "Joy", (70, 120, 170), arms=(40.0, 40.0))
    _, woman, _ = s.person(seller, "She smiles broadly with her eyes open toward the buyer.",
                           "She is pleased that a customer has come to her stall.")
    s.d.rectangle((50, 120, 270, 145), fill=(230, 60, 60))  # awning on two poles
    for px in (55, 262):
        s.d.rectangle((px, 145, px + 4, 300), fill=(110, 70, 40))
    s.d.rectangle((60, 230, 260, 250), fill=(140, 90, 50))  # table
    for lx in (70, 245):
        s.d.rectangle((lx, 250, lx + 8, 300), fill=(110, 70, 40))
    fruits = [s.obj("fruit", sh.fruit(s.d, x, 220)) for x in (90, 130, 170, 210)]
    buyer = Person("Man", 350, 330, "Neutral", (90, 110, 60), arms=(95.0, 10.0), hat="fez")
    _, man, head = s.person(buyer, "His mouth is a straight line and his face is calm.",
                            "He is simply choosing which fruit to buy.")
    s.activity("selling fruit", sh.union(woman, *fruits, (60, 230, 260, 300)),
               "A woman stands behind a market stall offering a row of oranges for sale.",
               "A woman weighs sacks of grain on a scale for a customer.")
    s.activity("pointing at the fruit", man,
               "A man in a red fez stretches out his arm and points toward the fruit.")
    s.culture("Ottoman Turkish (fez)", sh.grow(head, 4))
    s.relations("A=p2;B=p1;lateral=left;depth=front;vertical=none",
                "A=p2;B=p1;evidence=The man points across the stall toward the seller and "
                "her fruit without touching her.")
    return s


def music_room() -> Scene:
    s = Scene("music_room", "music lesson room", (235, 220, 190), (150, 110, 80), 260)
    for box in ((40, 50, 110, 140), (370, 50, 440, 140)):
        s.obj("window", sh.window(s.d, box))
    s.d.rectangle((230, 285, 360, 305), fill=(110, 75, 50))  # a raised platform
    teacher = Person("Woman", 295, 285, "Joy", (120, 60, 120), arms=(150.0, 110.0),
                     hat="beret")
    _, woman, head = s.person(teacher, "Her eyes are bright and she smiles while she plays.",
                              "She enjoys playing a tune for her pupil.")
    hx, hy = teacher.hand(0)
    fiddle = s.obj("violin", sh.violin(s.d, hx + 8, hy + 20))
    pupil = Person("Girl", 130, 320, "Surprise", (230, 170, 60))
    _, girl, _ = s.person(pupil, "Her brows are raised and her mouth is a round O.",
                          "She is amazed by how the violin sounds.")
    s.activity("playing the violin", sh.union(woman, fiddle),
               "A woman in a beret stands on a low platform playing the violin.")
    s.activity("listening to music", girl,
               "A young girl stands on the floor and listens to the music in wonder.",
               "A girl sits at a piano practising her scales.")
    s.culture("French (Belle Epoque beret)", sh.grow(head, 4))
    s.relations("A=p1;B=p2;lateral=left;depth=back;vertical=above",
                "A=p2;B=p1;evidence=The girl faces the teacher from across the room, "
                "mouth open, listening to her play.")
    return s


def beach() -> Scene:
    s = Scene("beach", "sandy beach", (170, 210, 240), (235, 215, 160), 220)
    s.d.rectangle((0, 170, W, 220), fill=(60, 120, 190))  # the sea
    s.d.ellipse((375, 25, 425, 75), fill=(250, 220, 60))  # the sun
    for x in (70, 180):
        s.obj("boat", sh.boat(s.d, x, 200))
    child = Person("Boy", 120, 330, "Joy", (220, 60, 60), arms=(150.0, 120.0))
    _, boy, _ = s.person(child, "He grins with his head up and both arms raised.",
                         "He is delighted that his kite is flying high.")
    flyer = s.obj("kite", sh.kite(s.d, 60, 70, child.hand(0)))
    fisher = Person("Man", 360, 300, "Neutral", (60, 90, 150), arms=(120.0, 20.0),
                    hat="conical")
    _, man, head = s.person(fisher, "His face is still, with a flat mouth.",
                            "He is waiting patiently for a fish to bite.")
    hx, hy = fisher.hand(0)
    s.d.line((hx, hy, 250, 150), fill=sh.INK, width=2)  # the rod
    s.d.line((250, 150, 250, 205), fill=(90, 90, 90), width=1)  # the line
    s.activity("flying a kite", sh.union(boy, flyer),
               "A boy on the sand holds the string of a red kite flying in the sky.",
               "A boy builds a sandcastle with a bucket and spade.")
    s.activity("fishing", sh.union(man, (250, 150, hx, 205)),
               "A man in a conical hat holds a fishing rod out over the sea.")
    s.culture("Vietnamese (non la conical hat)", sh.grow(head, 4))
    s.relations("A=p1;B=p2;lateral=right;depth=front;vertical=none",
                "A=p1;B=p2;evidence=The boy waves his other arm toward the fisherman across "
                "the sand.")
    return s


def kitchen() -> Scene:
    s = Scene("kitchen", "kitchen", (225, 215, 200), (170, 140, 110), 250)
    s.d.rectangle((40, 80, 210, 88), fill=(120, 80, 50))  # shelf
    for x in (70, 120, 170):
        s.obj("jug", sh.jug(s.d, x, 80))
    stove = s.obj("stove", (300, 200, 420, 290))
    s.d.rectangle(stove, fill=(60, 60, 70))
    s.d.rectangle((340, 185, 380, 200), fill=(90, 90, 100))  # pot
    mother = Person("Woman", 260, 300, "Neutral", (90, 140, 90), arms=(100.0, 95.0),
                    hat="scarf")
    _, woman, head = s.person(mother, "Her mouth is straight and her face shows no strain.",
                              "She is busy cooking the family meal.")
    baby = Person("Baby", 105, 335, "Sadness", (240, 240, 250))
    _, infant, _ = s.person(baby, "Its mouth turns down and a tear runs from one eye.",
                            "The baby is crying because it wants its mother.")
    s.d.chord((55, 290, 155, 345), 0, 180, fill=(150, 100, 60))  # cradle, over the body
    cradle = s.obj("cradle", (55, 317, 155, 345))
    s.activity("cooking at the stove", sh.union(woman, stove),
               "A woman in a red headscarf stirs a pot on the stove.",
               "A woman washes clothes in a wooden tub.")
    s.activity("crying in the cradle", sh.union(infant, cradle),
               "A baby lies in a wooden cradle on the floor and cries.")
    s.culture("Russian (peasant headscarf)", sh.grow(head, 4))
    s.relations("A=p1;B=p2;lateral=left;depth=back;vertical=none",
                "A=p1;B=p2;evidence=The mother stretches her free hand toward the cradle "
                "without reaching the baby.")
    return s


def fair() -> Scene:
    s = Scene("fair", "village fair with dancing", (180, 215, 240), (120, 180, 90), 230)
    for x, size in ((45, 60), (440, 55), (330, 40)):
        s.obj("tree", sh.tree(s.d, x, 240, size))
    s.d.line((45, 60, 440, 70), fill=sh.INK, width=1)  # bunting string
    for x, colour in ((120, (220, 50, 50)), (200, (250, 200, 40)), (280, (60, 120, 220)),
                      (360, (220, 50, 50))):
        s.obj("flag", sh.flag(s.d, x, 62 + (x - 45) * 10 / 395, colour))
    lead = Person("Man", 200, 310, "Joy", (200, 60, 40), arms=(30.0, 80.0), hat="sombrero")
    _, man, head = s.person(lead, "He smiles widely as he dances.",
                            "He is enjoying the dance at the fair.")
    partner = Person("Woman", 290, 310, "Joy", (240, 180, 60), arms=(80.0, 30.0))
    _, woman, _ = s.person(partner, "She smiles with her eyes on her partner.",
                           "She is happy to be dancing with him.")
    watcher = Person("Boy", 400, 335, "Surprise", (70, 70, 160))
    _, boy, _ = s.person(watcher, "His brows are up and his mouth hangs open.",
                         "He is astonished by the lively dancing.")
    s.activity("dancing together", sh.union(man, woman),
               "A man in a wide sombrero and a woman in a yellow dress dance hand in hand.",
               "A couple sits on a bench eating bread.")
    s.activity("watching the dance", boy,
               "A boy stands apart at the side and watches the dancers.")
    s.culture("Mexican (charro sombrero)", sh.grow(head, 4))
    s.relations("A=p3;B=p2;lateral=left;depth=front;vertical=none",
                "A=p3;B=p1;evidence=The boy stands apart and stares at the dancing man with "
                "wide eyes.")
    return s


SCENES = (market, music_room, beach, kitchen, fair)


def generate(out: Path, seed: int = 0) -> list[Path]:
    """Draw every scene into ``out/images``, write ``out/annotations.json`` and
    ``out/MANIFEST.json``; returns the files written."""
    written: list[Path] = []
    tasks = []
    for n, make in enumerate(SCENES, start=1):
        scene = make()
        path = out / "images" / f"{scene.name}.png"
        dio.save(scene.img, path)
        written.append(path)
        tasks.append({"id": n, "data": {"image": f"images/{scene.name}.png"},
                      "annotations": [{"id": n, "result": scene.items}]})
    dio.write_json(out / "annotations.json", tasks)
    written.append(out / "annotations.json")
    return dio.write_manifest(out, "scripts/make_muse_demo.py", seed, [], written)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; returns the exit status."""
    return dio.demo_main(argv, __doc__, "muse", generate)


if __name__ == "__main__":
    raise SystemExit(main())
