"""Issue 22, items 2 and 4 (continued from ``test_size_caps.py``): zip members, HTTP
bodies, PNG text chunks and export images over their caps, each one problem naming the
cap, its value and the variable that raises it; everything else goes on.

Small caps are set through the documented environment variables (docs/limits.md).
"""

from __future__ import annotations

import io
import json
import os
import struct
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pyarrow.parquet as pq
import pytest
from PIL import Image, PngImagePlugin

from heritage_eval.benchmarks.hcsu.archive import extract_domain_zip
from heritage_eval.cli.main import main
from heritage_eval.core.images import ImageLoadError, load_image
from heritage_eval.core.sizecap import MAX_EXPORT_IMAGE, MAX_HTTP_BODY, MIB
from heritage_eval.curate.iiif.http import FetchError, get
from tests.curate.iiif_server import IIIFServer, serve
from tests.fake_server import chat_reply, fake_openai_server

# ---- zip members ------------------------------------------------------------------------


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_zip_bomb_member_is_skipped_by_ratio(tmp_path: Path) -> None:
    # 4 MiB of zeros deflates to ~4 KiB: about 1000:1, over the default ratio of 200
    archive = _zip(tmp_path / "bei.zip", {"bei/a-k/ok.txt": b"fine",
                                          "bei/a-k/bomb.png": bytes(4 * MIB)})
    problems: list[str] = []
    assert extract_domain_zip(archive, tmp_path / "out", None, problems) == []
    assert (tmp_path / "out" / "a-k" / "ok.txt").read_bytes() == b"fine"
    assert not (tmp_path / "out" / "a-k" / "bomb.png").exists()
    assert not list((tmp_path / "out").rglob("*.part"))
    assert len(problems) == 1
    assert problems[0].startswith(f"{archive} member 'bei/a-k/bomb.png': compression ratio "
                                  "(4,194,304 bytes (4 MiB) from ")
    assert "is over the max_zip_ratio cap of 200; raise it with " \
           "HERITAGE_EVAL_MAX_ZIP_RATIO=N" in problems[0]


def test_zip_member_over_the_size_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERITAGE_EVAL_MAX_ZIP_MEMBER", "64KiB")
    big = os.urandom(100_000)  # incompressible: only the size cap applies
    archive = _zip(tmp_path / "bei.zip", {"bei/a-k/big.png": big, "bei/a-k/ok.txt": b"x"})
    problems: list[str] = []
    extract_domain_zip(archive, tmp_path / "out", None, problems)
    assert problems == [
        f"{archive} member 'bei/a-k/big.png': uncompressed size (100,000 bytes (97.66 KiB)) "
        "is over the max_zip_member cap of 65,536 bytes (64 KiB); raise it with "
        "HERITAGE_EVAL_MAX_ZIP_MEMBER=N (see docs/limits.md): not extracted"]
    assert (tmp_path / "out" / "a-k" / "ok.txt").exists()
    monkeypatch.setenv("HERITAGE_EVAL_MAX_ZIP_MEMBER", "1MiB")  # raised: extracted
    problems.clear()
    extract_domain_zip(archive, tmp_path / "out", None, problems)
    assert problems == [] and (tmp_path / "out" / "a-k" / "big.png").read_bytes() == big


def _understate(archive: Path, name: bytes, size: int) -> None:
    """Rewrite the uncompressed size of member ``name`` in the central directory and the
    local header (offsets from the zip specification, APPNOTE 4.3.7 / 4.3.12)."""
    raw = bytearray(archive.read_bytes())
    at = raw.find(b"PK\x01\x02")
    while at != -1:
        n_len = struct.unpack_from("<H", raw, at + 28)[0]
        if raw[at + 46:at + 46 + n_len] == name:
            struct.pack_into("<I", raw, at + 24, size)
            local = struct.unpack_from("<I", raw, at + 42)[0]
            struct.pack_into("<I", raw, local + 22, size)
        at = raw.find(b"PK\x01\x02", at + 4)
    archive.write_bytes(bytes(raw))


def test_zip_member_whose_header_understates_its_size(tmp_path: Path) -> None:
    # 2 MiB of zeros declared as 1,000 bytes: never more than 1,000 bytes come out, the
    # CRC-32 then fails: the member is one problem, the next one is still extracted
    archive = _zip(tmp_path / "tie.zip", {"tie/a-k/liar.png": bytes(2 * MIB),
                                          "tie/a-k/ok.txt": b"fine"})
    _understate(archive, b"tie/a-k/liar.png", 1000)
    assert zipfile.ZipFile(archive).getinfo("tie/a-k/liar.png").file_size == 1000
    problems: list[str] = []
    extract_domain_zip(archive, tmp_path / "out", None, problems)
    assert (tmp_path / "out" / "a-k" / "ok.txt").read_bytes() == b"fine"
    assert not (tmp_path / "out" / "a-k" / "liar.png").exists()
    assert len(problems) == 1 and "'tie/a-k/liar.png': its data does not match its " \
        "header" in problems[0]


