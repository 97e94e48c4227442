"""The committed HCSU demo set: annotations match the files, schema, sharing, determinism."""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import reduce
from pathlib import Path
from types import ModuleType

import pytest
from PIL import Image

from tests.scripts.conftest import DEMO, REALDATA, check_regeneration

ROOT = DEMO / "hcsu"
DOMAINS = {"tie": "Tie", "bei": "Bei"}


def _records(domain: str) -> list[dict[str, object]]:
    return json.loads((ROOT / f"{domain}_annotations.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_annotations_match_files_on_disk(domain: str) -> None:
    records = _records(domain)
    on_disk = {p.relative_to(ROOT / domain).as_posix() for p in (ROOT / domain).rglob("*.png")}
    names = [str(r["filename"]) for r in records]
    assert len(names) == len(set(names))
    assert set(names) == on_disk
    for r in records:
        # filename is "<calligrapher>-<script>/<char>_<n>.png", as in the HCSU release.
        m = re.fullmatch(r"(.+)-(.+)/(.)_(\d+)\.png", str(r["filename"]))
        assert m, r["filename"]
        assert (m[1], m[2], m[3]) == (r["calligrapher"], r["script_type"], r["char"])
        assert r["source_type"] == DOMAINS[domain]
        assert r["quality"] in {"clear", "blurry"}
        assert str(r["calligrapher_en"]).endswith("(font)")
        with Image.open(ROOT / domain / str(r["filename"])) as im:
            assert im.format == "PNG" and im.mode == "RGB"
            assert min(im.size) >= 96 and max(im.size) <= 160


@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_schema_has_every_field_of_the_real_sample(domain: str) -> None:
    real = REALDATA / "hcsu" / f"{domain}_annotations.json"
    if not real.is_file():
        pytest.skip("../shared/realdata not present")
    real_keys = set(json.loads(real.read_text(encoding="utf-8"))[0])
    for r in _records(domain):
        assert real_keys <= set(r)


def test_classes_and_shared_characters() -> None:
    per_class: dict[str, set[str]] = {}
    for domain in DOMAINS:
        counts = Counter(str(r["filename"]).split("/")[0] for r in _records(domain))
        assert len(counts) >= 5, domain
        assert all(12 <= n <= 16 for n in counts.values()), counts
        for r in _records(domain):
            per_class.setdefault(f"{domain}/{str(r['filename']).split('/')[0]}",
                                 set()).add(str(r["char"]))
    shared = reduce(set.intersection, per_class.values())
    # The script puts 不之世有在山時長流人 into every class.
    assert shared == set("不之世有在山時長流人")
    assert (ROOT / "tie" / "文鼎楷体字库-楷书" / "不_2.png").is_file()


def test_size_budget() -> None:
    total = sum(p.stat().st_size for p in ROOT.rglob("*") if p.is_file())
    assert total < 2_000_000


def test_regeneration_is_byte_identical(hcsu: ModuleType, rc: ModuleType,
                                        tmp_path: Path) -> None:
    check_regeneration(rc, ROOT, sorted({h.font for h in hcsu.HANDS}), hcsu.generate, tmp_path)
