"""Synthetic data sets of any size for ``bench_stream_scale.py``, each in its benchmark's
real input format, with real-size images.

Images come from a *pool* (:func:`image_pool`): a few hundred pictures of the real sizes
(scans and photos of 1,000–3,000 px, JPEG and PNG, with grain so that the files weigh
what real ones do; character crops of 200–800 px PNG for HCSU). Samples reference the
pool through **hard links** under their own file names, so 100,000 samples cost 100,000
directory entries, not 100,000 files' bytes, and no loader sees a repeated path
(Ancient-Bench notes duplicates, HCSU keeps the first of a repeated file name,
Chronicles-OCR refuses a repeated ``image_path``). MUSE references its source images by
path, so its questions repeat the pool's paths (the format allows it).

Each maker returns :class:`Made`: the ``run`` options that point at the data (and fit
its size) and the number of samples the run has. Sizes are exact for every benchmark but
Chronicles-OCR, whose sample count is rows x tasks of each row's script (the count is
returned).

- Ancient-Bench (:func:`make_ancient`): ``<medium>/conv.jsonl`` + ``<medium>/images/``
  over the nine media, ``{"image", "human_gt"}`` lines (``ancient_bench/loader.py``).
- HCSU (:func:`make_hcsu_scaled`): ``bei|tie/<calligrapher>-<script>/<char>_<j>.png`` and
  ``bei|tie_annotations.json`` (``hcsu/loader.py``, ``hcsu/schema.py``); classes of
  :func:`class_size` images, every image a target (``--per-class``).
- MUSE (:func:`make_muse`): a question file (``muse/questions.py``, schema 2) whose
  questions repeat, under new ids and over the pool's images, those ``muse generate``
  writes for the bundled demo set (``data/demo/muse``: all 12 tasks), with its
  ``_assets/`` folder (jigsaw pieces).
- Chronicles-OCR (:func:`make_chronicles`): ``Chronicles_OCR.jsonl`` + ``images/<script>/``
  (the plug-in's ``loader.py`` and ``tools/make_demo.py``), rows cycling over the seven
  scripts, the three ancient ones with ``spotting`` boxes and ``width`` / ``height``.
"""

from __future__ import annotations

import functools
import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _scale_data import CHARS, DOMAIN_NAMES, SCRIPTS
from bench_run_scale import MEDIA

REPO = Path(__file__).resolve().parents[1]
DEMO_MUSE = REPO / "data" / "demo" / "muse"
#: Pixel range of the long and short sides of the pool's scans (Ancient-Bench, MUSE,
#: Chronicles-OCR) and of HCSU's character crops.
SCAN_PX = (1000, 3000)
CROP_PX = (200, 800)
#: Transcriptions the synthetic ground truths are cut from.
TEXTS = ("天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏闰余成岁律吕调阳",
         "永和九年岁在癸丑暮春之初会于会稽山阴之兰亭修禊事也群贤毕至少长咸集",
         "学而时习之不亦说乎有朋自远方来不亦乐乎人不知而不愠不亦君子乎")
#: Chronicles-OCR scripts (the release's names); the first three carry ``spotting``.
CHRONICLES_SCRIPTS = ("甲骨文", "金文", "篆书", "隶书", "楷书", "行书", "草书")
ANCIENT_SCRIPTS = frozenset(CHRONICLES_SCRIPTS[:3])


class Made(NamedTuple):
    """A data set made: ``args`` (``run`` options naming it) and its sample count."""

    args: list[str]
    samples: int