def test_hcsu_release_zip_with_a_bomb_loads_the_rest(tmp_path: Path) -> None:
    from heritage_eval.benchmarks.hcsu.loader import load_hcsu

    rel = tmp_path / "release"
    rel.mkdir()
    records = [{"filename": f"王羲之-行书/{c}_1.png", "char": c, "calligrapher": "王羲之",
                "script_type": "行书", "quality": "clear", "description": "d"}
               for c in "不之"]
    (rel / "tie_annotations.json").write_text(json.dumps(records, ensure_ascii=False),
                                              encoding="utf-8")
    buf = io.BytesIO()
    Image.new("L", (32, 32), 255).save(buf, "PNG")
    good = buf.getvalue()
    _zip(rel / "tie.zip", {"tie/王羲之-行书/不_1.png": good,
                           "tie/王羲之-行书/之_1.png": bytes(8 * MIB)})  # ~1000:1
    ds = load_hcsu(rel, extract_to=tmp_path / "x")
    by_id = {i.id: i for i in ds.images}
    assert by_id["Tie/王羲之-行书/不_1"].load_error is None
    assert by_id["Tie/王羲之-行书/之_1"].load_error is not None  # its image never came out
    capped = [p for p in ds.problems if "max_zip_ratio cap" in p]
    assert len(capped) == 1 and "之_1.png" in capped[0] and "not extracted" in capped[0]


def test_counted_copy_stops_a_member_that_lies(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # zipfile itself stops at the declared size; the counted copy is the second guard,
    # checked here with a member stream that never ends
    from heritage_eval.benchmarks.hcsu import archive as mod

    class Endless(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, b: Any) -> int:
            b[:] = bytes(len(b))
            return len(b)

    class FakeZip:
        def open(self, info: zipfile.ZipInfo, pwd: bytes | None = None) -> io.BufferedReader:
            return io.BufferedReader(Endless())

    monkeypatch.setenv("HERITAGE_EVAL_MAX_ZIP_MEMBER", "3MiB")
    info = zipfile.ZipInfo("x.png")
    info.file_size, info.compress_size = 10, 10_000  # limit: max(1 MiB floor, 200 x 10 KB)
    dest = tmp_path / "x.png"
    with pytest.raises(mod.CapExceeded, match="max_zip_member cap of 2,000,000 bytes"):
        mod._extract_member(FakeZip(), info, dest, None, "z member 'x.png'")  # type: ignore[arg-type]
    assert not dest.exists() and not list(tmp_path.iterdir())


# ---- HTTP bodies ------------------------------------------------------------------------


@contextmanager
def streaming_server(total: int) -> Iterator[tuple[str, list[int]]]:
    """A server sending ``total`` bytes with no Content-Length (the body ends when the
    connection closes); ``sent`` collects the bytes written per request."""
    sent: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.end_headers()
            done = 0
            with suppress(BrokenPipeError, ConnectionResetError):
                while done < total:
                    self.wfile.write(bytes(64 * 1024))
                    done += 64 * 1024
            sent.append(done)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/big.png", sent
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_streamed_body_over_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_HTTP_BODY.env, "1MiB")
    with streaming_server(64 * MIB) as (url, sent), httpx.Client() as client, \
            pytest.raises(FetchError) as info:
        get(client, url, timeout=10, retries=2, backoff=0)
    assert info.value.reason == (
        "response body (more than 1,048,576 bytes (1 MiB) received) is over the "
        "max_http_body cap of 1,048,576 bytes (1 MiB); raise it with "
        "HERITAGE_EVAL_MAX_HTTP_BODY=N (see docs/limits.md)")
    assert len(sent) <= 1  # not retried: the server would send the same body again


def test_declared_length_over_the_cap_is_refused_before_reading(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_HTTP_BODY.env, "10KiB")
    server = IIIFServer(static={"/big.png": ("image/png", bytes(20_000)),
                                "/ok.png": ("image/png", b"small")})
    with serve(server) as srv, httpx.Client() as client:
        with pytest.raises(FetchError, match=r"Content-Length 20,000 bytes \(19.53 KiB\)\) "
                                             r"is over the max_http_body cap"):
            get(client, srv.base + "/big.png", timeout=10, retries=3, backoff=0)
        assert get(client, srv.base + "/ok.png", timeout=10).content == b"small"
        assert server.requests == ["/big.png", "/ok.png"]


