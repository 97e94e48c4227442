"""``export tei``: lxml parses each document, the TEI namespace and structure are right,
the Ancient-Bench symbols map as documented in ``curate/tei/markup.py``, the facsimile
URL resolves to the image, and the text read back from the TEI is the ground truth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lxml import etree

from heritage_eval.cli.main import main
from heritage_eval.curate.tei.document import transcription
from heritage_eval.curate.tei.markup import TEI_NS, fill, tei, text_of
from tests.conftest import realdata

ROOT = Path(__file__).resolve().parents[2]
DEMO_AB = ROOT / "data" / "demo" / "ancient_bench"
OFFICIAL_GT = realdata("ancient_bench_official_demo") / "gt"
NS = {"t": TEI_NS}


def _ab(gt: str, medium: str = "") -> etree._Element:
    ab = fill(etree.Element(tei("ab"), nsmap={None: TEI_NS}), gt, medium)
    return etree.fromstring(etree.tostring(ab))  # through real serialisation


def test_hand_written_ground_truth_maps_as_documented() -> None:
    gt = "<ignore>卷一</ignore>\n天□□地<unrecognizable>玄\n<space>黃=<note>注□</note>"
    ab = _ab(gt)
    # expected elements written out by hand from the mapping table in markup.py
    assert [etree.QName(e).localname for e in ab.iter() if e is not ab] == [
        "lb", "fw", "lb", "gap", "g", "lb", "space", "note", "gap"]
    assert [lb.get("n") for lb in ab.iterfind("t:lb", NS)] == ["1", "2", "3"]
    fw = ab.find("t:fw", NS)
    assert fw is not None and fw.get("type") == "ignore" and fw.text == "卷一"
    gaps = ab.findall(".//t:gap", NS)
    assert [(g.get("reason"), g.get("unit"), g.get("quantity")) for g in gaps] == [
        ("illegible", "character", "2"), ("illegible", "character", "1")]
    glyph = ab.find("t:g", NS)
    assert glyph is not None and glyph.get("type") == "unrecognizable"
    assert glyph.tail == "玄"
    note = ab.find("t:note", NS)
    assert note is not None and note.get("place") == "margin" and note.text == "注"
    space = ab.find("t:space", NS)
    assert space is not None and space.tail == "黃="
    assert text_of(ab) == gt


def test_silk_damage_has_unknown_extent_and_u25a2_reads_back_as_u25a1() -> None:
    ab = _ab("帛□□書", "silk_manuscripts")
    gaps = ab.findall("t:gap", NS)
    assert [(g.get("extent"), g.get("quantity")) for g in gaps] == [("unknown", None)] * 2
    assert text_of(ab) == "帛□□書"
    assert text_of(_ab("a▢b")) == "a□b"  # documented: U+25A2 comes back as U+25A1


def test_unmatched_tags_stay_literal_text() -> None:
    ab = _ab("a<note>b<ignore>c</note>")
    assert len(ab) == 1 and ab[0].tail == "a<note>b<ignore>c</note>"  # only the lb
    assert text_of(ab) == "a<note>b<ignore>c</note>"


def test_every_official_ground_truth_round_trips() -> None:
    texts = [json.loads(x)["human_gt"] for p in sorted(Path(OFFICIAL_GT).glob("*/conv.jsonl"))
             for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]
    assert len(texts) == 173  # 146 + 27 samples (realdata README)
    joined = "".join(texts)
    for symbol in ("□", "<unrecognizable>", "<note>", "<ignore>", "\n"):
        assert symbol in joined  # the sample exercises every mapped symbol
    for gt in texts:
        assert text_of(_ab(gt)) == gt


def _docs(out: Path) -> list[Path]:
    return sorted(out.glob("*/*.xml"))


@pytest.mark.parametrize("copy", [False, True])
def test_demo_documents_parse_resolve_and_round_trip(tmp_path: Path, copy: bool) -> None:
    out = tmp_path / "tei"
    args = ["export", "tei", "--data", str(DEMO_AB), "--out", str(out), "--no-progress",
            "--license", "CC BY 4.0"]
    assert main(args + (["--copy-images"] if copy else [])) == 0
    docs = _docs(out)
    assert len(docs) == 27  # 9 media x 3 conv.jsonl lines
    gts = {f"{p.parent.name}/{json.loads(x)['image'].rsplit('.', 1)[0]}": json.loads(x)
           for p in DEMO_AB.glob("*/conv.jsonl") for x in p.read_text().splitlines()}
    for doc in docs:
        root = etree.parse(str(doc)).getroot()
        assert root.tag == f"{{{TEI_NS}}}TEI" and root.nsmap[None] == TEI_NS
        item = gts[f"{doc.parent.name}/{doc.stem}"]
        assert transcription(root) == item["human_gt"]
        graphic = root.find("t:facsimile/t:surface/t:graphic", NS)
        assert graphic is not None
        url = str(graphic.get("url"))
        image = (doc.parent / url).resolve()
        source = DEMO_AB / doc.parent.name / "images" / item["image"]
        assert image.is_file() and image.read_bytes() == source.read_bytes()
        if copy:
            assert url == f"images/{item['image']}"
        assert root.findtext("t:teiHeader/t:fileDesc/t:publicationStmt/t:availability/"
                             "t:licence", namespaces=NS) == "CC BY 4.0"
        medium = root.find("t:teiHeader/t:profileDesc/t:textClass/t:keywords/t:term", NS)
        assert medium is not None and medium.get("type") == "medium"
        div = root.find("t:text/t:body/t:div", NS)
        assert div is not None and div.get("facs") == "#surface-1"
    seal = etree.parse(str(out / "seals" / "seals_000001.xml")).getroot()
    assert seal.findtext("t:teiHeader/t:fileDesc/t:titleStmt/t:title", namespaces=NS) == \
        "Seal seals_000001: transcription"


def test_refuses_non_empty_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tei"
    out.mkdir()
    (out / "x").write_text("keep")
    assert main(["export", "tei", "--data", str(DEMO_AB), "--out", str(out)]) == 2
    assert "not empty" in capsys.readouterr().err and [p.name for p in out.iterdir()] == ["x"]


def test_missing_image_is_skipped_with_exit_1(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "release" / "seals"
    (data / "images").mkdir(parents=True)
    (data / "images" / "a.png").write_bytes((DEMO_AB / "seals" / "images" /
                                             "seals_000001.jpg").read_bytes())
    (data / "conv.jsonl").write_text('{"image": "a.png", "human_gt": "長樂"}\n'
                                     '{"image": "gone.png", "human_gt": "未央"}\n',
                                     encoding="utf-8")
    out = tmp_path / "tei"
    assert main(["export", "tei", "--data", str(data.parent), "--out", str(out),
                 "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "conv.jsonl:2: image file not found" in err
    assert [p.name for p in _docs(out)] == ["a.xml"]


def test_tei_from_a_hugging_face_export(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERITAGE_EVAL_HF_CACHE", str(tmp_path / "cache"))
    hf = tmp_path / "hf"
    assert main(["export", "hf", "ancient-bench", str(DEMO_AB), "--out", str(hf),
                 "--no-progress"]) == 0
    out = tmp_path / "tei"
    assert main(["export", "tei", "--data", str(hf), "--out", str(out), "--copy-images",
                 "--categories", "seals", "--no-progress"]) == 0
    docs = _docs(out)
    assert [d.name for d in docs] == ["seals_000001.xml", "seals_000002.xml",
                                      "seals_000003.xml"]
    first = etree.parse(str(docs[0])).getroot()
    assert transcription(first) == "長樂\n未央"  # data/demo/ancient_bench/seals line 1
    assert (out / "seals" / "images" / "seals_000001.jpg").read_bytes() == \
        (DEMO_AB / "seals" / "images" / "seals_000001.jpg").read_bytes()
