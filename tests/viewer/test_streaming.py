"""The streamed site build (issue 23): the same site as the non-streaming builder, memory
flat in the number of records, and no text from a run (lone surrogates) stopping it."""

from __future__ import annotations

import json
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heritage_eval.core.benchmark import MetricSpec
from heritage_eval.core.record import SampleRecord
from heritage_eval.core.summary import envelope
from heritage_eval.viewer import build
from heritage_eval.viewer import pages as pages_mod
from heritage_eval.viewer.index_columns import IndexColumns
from tests.viewer.conftest import make_image, record
from tests.viewer.index_reader import read_index
from tests.viewer.site_fixture import GOLDEN_PAGE_SIZE, golden_runs, normalised_site, read_golden


@pytest.mark.parametrize(("processes", "shard_size"),
                         [(0, None), (2, None), (0, 3), (2, 3), (0, 4), (0, 17)])
def test_streamed_build_matches_the_old_builder(tmp_path: Path, processes: int,
                                                 shard_size: int | None,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # tests/viewer/golden/ was written by the in-memory builder of commit 6a3e3c8 (before
    # streaming and sharding) from these same runs, less the absolute paths removed
    # since (index.js's "site_dir" key; a missing image is named relative to the site):
    # every byte of index.html and the data
    # pages must match, and the index / search shards joined back must be its index.js /
    # search.js, rendered here or in 2 worker processes (batches of 3 lines: several per
    # worker), in one shard or several: 3 and 4 samples a shard cut runs and pages
    # mid-way; group "era" is first seen mid-shard (sample 4, shard 1 of 3-sample
    # shards), group "task" and score "extra" first at sample 8 (shards before lack them)
    monkeypatch.setattr(pages_mod, "PAGE_SIZE", GOLDEN_PAGE_SIZE)
    info = build(golden_runs(tmp_path), tmp_path / "site", processes=processes,
                 shard_size=shard_size)
    assert info.n_samples == 17 and info.sizes["n_pages"] == 7
    # by hand: ceil(17 / shard size) shards, one file of each kind
    n_shards = {None: 1, 3: 6, 4: 5, 17: 1}[shard_size]
    assert info.sizes["n_shards"] == n_shards
    for kind in ("index", "search"):
        assert len(list((tmp_path / "site" / "data").glob(f"{kind}-*.js"))) == n_shards
    # 4 images exist (a, b, c, big): each made once, by one worker when there are two
    assert info.made == 4
    got, want = normalised_site(tmp_path / "site", tmp_path), read_golden()
    assert sorted(got) == sorted(want)
    for name, text in want.items():
        assert got[name] == text, name


@pytest.mark.parametrize("shard_size", [None, 1, 2, 3, 5])
def test_columns_pad_keys_first_seen_late(tmp_path: Path, shard_size: int | None) -> None:
    cols = IndexColumns(tmp_path / "c", ["acc"], chunk=2, shard_size=shard_size)
    for i in range(5):  # group "era" from sample 3 on, score "x" only at sample 1
        cols.add([str(i), f'"s{i}"', "0", "0", '""', '""', '""'],
                 {"era": 0} if i >= 3 else {}, {"acc": i / 3, **({"x": 1} if i == 1 else {})})
    sizes = cols.write_shards(tmp_path, [0, 1, 0, 0, 1])
    per = shard_size or 5
    # by hand: ceil(5 / per) shards of `per` samples, the last one the rest
    assert cols.shard_counts == [min(per, 5 - s) for s in range(0, 5, per)]
    joined: dict[str, object] = {}
    for k, size in enumerate(sizes):
        text = (tmp_path / f"index-{k:04d}.js").read_text(encoding="utf-8")
        assert size == len(text.encode()) and text.startswith(f"HE_SHARD({k},")
        shard = json.loads(text[len(f"HE_SHARD({k},"):-3])
        assert list(shard) == ["r", "id", "st", "m", "a", "ref", "th", "g", "s", "dis"]
        assert list(shard["g"]) == ["era"] and list(shard["s"]) == ["acc", "x"]
        for name, value in shard.items():
            if isinstance(value, dict):
                for key, col in value.items():
                    joined.setdefault(f"{name}.{key}", []).extend(col)  # type: ignore[attr-defined]
            else:
                joined.setdefault(name, []).extend(value)  # type: ignore[attr-defined]
    # by hand: -1 / null for the samples before a column was first seen
    assert joined["g.era"] == [-1, -1, -1, 0, 0]
    assert joined["s.acc"] == [0.0, 0.3333, 0.6667, 1.0, 1.3333]
    assert joined["s.x"] == [None, 1, None, None, None]
    assert joined["id"] == ["s0", "s1", "s2", "s3", "s4"]
    assert joined["dis"] == [0, 1, 0, 0, 1] and cols.extra_metrics == ["x"]
    assert not list((tmp_path / "c").glob("*.part"))  # the parts are removed when written


def _big_run(folder: Path, n: int, image: Path) -> Path:
    """A one-model run of ``n`` generated records sharing one image (lines written from
    a template: the test measures the build, not pydantic)."""
    line = json.loads(record("x", images=[image.name], image_root=str(image.parent),
                             groups={"medium": "Seal"}).to_json_line())
    folder.mkdir(parents=True)
    with (folder / "samples.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps(dict(line, id=f"s{i:06d}", answer=f"answer {i}",
                                     groups={"medium": ("Seal", "Bronze", "Oracle")[i % 3]},
                                     scores={"acc": float(i % 2)})) + "\n")
    return folder