# ---- PNG text chunks --------------------------------------------------------------------


def huge_ztxt_png(path: Path, colour: str, text_bytes: int = 8 * MIB) -> Path:
    """A 16 x 16 PNG carrying a zTXt chunk of ``text_bytes`` (~8 KiB once compressed)."""
    info = PngImagePlugin.PngInfo()
    info.add_text("comment", "A" * text_bytes, zip=True)
    Image.new("RGB", (16, 16), colour).save(path, pnginfo=info)
    return path


def test_png_text_chunk_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = huge_ztxt_png(tmp_path / "t.png", "white")
    assert path.stat().st_size < 64 * 1024
    with pytest.raises(ImageLoadError) as info:
        load_image(path)
    assert str(info.value) == (
        f"image {path}: PNG zTXt chunk (decompresses to more than 1,048,576 bytes (1 MiB)) "
        "is over the max_png_text cap of 1,048,576 bytes (1 MiB); raise it with "
        "HERITAGE_EVAL_MAX_PNG_TEXT=N (see docs/limits.md)")
    monkeypatch.setenv("HERITAGE_EVAL_MAX_PNG_TEXT", "16MiB")  # raised: Pillow follows
    assert load_image(path).size == (16, 16)
    monkeypatch.setenv("HERITAGE_EVAL_MAX_PNG_TEXT_TOTAL", "4MiB")  # all chunks together
    with pytest.raises(ImageLoadError, match=r"PNG text chunks .* max_png_text_total cap"):
        load_image(path)


def test_png_text_bomb_in_an_ancient_bench_run(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "stele"
    folder.mkdir(parents=True)
    Image.new("RGB", (16, 16), "white").save(folder / "a.png")
    huge_ztxt_png(folder / "bomb.png", "red")
    Image.new("RGB", (16, 16), "blue").save(folder / "c.png")
    (folder / "conv.jsonl").write_text("".join(
        json.dumps({"image": n, "human_gt": "天"}) + "\n" for n in ("a.png", "bomb.png",
                                                                   "c.png")), encoding="utf-8")
    out = tmp_path / "run"
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("天")
        cmd = ["run", "ancient-bench", "--data", str(tmp_path / "data"), "--model",
               "openai:vlm", "--base-url", srv.base_url, "--retries", "0", "--out", str(out)]
        assert main(cmd) == 0
        assert len(srv.requests) == 2  # the bomb is never sent
        rows = [json.loads(x) for x in (out / "samples.jsonl").open(encoding="utf-8")]
        assert [r["state"] for r in rows] == ["scored", "error", "scored"]
        assert "max_png_text cap" in rows[1]["error"]
        assert main(cmd) == 0  # resume: everything answered is in the cache
        assert len(srv.requests) == 2
    again = [json.loads(x) for x in (out / "samples.jsonl").open(encoding="utf-8")]
    assert [r["state"] for r in again] == ["scored", "error", "scored"]


# ---- export images ----------------------------------------------------------------------


def test_export_image_over_the_cap_is_a_null_image(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(MAX_EXPORT_IMAGE.env, "20KiB")
    folder = tmp_path / "data" / "stele"
    folder.mkdir(parents=True)
    Image.new("RGB", (8, 8), "white").save(folder / "small.png")
    (folder / "big.bmp").write_bytes(b"BM" + bytes(30_000))  # only its size matters here
    (folder / "conv.jsonl").write_text(
        '{"image": "small.png", "human_gt": "天"}\n{"image": "big.bmp", "human_gt": "地"}\n',
        encoding="utf-8")
    out = tmp_path / "hf"
    rc = main(["export", "hf", "ancient-bench", str(tmp_path / "data"), "--out", str(out),
               "--no-progress"])
    assert rc == 1  # written, with one problem listed
    err = capsys.readouterr().err
    assert (f"exported without its image: image {folder / 'big.bmp'}: file size "
            "(30,002 bytes (29.3 KiB)) is over the max_export_image cap of 20,480 bytes "
            "(20 KiB); raise it with HERITAGE_EVAL_MAX_EXPORT_IMAGE=N") in err
    rows = {r["image_name"]: r for shard in sorted(out.rglob("*.parquet"))
            for r in pq.read_table(shard).to_pylist()}
    assert rows["big.bmp"]["image"] is None and rows["big.bmp"]["human_gt"] == "地"
    assert rows["small.png"]["image"]["bytes"] == (folder / "small.png").read_bytes()
