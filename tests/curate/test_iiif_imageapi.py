"""Size parameter, region sizes, info.json and manifest parsing of the IIIF ingester.

Expected values are worked out by hand from the IIIF Image API 3.0 §4.4 / §5 and
Presentation API 3.0 rules quoted in the module docstrings."""

from __future__ import annotations

import pytest

from heritage_eval.curate.iiif.imageapi import (
    ServiceInfo,
    is_region,
    parse_info,
    region_pixels,
    size_param,
)
from heritage_eval.curate.iiif.manifest import (
    ManifestError,
    decode_manifest,
    label_text,
    parse_manifest,
)

BIG = ServiceInfo(width=4000, height=3000)


def test_cap_on_a_large_image_is_best_fit_box_in_both_versions() -> None:
    assert size_param(2048, 3, BIG) == "!2048,2048"
    assert size_param(2048, 2, BIG) == "!2048,2048"
    assert size_param(2048, 3, None) == "!2048,2048"  # no info.json: the cap as is


def test_image_within_the_cap_is_fetched_whole_never_upscaled() -> None:
    small = ServiceInfo(width=1000, height=800)
    assert size_param(2048, 3, small) == "max"
    assert size_param(2048, 2, small) == "full"


def test_max_width_and_max_area_narrow_the_box() -> None:
    # maxHeight defaults to maxWidth (Image API 3.0 §5.2)
    assert size_param(2048, 3, parse_info({"width": 4000, "height": 3000,
                                           "maxWidth": 1000})) == "!1000,1000"
    # 4000x3000 in 2048x2048 -> 2048x1536 = 3,145,728 px > 1e6; scale sqrt(1e6/3145728)
    # = 0.56381 -> floor(1154.69) x floor(866.02) = 1154 x 866 (999,364 px)
    assert size_param(2048, 3, ServiceInfo(4000, 3000, max_area=1_000_000)) == "!1154,866"


def test_level0_takes_the_largest_listed_size_that_fits() -> None:
    info = parse_info({"width": 4000, "height": 3000, "profile": "level0",
                       "sizes": [{"width": 250, "height": 188}, {"width": 500, "height": 375},
                                 {"width": 1000, "height": 750},
                                 {"width": 2000, "height": 1500}]})
    assert info.level0
    assert size_param(1024, 3, info) == "1000,750"
    assert size_param(100, 3, info) == "250,188"  # none fits: the smallest listed
    assert size_param(1024, 2, parse_info({"width": 9, "height": 9, "profile": [
        "http://iiif.io/api/image/2/level0.json"]})) == "full"


def test_v2_limits_inside_the_profile_object() -> None:
    info = parse_info({"width": 400, "height": 300, "profile": [
        "http://iiif.io/api/image/2/level2.json", {"maxWidth": 100, "maxArea": 5000}]})
    assert (info.max_width, info.max_height, info.max_area, info.level0) == \
        (100, 100, 5000, False)
    # 400x300 in 100x100 -> 100x75 = 7500 px > 5000: scale sqrt(5000/7500) = 0.8165
    # -> 81 x 61 (floor of 81.65, 61.24)
    assert size_param(2048, 2, info) == "!81,61"


def test_regions() -> None:
    assert region_pixels("pct:10,20,30,40", ServiceInfo(1000, 500)) == (300, 200)
    assert region_pixels("900,0,300,100", ServiceInfo(1000, 500)) == (100, 100)  # clipped
    assert region_pixels("pct:0,0,50,50", None) is None
    # a 300x200 crop under a 2048 cap is fetched at its own size
    assert size_param(2048, 3, ServiceInfo(1000, 500), "pct:10,20,30,40") == "max"
    assert size_param(100, 3, ServiceInfo(1000, 500), "0,0,400,200") == "!100,100"
    assert [is_region(r) for r in ("full", "1,2,3,4", "pct:0,0,12.5,50", "1,2,0,4",
                                   "pct:1,2", "a,b,c,d")] == [True] * 3 + [False] * 3


MANIFEST = {
    "type": "Manifest", "id": "https://ex.org/m", "label": {"en": ["Album"]},
    "rights": "http://creativecommons.org/licenses/by/4.0/",
    "requiredStatement": {"label": {"en": ["Attribution"]}, "value": {"en": ["Ex Museum"]}},
    "items": [
        {"id": "https://ex.org/c1", "type": "Canvas", "label": {"none": ["f. 1r"]},
         "items": [{"type": "AnnotationPage", "items": [{
             "type": "Annotation", "motivation": "painting",
             "body": {"type": "Choice", "items": [
                 {"id": "https://ex.org/i1.jpg", "type": "Image", "service": [
                     {"id": "https://ex.org/iiif/i1/", "type": "ImageService3",
                      "profile": "level1"}]},
                 {"id": "https://ex.org/i1-ir.jpg", "type": "Image"}]}}]}]},
        {"id": "https://ex.org/c2", "type": "Canvas", "label": {"fr": ["page deux"]},
         "items": [{"type": "AnnotationPage", "items": [{
             "type": "Annotation", "motivation": "painting",
             "body": {"id": "https://ex.org/i2.jpg", "type": "Image", "service": {
                 "@id": "https://ex.org/iiif2/i2", "@type": "ImageService2",
                 "profile": "http://iiif.io/api/image/2/level2.json"}}}]}]}]}


def test_manifest_canvases_services_and_rights() -> None:
    m = parse_manifest(MANIFEST, "m.json")
    assert (m.label, m.rights) == ("Album", "http://creativecommons.org/licenses/by/4.0/")
    c1, c2 = m.canvases
    # first image of the Choice; the service id loses its trailing slash
    assert (c1.index, c1.label, c1.body_id) == (1, "f. 1r", "https://ex.org/i1.jpg")
    assert (c1.service.id, c1.service.version) == ("https://ex.org/iiif/i1", 3)  # type: ignore[union-attr]
    assert (c2.label, c2.service.id, c2.service.version) == (  # type: ignore[union-attr]
        "page deux", "https://ex.org/iiif2/i2", 2)


def test_manifest_errors_name_the_source() -> None:
    with pytest.raises(ManifestError, match=r"m\.json:1:2: not JSON"):
        decode_manifest("{,", "m.json")
    with pytest.raises(ManifestError, match="Presentation 2"):
        parse_manifest({"@type": "sc:Manifest", "sequences": []}, "old.json")
    with pytest.raises(ManifestError, match="not 'Manifest'"):
        parse_manifest({"type": "Collection", "items": []}, "c.json")
    assert label_text({"de": ["A", "B"]}) == "A B"
    assert label_text(None) == ""