def _picture(rng: random.Random, size: tuple[int, int], ground: tuple[int, int, int],
             ink: tuple[int, int, int], strokes: int) -> Image.Image:
    """A ``size`` RGB picture: mottled ground, ``strokes`` ink strokes, fine grain."""
    w, h = size
    mottle = Image.effect_noise((max(1, w // 16), max(1, h // 16)), 60).resize(
        (w, h), Image.Resampling.BILINEAR)
    img = Image.composite(Image.new("RGB", size, ground),
                          Image.new("RGB", size, tuple(c - 25 for c in ground)), mottle)
    draw = ImageDraw.Draw(img)
    width = max(2, min(w, h) // 60)
    for _ in range(strokes):
        x, y = rng.randrange(w), rng.randrange(h)
        draw.line([(x, y), (x + rng.randint(-w // 8, w // 8), y + rng.randint(-h // 8, h // 8))],
                  fill=ink, width=width)
    return Image.blend(img, _grain().crop((0, 0, w, h)).convert("RGB"), 0.08)


@functools.cache
def _grain() -> Image.Image:
    """Fine grey grain of the largest pool size, made once (each picture crops it)."""
    side = max(SCAN_PX[1], CROP_PX[1])
    return Image.effect_noise((side, side), 24)


def image_pool(folder: Path, count: int, px: tuple[int, int] = SCAN_PX,
               crops: bool = False) -> list[Path]:
    """``count`` images under ``folder`` (reused when there), sides drawn in ``px``;
    scans (``crops=False``): two in three JPEG (quality 88), one PNG (zlib level 1: a
    noisy 5 Mpx PNG takes 1.6 s at the default level, 0.3 s at 1, and weighs 5-6 MB
    either way); crops: PNG, dark ink on buff. Deterministic per index."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(count):
        suffix = ".png" if crops or i % 3 == 2 else ".jpg"
        path = folder / f"pool_{i:04d}{suffix}"
        out.append(path)
        if path.exists():
            continue
        rng = random.Random(f"pool:{crops}:{i}")
        size = (rng.randint(*px), rng.randint(*px))
        ground = (225, 210, 180) if crops else (rng.randint(150, 235), rng.randint(130, 220),
                                                 rng.randint(100, 200))
        img = _picture(rng, size, ground, (30, 25, 20), 12 if crops else 60)
        tmp = path.with_suffix(".part" + suffix)
        if suffix == ".jpg":
            img.save(tmp, "JPEG", quality=88)
        else:
            img.save(tmp, "PNG", compress_level=6 if crops else 1)
        tmp.replace(path)
    return out


def _link(src: Path, dst: Path) -> None:
    """``dst`` as a hard link to ``src`` (a copy where the file system has none)."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def _text(i: int, lo: int = 6, hi: int = 30) -> str:
    base = TEXTS[i % len(TEXTS)]
    start = (i * 7) % len(base)
    length = lo + (i * 13) % (hi - lo + 1)
    return (base[start:] + base)[:length]


def make_ancient(root: Path, n: int, pool: Sequence[Path]) -> Made:
    """``n`` Ancient-Bench samples over the nine media (round robin) under ``root``."""
    handles = {}
    for medium in MEDIA:
        (root / medium / "images").mkdir(parents=True, exist_ok=True)
        handles[medium] = (root / medium / "conv.jsonl").open("w", encoding="utf-8")
    try:
        for i in range(n):
            medium, src = MEDIA[i % len(MEDIA)], pool[i % len(pool)]
            name = f"{medium}_{i:07d}{src.suffix}"
            _link(src, root / medium / "images" / name)
            handles[medium].write(json.dumps({"image": name, "human_gt": _text(i)},
                                             ensure_ascii=False) + "\n")
    finally:
        for fh in handles.values():
            fh.close()
    return Made(["--data", str(root)], n)


def class_size(n: int) -> int:
    """Images (all targets) per HCSU class for ``n`` samples: 50, fewer for small ``n``
    so that there are at least 10 classes, never under 4."""
    return max(4, min(50, n // 10))


def make_hcsu_scaled(root: Path, n: int, pool: Sequence[Path],
                     discrimination: bool = True) -> Made:
    """An HCSU release of ``ceil(n / class_size)`` classes (alternately Bei and Tie) of
    :func:`class_size` images each, every class its own calligrapher and script, chars
    cycling over :data:`~_scale_data.CHARS`; ``--per-class`` makes every image a target,
    so the run has ``n`` samples when ``class_size`` divides ``n``. ``discrimination``:
    the options add ``--distractor-pool all`` (distractors from both domains) and a
    ``--k`` of at most the class count (else: the description task's options)."""
    size = class_size(n)
    n_classes = -(-n // size)
    records: dict[str, list[dict[str, object]]] = {"bei": [], "tie": []}
    made = 0
    for c in range(n_classes):
        domain = "bei" if c % 2 == 0 else "tie"
        source = DOMAIN_NAMES[domain][0]
        calligrapher, script = f"书家{c:05d}", SCRIPTS[c % len(SCRIPTS)]
        folder = root / domain / f"{calligrapher}-{script}"
        folder.mkdir(parents=True, exist_ok=True)
        for j in range(min(size, n - made)):
            char = CHARS[(c * 7 + j) % len(CHARS)]
            name = f"{char}_{j}.png"
            _link(pool[made % len(pool)], folder / name)
            made += 1
            records[domain].append({
                "filename": f"{calligrapher}-{script}/{name}", "char": char,
                "calligrapher": calligrapher, "calligrapher_en": f"Calligrapher {c}",
                "dynasty": "唐", "birth_year": 600 + c % 300, "death_year": 660 + c % 300,
                "script_type": script, "source_type": source, "quality": "clear",
                "stroke_style": f"Stroke style of class {c}: firm entries, even weight.",
                "ink_style": f"Ink of class {c}: dense black on buff paper.",
                "description": f"Style of calligrapher {c} in {script}: compact, upright "
                               f"characters with a steady rhythm (class {c})."})
    for domain, rows in records.items():
        (root / domain).mkdir(parents=True, exist_ok=True)
        (root / f"{domain}_annotations.json").write_text(
            json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    args = ["--data", str(root), "--per-class", str(size)]
    if discrimination:
        args += ["--distractor-pool", "all", "--k", str(min(8, n_classes))]
    return Made(args, n)


def muse_template(folder: Path) -> Path:
    """The question file ``muse generate`` writes for the bundled demo set (all 12
    tasks), made once under ``folder`` (``template.jsonl`` + ``template_assets/``)."""
    out = folder / "template.jsonl"
    if not out.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-c", "import sys; from heritage_eval.cli.main "
                        "import main; sys.exit(main())", "muse", "generate",
                        "--annotations", str(DEMO_MUSE / "annotations.json"),
                        "--images", str(DEMO_MUSE / "images"), "--out", str(out),
                        "--no-progress", "--overwrite"],
                       check=True, capture_output=True, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    return out


def make_muse(root: Path, n: int, pool: Sequence[Path], template: Path) -> Made:
    """``n`` MUSE questions under ``root`` (``questions.jsonl``, ``questions_assets/``,
    ``images/`` = hard links to ``pool``): question ``i`` repeats template question
    ``i mod T`` with image id ``s<i>`` and source image ``pool[i mod len(pool)]``."""
    lines = template.read_text(encoding="utf-8").splitlines()
    header, questions = json.loads(lines[0]), [json.loads(x) for x in lines[1:]]
    images = root / "images"
    images.mkdir(parents=True, exist_ok=True)
    names = []
    for src in pool:
        _link(src, images / src.name)
        names.append(src.name)
    shutil.copytree(template.with_name(f"{template.stem}_assets"), root / "questions_assets",
                    dirs_exist_ok=True)
    old_assets = f"{template.stem}_assets/"
    header["source"].update(images_dir="images", images_dir_relative="images",
                            images_dir_absolute=str(images.resolve()), n_images=len(pool),
                            n_questions=n)
    with (root / "questions.jsonl").open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(header, ensure_ascii=False) + "\n")
        for i in range(n):
            q = questions[i % len(questions)]
            image_id = f"s{i:07d}"
            text = json.dumps(q, ensure_ascii=False)
            text = text.replace(f"@images/{q['image_id']}.png", f"@images/{names[i % len(names)]}")
            text = text.replace(old_assets, "questions_assets/")
            q = json.loads(text)
            q["id"] = f"{image_id}:{q['id'].split(':', 1)[1]}"
            q["image_id"] = image_id
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    return Made(["--questions", str(root / "questions.jsonl"), "--images", str(images)], n)


def _spotting(rng: random.Random, text: str, w: int, h: int) -> list[dict[str, object]]:
    """One box per character, in columns read right to left, inside ``w`` x ``h``."""
    side = max(8, min(w, h) // 8)
    per_col = max(1, (h - side) // side)
    out: list[dict[str, object]] = []
    for k, char in enumerate(text):
        col, row = divmod(k, per_col)
        x2 = w - side // 2 - col * side
        y1 = side // 2 + row * side
        if x2 - side < 0:
            break
        jitter = rng.randint(0, max(0, side // 10))
        out.append({"bbox": {"x1": x2 - side + jitter, "y1": y1 + jitter, "x2": x2,
                             "y2": y1 + side - 1}, "modern_char": char})
    return out


def make_chronicles(root: Path, n: int, pool: Sequence[Path],
                    tasks_per_script: tuple[int, int] = (3, 2)) -> Made:
    """Rows cycling over the seven scripts until ``n`` samples: an ancient-script row has
    ``tasks_per_script[0]`` samples (its tasks asked), a modern one
    ``tasks_per_script[1]``; returns the sample count reached (at most ``n`` + 2)."""
    lines, samples, i = [], 0, 0
    while samples < n:
        script = CHRONICLES_SCRIPTS[i % len(CHRONICLES_SCRIPTS)]
        src = pool[i % len(pool)]
        folder = root / "images" / script
        folder.mkdir(parents=True, exist_ok=True)
        rel = f"images/{script}/r{i:07d}{src.suffix}"
        _link(src, root / rel)
        row: dict[str, object] = {"image_path": rel, "font_type": script,
                                  "annotation": _text(i, 4, 16)}
        if script in ANCIENT_SCRIPTS:
            with Image.open(src) as im:
                w, h = im.size
            row.update(spotting=_spotting(random.Random(i), str(row["annotation"]), w, h),
                       width=w, height=h)
            samples += tasks_per_script[0]
        else:
            samples += tasks_per_script[1]
        lines.append(json.dumps(row, ensure_ascii=False))
        i += 1
    (root / "Chronicles_OCR.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Made(["--data", str(root)], samples)