@pytest.mark.slow
def test_build_memory_flat_in_records(tmp_path: Path) -> None:
    # the in-memory builder held every record (measured on its code of commit 6a3e3c8:
    # 9.5 MiB traced peak at 1k records, 38.5 MiB at 5k, about 7 KiB a record); the
    # streamed one holds a batch, so the peaks match (about 7 MiB at 2k and at 20k)
    image = make_image(tmp_path / "img" / "a.png", (80, 60))
    peaks: dict[int, int] = {}
    for n in (2_000, 20_000):
        run = _big_run(tmp_path / f"run{n}", n, image)
        if n == 2_000:  # imports, renderer caches: not what is measured
            build([run], tmp_path / "warm", processes=0)
        tracemalloc.start()
        try:
            info = build([run], tmp_path / f"site{n}", processes=0)  # all in this process
            peaks[n] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert info.n_samples == n and info.made == 1  # one thumbnail for every record
    assert peaks[20_000] < 1.3 * peaks[2_000], peaks
    cols = read_index(tmp_path / "site20000")["cols"]
    assert cols["g"]["medium"][:4] == [0, 1, 2, 0] and len(cols["id"]) == 20_000


def _ascii_run(run: Path, rec: SampleRecord) -> Path:
    """A one-record run folder written as ASCII JSON (a surrogate as its \\u escape)."""
    run.mkdir()
    summary = envelope("toy", [rec], [MetricSpec("acc", "Acc")], ["medium"])
    for name, value in (("samples.jsonl", rec.model_dump(mode="json", by_alias=True)),
                        ("summary.json", summary)):
        (run / name).write_text(json.dumps(value) + "\n", encoding="ascii")
    return run


_TEXT = st.text(st.characters(categories=["L", "N", "P", "Zs", "Cs", "So"]), max_size=12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sample_id=_TEXT, model=_TEXT, medium=_TEXT, answer=_TEXT,
       folder=st.sampled_from(["run", "run\udc80", "r\udcff\u00e9"]))
def test_lone_surrogates_never_stop_the_build(sample_id: str, model: str, medium: str,
                                             answer: str, folder: str) -> None:
    # a lone surrogate is valid JSON ("\udc80") but not UTF-8: every file of the site is
    # written, each decodes as strict UTF-8, and the data reads back the same text
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        image = make_image(root / folder / "img.png", (30, 20))
        rec = record(sample_id, model=model, groups={"medium": medium}, answer=answer,
                     images=["img.png", f"gone{answer}.png"], image_root=str(image.parent))
        run = _ascii_run(root / f"{folder}-run", rec)
        info = build([run], root / "site")
        assert info.n_samples == 1
        for f in (root / "site").rglob("*"):
            if f.suffix in (".html", ".js", ".css"):
                f.read_bytes().decode("utf-8")  # strict: raises on a raw surrogate
        cols = read_index(root / "site")
        assert cols["cols"]["id"] == [sample_id] and cols["groups"]["medium"] == [medium]
        assert cols["models"] == [model] and cols["cols"]["th"][0] not in ("", "!")
        # the original is listed by its own bytes (what the server compares with)
        from heritage_eval.viewer.textio import decode_path_line

        listed = (root / "site" / "originals.txt").read_bytes().splitlines(keepends=True)
        assert [decode_path_line(x) for x in listed] == [str(image.resolve())]


def test_skipped_lines_beyond_the_cap_are_counted(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from heritage_eval.viewer import runs as runs_mod
    from tests.viewer.conftest import write_run

    monkeypatch.setattr(runs_mod, "MAX_NOTES", 3)
    run = write_run(tmp_path / "run", [record("a")],
                    extra_lines=[f'{{"bad": {i}' for i in range(5)])
    info = build([run], tmp_path / "site")
    skipped = [p for p in info.problems if "skipped" in p]
    # by hand: lines 2-4 listed, lines 5-6 counted
    assert [p.split("samples.jsonl:")[1].split(":")[0] for p in skipped[:3]] == ["2", "3", "4"]
    assert skipped[3:] == ["run: … and 2 more lines skipped (not listed)"]
    assert info.n_samples == 1


def test_server_sends_an_original_whose_name_is_not_utf8(tmp_path: Path) -> None:
    import threading
    import urllib.request

    from heritage_eval.viewer.images import url_path
    from heritage_eval.viewer.serve import make_server

    image = make_image(tmp_path / "im\udc80g" / "a.png", (30, 20))  # folder name: b"im\x80g"
    run = _ascii_run(tmp_path / "run", record("a", images=["a.png"],
                                                image_root=str(image.parent)))
    site = build([run], tmp_path / "site").index.parent
    server = make_server(site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/_fs{url_path(str(image))}"
        assert "%80" in url  # the file name's own byte, percent-encoded
        with urllib.request.urlopen(url) as resp:
            assert resp.read() == image.read_bytes()
    finally:
        server.shutdown()
        server.server_close()
