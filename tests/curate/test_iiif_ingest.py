"""``heritage-eval ingest iiif`` against a real loopback IIIF server (tests/curate/
iiif_server.py): exact requested URLs, crops' pixels, resume, failures, provenance.

The source image is 400x300 in four flat quadrants (red, green / blue, white), so the
expected pixels of a crop and the size of a scaled image follow by hand."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from PIL import Image

from heritage_eval.cli.main import main
from tests.curate.iiif_server import IIIFServer, serve

RED, GREEN, BLUE, WHITE = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)
RIGHTS = "http://creativecommons.org/licenses/by/4.0/"
STATEMENT = {"label": {"en": ["Attribution"]}, "value": {"en": ["Loopback Library"]}}
METADATA = [{"label": {"en": ["Date"]}, "value": {"none": ["1632"]}}]


def quadrants() -> Image.Image:
    img = Image.new("RGB", (400, 300), WHITE)
    img.paste(RED, (0, 0, 200, 150))
    img.paste(GREEN, (200, 0, 400, 150))
    img.paste(BLUE, (0, 150, 200, 300))
    return img


def png(size: tuple[int, int], colour: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, colour).save(buf, "PNG")
    return buf.getvalue()


def canvas(base: str, n: int, label: dict[str, list[str]], body: dict[str, Any]
           ) -> dict[str, Any]:
    return {"id": f"{base}/canvas/{n}", "type": "Canvas", "label": label,
            "width": 400, "height": 300,
            "items": [{"id": f"{base}/page/{n}", "type": "AnnotationPage", "items": [{
                "id": f"{base}/anno/{n}", "type": "Annotation", "motivation": "painting",
                "target": f"{base}/canvas/{n}", "body": body}]}]}


def library() -> IIIFServer:
    """Canvas 1: Image API 3 service; canvas 2: no service (a plain PNG); canvas 3: an
    Image API 2 service (maxWidth 100) whose image answers 404."""
    server = IIIFServer(images={"/iiif3/a": quadrants(), "/iiif2/c": quadrants()},
                        missing={"/iiif2/c/full/!100,100/0/default.jpg"})
    server.infos["/iiif3/a"] = {"id": "x", "type": "ImageService3", "profile": "level2",
                                "width": 400, "height": 300}
    server.infos["/iiif2/c"] = {"@id": "x", "width": 400, "height": 300, "profile": [
        "http://iiif.io/api/image/2/level2.json", {"maxWidth": 100}]}
    server.static["/static/plate2.png"] = ("image/png", png((120, 80), BLUE))
    return server


def manifest(base: str) -> dict[str, Any]:
    return {"@context": "http://iiif.io/api/presentation/3/context.json",
            "id": f"{base}/manifest.json", "type": "Manifest", "label": {"en": ["Album"]},
            "rights": RIGHTS, "requiredStatement": STATEMENT, "metadata": METADATA,
            "items": [
                canvas(base, 1, {"en": ["Folio 1 recto"]}, {
                    "id": f"{base}/iiif3/a/full/max/0/default.jpg", "type": "Image",
                    "service": [{"id": f"{base}/iiif3/a", "type": "ImageService3",
                                 "profile": "level2"}]}),
                canvas(base, 2, {"none": ["Plate: 2/3"]}, {
                    "id": f"{base}/static/plate2.png", "type": "Image"}),
                canvas(base, 3, {"zh": ["卷三"]}, {
                    "id": f"{base}/iiif2/c/full/full/0/default.jpg", "type": "Image",
                    "service": [{"@id": f"{base}/iiif2/c", "@type": "ImageService2",
                                 "profile": "http://iiif.io/api/image/2/level2.json"}]})]}


def lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "manifest.jsonl").read_text().splitlines()]


def ingest(*extra: str) -> int:
    return main(["ingest", "iiif", *extra, "--max-size", "200", "--retries", "0",
                 "--no-progress"])


def test_fetch_records_and_resume(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with serve(library()) as srv:
        srv.static["/manifest.json"] = ("application/json",
                                        json.dumps(manifest(srv.base)).encode())
        assert ingest(f"{srv.base}/manifest.json", "--out", str(out)) == 1  # canvas 3 failed
        # 400x300 > 200 cap: !200,200 (v3); v2 maxWidth 100 narrows the box to !100,100
        assert srv.requests == [
            "/manifest.json", "/iiif3/a/info.json", "/iiif3/a/full/!200,200/0/default.jpg",
            "/static/plate2.png", "/iiif2/c/info.json",
            "/iiif2/c/full/!100,100/0/default.jpg"]
        got = lines(out)
        assert [(x["n"], x["status"], x.get("file")) for x in got] == [
            (1, "ok", "images/001_Folio_1_recto.png"), (2, "ok", "images/002_Plate_2_3.png"),
            (3, "error", None)]
        assert got[2]["error"] == "HTTP 404" and got[2]["canvas_label"] == "卷三"
        assert got[0]["source_url"] == f"{srv.base}/iiif3/a/full/!200,200/0/default.jpg"
        assert (got[0]["image_api"], got[0]["size"], got[0]["width"], got[0]["height"]) == (
            3, "!200,200", 200, 150)  # 400x300 best fit in 200x200
        assert (got[1]["service"], got[1]["width"]) == (None, 120)
        for line in got:
            assert (line["rights"], line["required_statement"], line["metadata"]) == (
                RIGHTS, STATEMENT, METADATA)
        scaled = Image.open(out / "images/001_Folio_1_recto.png").convert("RGB")
        assert (scaled.getpixel((0, 0)), scaled.getpixel((199, 149))) == (RED, WHITE)
        prov = json.loads((out / "provenance.json").read_text())
        assert prov["manifest"]["rights"] == RIGHTS
        assert prov["manifest"]["requiredStatement"] == STATEMENT
        assert prov["manifest"]["metadata"] == METADATA
        assert prov["counts"] == {"images": 2, "fetched": 2, "reused": 0, "kept": 0,
                                  "errors": 1}
        tasks = json.loads((out / "labelstudio_tasks.json").read_text())
        assert [t["data"]["image"] for t in tasks] == [
            "images/001_Folio_1_recto.png", "images/002_Plate_2_3.png"]
        assert [json.loads(x) for x in (out / "conv.jsonl").read_text().splitlines()] == [
            {"image": "001_Folio_1_recto.png", "human_gt": ""},
            {"image": "002_Plate_2_3.png", "human_gt": ""}]

        srv.requests.clear()  # resume: only the failed canvas is asked for again
        assert ingest(f"{srv.base}/manifest.json", "--out", str(out)) == 1
        assert srv.requests == ["/manifest.json", "/iiif2/c/info.json",
                                "/iiif2/c/full/!100,100/0/default.jpg"]
        assert json.loads((out / "provenance.json").read_text())["counts"]["reused"] == 2

        (out / "images/002_Plate_2_3.png").write_bytes(b"damaged")  # sha no longer matches
        srv.requests.clear()
        assert ingest(f"{srv.base}/manifest.json", "--out", str(out), "--limit", "2") == 0
        assert srv.requests == ["/manifest.json", "/static/plate2.png"]


def test_region_crops_through_the_image_api(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with serve(library()) as srv:
        path = tmp_path / "m.json"
        path.write_text(json.dumps(manifest(srv.base)))
        regions = tmp_path / "regions.csv"
        regions.write_text(f'canvas,region\n1,"200,0,200,150"\n1,"pct:0,50,50,50"\n'
                           f'{srv.base}/canvas/2,"0,0,10,10"\n')
        assert ingest(str(path), "--out", str(out), "--limit", "2",
                      "--regions", str(regions)) == 1
        # both crops are 200x150, within the 200 cap: fetched at their own size (max)
        assert srv.requests == ["/iiif3/a/info.json",
                                "/iiif3/a/200,0,200,150/max/0/default.jpg",
                                "/iiif3/a/pct:0,50,50,50/max/0/default.jpg"]
    got = lines(out)
    assert [(x["region"], x.get("file")) for x in got] == [
        ("200,0,200,150", "images/001_Folio_1_recto_r1.png"),
        ("pct:0,50,50,50", "images/001_Folio_1_recto_r2.png"), ("0,0,10,10", None)]
    assert "needs an image service" in got[2]["error"]
    top_right = Image.open(out / got[0]["file"]).convert("RGB")
    bottom_left = Image.open(out / got[1]["file"]).convert("RGB")
    assert top_right.size == bottom_left.size == (200, 150)
    assert top_right.getcolors() == [(200 * 150, GREEN)]
    assert bottom_left.getcolors() == [(200 * 150, BLUE)]


def test_retries_timeouts_and_non_image_bodies(tmp_path: Path) -> None:
    server = IIIFServer(flaky={"/static/flaky.png": 2}, slow={"/static/slow.png"})
    server.static["/static/flaky.png"] = ("image/png", png((10, 10), RED))
    server.static["/static/page.html"] = ("text/html", b"<html>login</html>")
    server.static["/static/slow.png"] = ("image/png", png((10, 10), RED))
    out = tmp_path / "out"
    with serve(server) as srv:
        path = tmp_path / "m.json"
        path.write_text(json.dumps({"type": "Manifest", "id": "m", "items": [
            canvas(srv.base, n, {"en": [name]}, {"id": f"{srv.base}/static/{name}",
                                                 "type": "Image"})
            for n, name in enumerate(("flaky.png", "page.html", "slow.png"), start=1)]}))
        code = main(["ingest", "iiif", str(path), "--out", str(out), "--retries", "2",
                     "--timeout", "0.3", "--backoff", "0.01", "--no-progress"])
        assert code == 1
        # two 503s (Retry-After: 0) then the image; the slow one is retried twice too
        assert srv.requests.count("/static/flaky.png") == 3
        assert srv.requests.count("/static/slow.png") == 3
    got = lines(out)
    assert got[0]["status"] == "ok"
    assert got[1]["error"].startswith("not an image (text/html")
    assert got[2]["error"] == "timeout after 0.3s (after 2 retries)"


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "Manifest"}')
    assert main(["ingest", "iiif", str(bad), "--out", str(tmp_path / "o")]) == 2
    regions = tmp_path / "r.csv"
    regions.write_text("canvas,region\n1,nonsense\n")
    assert main(["ingest", "iiif", str(bad), "--out", str(tmp_path / "o"),
                 "--regions", str(regions)]) == 2
    assert not (tmp_path / "o").exists()  # nothing written
