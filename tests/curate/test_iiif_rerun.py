"""Re-running ``heritage-eval ingest iiif`` never loses user data, and unusable input is
refused before anything is written: filled-in transcriptions and edited Label Studio
tasks survive a resume, a foreign ``--out`` is refused without ``--overwrite``, a smaller
``--limit`` keeps earlier records, and empty manifests / unknown region canvases /
unquoted CSV regions / non-image bodies give clear errors. All against the real loopback
IIIF server of tests/curate/iiif_server.py (the album of test_iiif_ingest.py: canvas 1
an Image API 3 service, canvas 2 a plain PNG, canvas 3 a service whose image is 404)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.cli.main import main
from heritage_eval.curate.iiif.regions import RegionsError, load_regions
from tests.curate.iiif_server import IIIFServer, serve
from tests.curate.test_iiif_ingest import canvas, library, lines, manifest

IMG1, IMG2 = "001_Folio_1_recto.png", "002_Plate_2_3.png"


def ingest(path: Path | str, out: Path, *extra: str) -> int:
    return main(["ingest", "iiif", str(path), "--out", str(out), *extra, "--max-size",
                 "200", "--retries", "0", "--no-progress"])


def write_manifest(tmp_path: Path, data: dict[str, Any], name: str = "m.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def conv(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "conv.jsonl").read_text().splitlines()]


def test_rerun_keeps_filled_transcriptions_and_edited_tasks(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with serve(library()) as srv:
        path = write_manifest(tmp_path, manifest(srv.base))
        assert ingest(path, out, "--limit", "1") == 0
        # the curator fills in the transcription and annotates the task in Label Studio
        (out / "conv.jsonl").write_text(json.dumps(
            {"image": IMG1, "human_gt": "天地玄黄"}, ensure_ascii=False) + "\n")
        tasks = json.loads((out / "labelstudio_tasks.json").read_text())
        tasks[0]["annotations"] = [{"result": [{"value": {"choices": ["ritual"]}}]}]
        (out / "labelstudio_tasks.json").write_text(json.dumps(tasks))

        srv.requests.clear()
        assert ingest(path, out, "--limit", "2") == 0  # canvas 1 reused, canvas 2 new
        assert srv.requests == ["/static/plate2.png"]
        # the filled line is kept as it was; only the new image gets an empty line
        assert conv(out) == [{"image": IMG1, "human_gt": "天地玄黄"},
                             {"image": IMG2, "human_gt": ""}]
        got = json.loads((out / "labelstudio_tasks.json").read_text())
        assert got[0] == tasks[0]  # annotations kept
        assert [t["data"]["image"] for t in got] == [f"images/{IMG1}", f"images/{IMG2}"]

        # a third run with nothing new changes neither file
        before = [(out / n).read_bytes() for n in ("conv.jsonl", "labelstudio_tasks.json")]
        srv.requests.clear()
        assert ingest(path, out, "--limit", "2") == 0
        assert srv.requests == []  # both images present with their recorded sha256
    assert [(out / n).read_bytes() for n in ("conv.jsonl", "labelstudio_tasks.json")] == \
        before


def test_foreign_out_refused_unless_overwrite(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    category = tmp_path / "ancient_bench" / "oracle"  # an Ancient-Bench category folder
    category.mkdir(parents=True)
    real = json.dumps({"image": "a.jpg", "human_gt": "王"}, ensure_ascii=False) + "\n"
    (category / "conv.jsonl").write_text(real)
    with serve(library()) as srv:
        path = write_manifest(tmp_path, manifest(srv.base))
        assert ingest(path, category, "--limit", "1") == 2
        assert srv.requests == []  # refused before any image request
        err = capsys.readouterr().err
        assert f"--out {category} is not empty and is not an earlier `ingest iiif` " \
               "folder (no provenance.json)" in err and "--overwrite" in err
        assert (category / "conv.jsonl").read_text() == real
        assert sorted(p.name for p in category.iterdir()) == ["conv.jsonl"]

        # an earlier ingest of *another* manifest is refused too
        other = tmp_path / "other"
        other_path = write_manifest(tmp_path, {**manifest(srv.base), "id": "urn:other"},
                                    "other.json")
        assert ingest(other_path, other, "--limit", "1") == 0
        before = (other / "conv.jsonl").read_bytes()
        assert ingest(path, other, "--limit", "1") == 2
        assert f"holds an ingest of another manifest (id 'urn:other', not " \
               f"'{srv.base}/manifest.json')" in capsys.readouterr().err
        assert (other / "conv.jsonl").read_bytes() == before

        assert ingest(path, category, "--limit", "1", "--overwrite") == 0
    assert conv(category) == [{"image": IMG1, "human_gt": ""}]
    assert json.loads((category / "provenance.json").read_text())["settings"]["overwrite"]


def test_smaller_limit_keeps_records_of_earlier_images(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with serve(library()) as srv:
        path = write_manifest(tmp_path, manifest(srv.base))
        assert ingest(path, out, "--limit", "2") == 0
        first = lines(out)
        assert ingest(path, out, "--limit", "1") == 0
    # canvas 2 was not asked for: its record stays, unchanged (same fetched_at, sha256)
    assert lines(out) == first
    assert [x["n"] for x in first] == [1, 2]
    assert [x["image"] for x in conv(out)] == [IMG1, IMG2]
    tasks = json.loads((out / "labelstudio_tasks.json").read_text())
    assert [t["data"]["image"] for t in tasks] == [f"images/{IMG1}", f"images/{IMG2}"]
    prov = json.loads((out / "provenance.json").read_text())
    # by hand: canvas 1 reused, canvas 2 kept from the first run, nothing fetched
    assert prov["counts"] == {"images": 2, "fetched": 0, "reused": 1, "kept": 1,
                              "errors": 0}


def test_other_regions_keep_earlier_crops_and_their_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first, second = tmp_path / "r1.csv", tmp_path / "r2.csv"
    first.write_text('canvas,region\n1,"200,0,200,150"\n')  # green top-right quadrant
    second.write_text('canvas,region\n1,"0,150,200,150"\n')  # blue bottom-left quadrant
    with serve(library()) as srv:
        path = write_manifest(tmp_path, manifest(srv.base))
        assert ingest(path, out, "--limit", "1", "--regions", str(first)) == 0
        green = (out / "images/001_Folio_1_recto_r1.png").read_bytes()
        assert ingest(path, out, "--limit", "1", "--regions", str(second)) == 0
    got = lines(out)
    # the new crop is the first region of its file, but _r1 holds the kept green crop
    assert [(x["region"], x["file"]) for x in got] == [
        ("0,150,200,150", "images/001_Folio_1_recto_r2.png"),
        ("200,0,200,150", "images/001_Folio_1_recto_r1.png")]
    assert (out / "images/001_Folio_1_recto_r1.png").read_bytes() == green


@pytest.mark.parametrize("items", [[], [{"id": "c1", "type": "Canvas", "items": []}]])
def test_manifest_without_images_is_an_error(tmp_path: Path, items: list[Any],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = write_manifest(tmp_path, {"type": "Manifest", "id": "m", "items": items},
                          "empty.json")
    assert ingest(path, tmp_path / "out") == 2
    assert f"error: {path}: the manifest has no canvases with images" in \
        capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # nothing written


@pytest.mark.parametrize("canvas_key", ["99", "http://nowhere/canvas/9"])
def test_region_of_an_unknown_canvas_is_an_error(tmp_path: Path, canvas_key: str,
                                                 capsys: pytest.CaptureFixture[str]
                                                 ) -> None:
    regions = tmp_path / "r.csv"
    regions.write_text(f'canvas,region\n1,"0,0,10,10"\n{canvas_key},"0,0,10,10"\n')
    with serve(library()) as srv:
        path = write_manifest(tmp_path, manifest(srv.base))
        assert ingest(path, tmp_path / "out", "--regions", str(regions)) == 2
        assert srv.requests == []
    err = capsys.readouterr().err
    ids = ", ".join(f"'{srv.base}/canvas/{n}'" for n in (1, 2, 3))
    assert f"error: {regions}:3: canvas '{canvas_key}' is not in the manifest; its " \
           f"canvases are positions 1-3, ids {ids}" in err
    assert not (tmp_path / "out").exists()


def test_unquoted_csv_region_gets_a_quoting_hint(tmp_path: Path) -> None:
    regions = tmp_path / "r.csv"
    regions.write_text("canvas,region\n1,0,0,100,100\n")  # region not quoted
    with pytest.raises(RegionsError) as info:
        load_regions(regions)
    # 1,0,0,100,100 splits into canvas=1, region=0 and 3 extra fields
    assert str(info.value) == (
        f"{regions}:2: 3 more field(s) than the header 'canvas,region' (region read as "
        "'0'); a region with commas must be quoted in CSV, e.g. 1,\"0,0,100,100\"")
    regions.write_text('canvas,region\n1,"0,0,100,100"\n')
    assert load_regions(regions) == {"1": ["0,0,100,100"]}
    assert load_regions(regions).where == {"1": f"{regions}:2"}


def test_non_image_body_names_url_type_and_first_bytes(tmp_path: Path) -> None:
    server = IIIFServer()
    server.static["/static/page.html"] = ("text/html; charset=utf-8",
                                          b"<html><body>Please log in</body></html>")
    out = tmp_path / "out"
    with serve(server) as srv:
        path = write_manifest(tmp_path, {"type": "Manifest", "id": "m", "items": [canvas(
            srv.base, 1, {"en": ["page"]},
            {"id": f"{srv.base}/static/page.html", "type": "Image"})]})
        assert ingest(path, out) == 1
    # 39 bytes in all (6 + 6 + 13 + 7 + 7); the first 32 are shown
    assert lines(out)[0]["error"] == (
        "not an image (text/html, 39 bytes starting b'<html><body>Please log in</body>') "
        f"from {srv.base}/static/page.html")
    assert "BytesIO" not in lines(out)[0]["error"]


def test_interrupted_first_run_resumes_and_bad_tasks_file_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import heritage_eval.curate.iiif.ingest as ingest_mod

    real_write = ingest_mod._write_bytes
    calls: list[Path] = []

    def killed_at_second(path: Path, data: bytes) -> None:  # Ctrl-C while saving image 2
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real_write(path, data)

    out = tmp_path / "out"
    with serve(library()) as srv:
        path = write_manifest(tmp_path, manifest(srv.base))
        monkeypatch.setattr(ingest_mod, "_write_bytes", killed_at_second)
        assert ingest(path, out, "--limit", "2") == 130  # the CLI's exit status on Ctrl-C
        monkeypatch.setattr(ingest_mod, "_write_bytes", real_write)
        # provenance.json was written first, so the folder is known as this ingest
        assert json.loads((out / "provenance.json").read_text())["finished_at"] is None
        assert [x["n"] for x in lines(out)] == [1]
        srv.requests.clear()
        assert ingest(path, out, "--limit", "2") == 0
        assert srv.requests == ["/static/plate2.png"]
        assert [x["image"] for x in conv(out)] == [IMG1, IMG2]

        (out / "labelstudio_tasks.json").write_text('{"not": "a list"}')
        assert ingest(path, out, "--limit", "2") == 2
        assert "labelstudio_tasks.json: expected a JSON list of Label Studio tasks" in \
            capsys.readouterr().err
        assert (out / "labelstudio_tasks.json").read_text() == '{"not": "a list"}'
