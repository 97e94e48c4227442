"""Synthetic data of ``bench_scale_data.py``, shaped like ``../shared/realdata``, and the
loopback OpenAI-compatible server its finished runs are made with.

- MUSE: the Label Studio export and JPEG artworks of ``bench_muse_generate.py``
  (:func:`make_dataset`, imported, not copied).
- HCSU: ``tie/`` and ``bei/`` class folders with tiny RGB PNGs and the two annotation
  files (:func:`make_hcsu`): the real sample's shape — 27 images per class, 30 characters
  shared between classes, every class its own calligrapher, script and texts.
- Ancient-Bench: the release of ``bench_run_scale.py`` (:func:`make_release`, imported).
"""

from __future__ import annotations

import json
import sys
import threading
import zlib
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_muse_generate import make_dataset
from bench_run_scale import _Handler as _RunScaleHandler
from bench_run_scale import make_release

__all__ = ["AnswerServer", "make_dataset", "make_hcsu", "make_release", "real_counts"]

#: Sizes of the real sample (``../shared/realdata``, README) when it is absent.
FALLBACK_COUNTS = {"muse_images": 7, "hcsu_images": 109, "hcsu_classes": 4,
                   "ancient_samples": 34}
#: Characters the synthetic HCSU classes draw from (30 shared, as in the real sample).
CHARS = "不之也以其而者天地人日月山水風雲書畫永和九年歲在癸丑暮春會稽陰蘭亭"
IMAGES_PER_CLASS = 27
DOMAIN_NAMES = {"bei": ("Bei", "碑"), "tie": ("Tie", "帖")}
SCRIPTS = ["篆书", "隶书", "楷书", "行书", "草书"]


def real_counts(realdata: Path) -> dict[str, int]:
    """Counts of the real sample under ``realdata`` (MUSE export tasks, HCSU records and
    classes, Ancient-Bench ``conv.jsonl`` lines); :data:`FALLBACK_COUNTS` when absent."""
    try:
        muse = len(json.loads((realdata / "muse" / "annotations.json").read_text("utf-8")))
        records = [r for d in ("bei", "tie") for r in json.loads(
            (realdata / "hcsu" / f"{d}_annotations.json").read_text("utf-8"))]
        classes = {(r["source_type"], r["calligrapher"], r["script_type"]) for r in records}
        ancient = sum(len(p.read_text("utf-8").splitlines())
                      for p in (realdata / "ancient_bench").glob("*/conv.jsonl"))
    except (OSError, ValueError, KeyError):
        return dict(FALLBACK_COUNTS)
    return {"muse_images": muse, "hcsu_images": len(records), "hcsu_classes": len(classes),
            "ancient_samples": ancient}


def _glyph(i: int) -> Image.Image:
    """A 24 x 24 RGB PNG image, distinct per ``i`` (dark strokes on buff)."""
    img = Image.new("RGB", (24, 24), (225, 210, 180))
    img.putdata([(30, 25, 20) if (i >> (k % 17)) & 1 else (225, 210, 180)
                 for k in range(24 * 24)])
    return img


def make_hcsu(root: Path, n_classes: int) -> Path:
    """``n_classes`` style classes (half Bei, half Tie) of :data:`IMAGES_PER_CLASS`
    images each under ``root`` (reused when there); returns ``root``."""
    if (root / "tie_annotations.json").exists():
        return root
    records: dict[str, list[dict[str, object]]] = {"bei": [], "tie": []}
    serial = 0
    for c in range(n_classes):
        domain = "bei" if c % 2 == 0 else "tie"
        source, _ = DOMAIN_NAMES[domain]
        calligrapher, script = f"书家{c:03d}", SCRIPTS[c % len(SCRIPTS)]
        folder = root / domain / f"{calligrapher}-{script}"
        folder.mkdir(parents=True, exist_ok=True)
        for j in range(IMAGES_PER_CLASS):
            char = CHARS[(c * 7 + j) % len(CHARS)]
            name = f"{char}_{j}.png"
            _glyph(serial).save(folder / name)
            serial += 1
            records[domain].append({
                "filename": f"{calligrapher}-{script}/{name}", "char": char,
                "calligrapher": calligrapher, "calligrapher_en": f"Calligrapher {c}",
                "dynasty": "唐", "birth_year": 600 + c, "death_year": 660 + c,
                "script_type": script, "source_type": source, "quality": "clear",
                "stroke_style": f"Stroke style of class {c}: firm entries, even weight.",
                "ink_style": f"Ink of class {c}: dense black on buff paper.",
                "description": f"Style of calligrapher {c} in {script}: compact, upright "
                               f"characters with a steady rhythm (class {c})."})
    for domain, rows in records.items():
        (root / f"{domain}_annotations.json").write_text(
            json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    return root


class _Handler(_RunScaleHandler):
    """The loopback server of ``bench_run_scale.py``, answering from :attr:`answers`."""

    answers: ClassVar[list[str]] = ["A"]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        answers = type(self).answers
        text = answers[zlib.crc32(body) % len(answers)]  # varied, same for the same request
        self._send(json.dumps({
            "id": "x", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}}).encode())


class AnswerServer:
    """A loopback OpenAI-compatible server (no latency) answering every chat request with
    one of :attr:`answers`, picked by a CRC of the request (deterministic)."""

    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer_with(self, answers: list[str]) -> None:
        """Answer later requests with ``answers``."""
        _Handler.answers = list(answers)

    def close(self) -> None:
        self.server.shutdown()
