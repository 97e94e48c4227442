"""Generated run folders for the streamed-build tests, and a site normalised for comparison.

:func:`golden_runs` writes three small run folders that reach every part of a build
(several data pages per run, shared / missing images, a group key first seen mid-file, a
score not in the summary, two models on the same ids, CJK text, a truncated line);
:func:`normalised_site` reads a built site back with what differs between two builds of
the same input replaced (the temporary folder, thumbnail keys, which hash the absolute
path and mtime). ``tests/viewer/golden/`` holds that normalised site as the
non-streaming builder (before issue 23) wrote it; the index and search shards of a site
built since are compared joined back into that builder's single ``index.js`` and
``search.js`` (:mod:`tests.viewer.index_reader`).
"""

from __future__ import annotations

import re
from pathlib import Path

from heritage_eval.core.benchmark import MetricSpec
from tests.viewer.conftest import make_image, record, write_run
from tests.viewer.index_reader import old_index_text, old_search_text

GOLDEN = Path(__file__).resolve().parent / "golden"
#: a data-page size small enough for several pages per run (monkeypatched in the test)
GOLDEN_PAGE_SIZE = 3
_KEY = re.compile(r"(?<![0-9a-f])[0-9a-f]{16}(?![0-9a-f])")


def golden_runs(tmp: Path) -> list[Path]:
    """Three run folders under ``tmp`` (images under ``tmp/img``)."""
    imgs = [make_image(tmp / "img" / f"{c}.png", (60 + 10 * k, 40), (20 * k, 90, 40))
            for k, c in enumerate("abc")]
    make_image(tmp / "img" / "big.jpg", (2200, 300))
    media = ["Seal", "Bronze", "Oracle"]
    ab = []
    for i in range(8):
        gt, pred = "天地玄黃宇宙"[: 3 + i % 3], "天地玄黄宙"[: 2 + i % 4]
        ab.append(record(
            f"ab/{i:03d}", benchmark="ancient-bench", state="unparsed" if i == 5 else "scored",
            scores={"ned_score": round(i / 8, 3), "f1": 1.0 - i / 10},
            groups={"medium": media[i % 3], **({"era": "Han"} if i >= 4 else {})},
            images=["big.jpg" if i == 2 else "gone.png" if i == 6 else imgs[i % 3].name],
            image_root=str(imgs[0].parent), answer=pred if i != 5 else None,
            response=f"<res>{pred}</res>", reference=gt,
            details={"normalized_ground_truth": gt, "normalized_prediction": pred}))
    ab_metrics = (MetricSpec("ned_score", "NED", scale=100.0, decimals=1),
                  MetricSpec("f1", "F1"))
    run_ab = write_run(tmp / "ab", ab, benchmark="ancient-bench", metrics=ab_metrics,
                       group_keys=["medium"], extra_lines=['{"schema": "heritage-eval/sa'])
    toy1 = [record(f"q{i}", model="m1", scores={"acc": float(i % 2), "extra": i / 7},
                   groups={"task": "t" + str(i % 2)}, answer={"label": i} if i == 3 else "A"
                   + "x" * (60 * (i == 4)), reference="B" if i % 2 else "A",
                   state="error" if i == 2 else "scored")
            for i in range(5)]
    toy2 = [record(f"q{i}", model="m2", scores={"acc": float(i % 3 == 0)},
                   groups={"task": "t" + str(i % 2)}, answer="A",
                   state="unscored" if i == 1 else "scored")
            for i in range(4)]
    return [run_ab, write_run(tmp / "toy1", toy1, group_keys=["task"]),
            write_run(tmp / "toy2", toy2, group_keys=["task"])]


def normalised_site(site: Path, tmp: Path) -> dict[str, str]:
    """``{relative path: text}`` of the site's ``index.html`` and ``data/*.js`` (the index
    and search shards joined as ``data/index.js`` and ``data/search.js``) with ``tmp``
    written ``<TMP>`` and each thumbnail key written ``K<n>`` (``n``: its order of first
    appearance over the files in name order)."""
    keys: dict[str, str] = {}

    def key(m: re.Match[str]) -> str:
        return keys.setdefault(m.group(0), f"K{len(keys)}")

    texts = {"index.html": (site / "index.html").read_text(encoding="utf-8"),
             "data/index.js": old_index_text(site), "data/search.js": old_search_text(site)}
    for f in (site / "data").glob("r*-p*.js"):
        texts[f"data/{f.name}"] = f.read_text(encoding="utf-8")
    out = {}
    for name in ["index.html", *sorted(n for n in texts if n.startswith("data/"))]:
        out[name] = _KEY.sub(key, texts[name].replace(tmp.resolve().as_posix(), "<TMP>"))
    return out


def write_golden(site: Path, tmp: Path) -> None:
    """Store :func:`normalised_site` under :data:`GOLDEN` (one file per site file)."""
    GOLDEN.mkdir(exist_ok=True)
    for name, text in normalised_site(site, tmp).items():
        (GOLDEN / name.replace("/", "__")).write_text(text, encoding="utf-8")


def read_golden() -> dict[str, str]:
    """What :func:`write_golden` stored, keyed as :func:`normalised_site`."""
    return {p.name.replace("__", "/"): p.read_text(encoding="utf-8")
            for p in sorted(GOLDEN.iterdir())}
