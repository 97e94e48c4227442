"""Issue 10, items 7, 8, 9, 16 and 19 on Ancient-Bench: empty ground truth and empty
answers, API errors apart from data errors, content-filter refusals, truncation, an
unreadable ``conv.jsonl``, and ``score`` pointed at the wrong folder.

Every run goes through the real CLI against a local OpenAI-compatible server
(:mod:`tests.fake_server`); the server tells the samples apart by the size of the image
it receives (each sample's image has its own size). Expected numbers are worked out by
hand in the comments.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from heritage_eval.cli.main import main
from tests.fake_server import Scripted, chat_reply, fake_openai_server

#: sample stem -> (image side in pixels, ground truth)
SEALS = {"a": (8, "天地玄黃。"), "b": (9, "天地玄黃宇宙洪荒"), "c": (10, "。"),
         "d": (11, "王未央印"), "e": (12, "平舆令印")}
#: the body of an Azure-style content-filter reply (HTTP 200, no choices)
FILTERED = {"id": "x", "object": "chat.completion", "choices": [],
            "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {
                "violence": {"filtered": True, "severity": "high"}}}]}


def _release(root: Path, rows: dict[str, tuple[int, str]], category: str = "seals") -> Path:
    folder = root / category
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for stem, (side, gt) in rows.items():
        Image.new("RGB", (side, side), (side * 9, 40, 40)).save(folder / f"{stem}.png")
        lines.append(json.dumps({"image": f"{stem}.png", "human_gt": gt},
                                ensure_ascii=False))
    (folder / "conv.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def _side(body: dict[str, Any]) -> int:
    """The width of the (only) image in a chat request."""
    for part in body["messages"][-1]["content"]:
        if isinstance(part, dict) and part.get("type") == "image_url":
            data = part["image_url"]["url"].split(",", 1)[1]
            return int(Image.open(io.BytesIO(base64.b64decode(data))).size[0])
    raise AssertionError("no image in the request")


def _run(data: Path, out: Path, url: str, *extra: str) -> int:
    return main(["run", "ancient-bench", "--data", str(data), "--model", "openai:vlm",
                 "--base-url", url, "--retries", "1", "--model-option",
                 "backoff_base_s=0.01", "--out", str(out), *extra])


def _records(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "samples.jsonl").read_text("utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def _summary(out: Path) -> dict[str, Any]:
    return dict(json.loads((out / "summary.json").read_text("utf-8")))


def _responder(replies: dict[int, Scripted], seen: list[int]) -> Any:
    def reply(body: dict[str, Any]) -> Scripted:
        side = _side(body)
        seen.append(side)
        return replies[side]
    return reply


def test_empty_answer_empty_reference_and_api_error(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    # kinds: an empty answer silently dropped from the denominator; a ground truth that
    # normalises to nothing sent to the model (and failing only at scoring); an HTTP 500
    # on every retry scored as the empty answer "" or mixed up with bad data
    data = _release(tmp_path / "data", SEALS)
    seen: list[int] = []
    with fake_openai_server() as srv:
        srv.responder = _responder({8: chat_reply(""), 9: chat_reply("<res>天地玄黃宇宙洪荒</res>"),
                                    11: Scripted(status=500, body={"error": "boom"}),
                                    12: chat_reply("<res>平舆令印</res>")}, seen)
        assert _run(data, tmp_path / "run", srv.base_url) == 0
    # GT "。" (sample c, 10 px) is never sent: rejected when the data was loaded
    assert 10 not in seen
    # sample d (11 px): the first try and the one retry (--retries 1), both HTTP 500
    assert seen.count(11) == 2
    recs = _records(tmp_path / "run")
    conv = data / "seals" / "conv.jsonl"
    # "" against 天地玄黃 (4 tokens after dropping 。): distance 4, NED = 4/4 -> score 0;
    # no common character -> F1 0; scored, so it stays in the mean
    a = recs["seals/a"]
    assert (a["state"], a["scores"]) == ("scored", {"ned_score": 0.0, "f1": 0.0})
    c = recs["seals/c"]
    assert c["state"] == "error" and c["turns"][0]["response"] is None
    assert c["error"] == (f"{conv}:3: ground truth '。' is empty after normalisation "
                          "(nothing to score against): sample not sent")
    assert c["details"]["error_kind"] == "data"
    d = recs["seals/d"]
    assert d["state"] == "error" and d["scores"] == {"ned_score": None, "f1": None}
    assert d["details"]["error_kind"] == "api" and "HTTP 500" in d["error"]
    assert d["turns"][0]["response"]["failure"] == "server_error"
    assert d["answer"] is None or d["answer"] == ""  # never scored as an answer
    res = _summary(tmp_path / "run")["results"][0]
    # Seal mean over the 3 scored samples a (0), b (1), e (1): NED 2/3, F1 2/3
    seal = res["per_category"]["seals"]
    assert (seal["n"], seal["n_error"]) == (3, 2)
    assert seal["ned_score"] == pytest.approx(2 / 3) and seal["f1"] == pytest.approx(2 / 3)
    assert res["errors_by_kind"] == {"data": 1, "api": 1, "model": 0}
    md = (tmp_path / "run" / "summary.md").read_text("utf-8")
    assert "States: scored 3, error 2 (data 1, API 1, model failures left out 0)" in md
    assert "ground truth '。' is empty after normalisation" in capsys.readouterr().err


#: --refusals value -> the policy the record and summary name (error = exclude)
_RULE = {"error": "exclude", "wrong": "wrong"}


@pytest.mark.parametrize("policy", ["error", "wrong"])
def test_content_filter_is_its_own_outcome(tmp_path: Path, policy: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    # kind: a content-filter reply (HTTP 200, "choices": []) taken as a malformed body,
    # scored as an answer, or hidden; --refusals wrong must count it as wrong instead
    rows = {k: SEALS[k] for k in ("b", "d")}
    data = _release(tmp_path / "data", rows)
    seen: list[int] = []
    with fake_openai_server() as srv:
        srv.responder = _responder({9: chat_reply("<res>天地玄黃宇宙洪荒</res>"),
                                    11: Scripted(body=FILTERED)}, seen)
        extra = ("--refusals", policy)  # "error" = the old name of --model-failures exclude
        assert _run(data, tmp_path / "run", srv.base_url, *extra) == 0
    assert seen.count(11) == 2  # a content filter is retried once, then given up
    d = _records(tmp_path / "run")["seals/d"]
    resp = d["turns"][0]["response"]
    assert resp["failure"] == "content_filter"
    assert d["details"]["refused"] is True and d["details"]["failure_policy"] == _RULE[policy]
    summary = _summary(tmp_path / "run")
    res = summary["results"][0]
    seal = res["per_category"]["seals"]
    if policy == "error":
        # excluded: Seal = sample b alone (1.0); the raw body stays in the turn
        assert (d["state"], d["error"]) == ("error", "refused: content filter")
        assert d["details"]["error_kind"] == "model" and "content filter" in resp["error"]
        assert (seal["n"], seal["ned_score"]) == (1, 1.0)
        assert res["errors_by_kind"] == {"data": 0, "api": 0, "model": 1}
    else:
        # counted wrong: an empty answer, NED 0 and F1 0; Seal = (1 + 0) / 2 = 0.5
        assert (d["state"], d["scores"]) == ("scored", {"ned_score": 0.0, "f1": 0.0})
        assert (seal["n"], seal["ned_score"]) == (2, 0.5)
    assert summary["models"]["openai:vlm"]["response_outcomes"]["failure:content_filter"] == 1
    assert summary["refusals"]["openai:vlm"] == {"n": 1, "kinds": {"content_filter": 1},
                                                 "policy": _RULE[policy]}
    md = (tmp_path / "run" / "summary.md").read_text("utf-8")
    assert "Refused: 1 (content filter 1, model refusal 0)" in md
    assert "1 answer(s) refused (content filter or model refusal)" in capsys.readouterr().err


def test_truncated_answer_is_flagged_and_scored_as_the_official_evaluator(
        tmp_path: Path) -> None:
    # kind: an answer cut at max tokens scored silently, with no flag and no rate
    rows = {k: SEALS[k] for k in ("b", "d")}
    data = _release(tmp_path / "data", rows)
    with fake_openai_server() as srv:
        srv.responder = _responder({9: chat_reply("<res>天地玄黃宇宙", finish_reason="length"),
                                    11: chat_reply("<res>王未央印</res>")}, [])
        assert _run(data, tmp_path / "run", srv.base_url) == 0
    b = _records(tmp_path / "run")["seals/b"]
    assert b["details"]["truncated"] is True
    assert b["turns"][0]["response"]["finish_reason"] == "length"
    # No closing </res>: the whole text is scored. '<' and '>' are kept punctuation, so
    # the prediction is 11 tokens < r e s > 天 地 玄 黃 宇 宙; the reference 8 tokens
    # 天地玄黃宇宙洪荒. Edit distance = 5 deletions (<res>) + 2 insertions (洪荒) = 7;
    # NED = 7 / max(11, 8) -> score 1 - 7/11 = 4/11 = 0.363636. Common characters 6:
    # P = 6/11, R = 6/8, F1 = 2·6 / (11 + 8) = 12/19 = 0.631579.
    assert b["state"] == "scored"
    assert b["scores"]["ned_score"] == pytest.approx(4 / 11)
    assert b["scores"]["f1"] == pytest.approx(12 / 19)
    assert "truncated" not in _records(tmp_path / "run")["seals/d"]["details"]
    trunc = _summary(tmp_path / "run")["truncation"]["openai:vlm"]
    # 1 of the 2 responses was truncated: 50 %, per medium (Seal) and overall
    assert trunc["overall"] == {"n_responses": 2, "n_truncated": 1, "rate": 0.5}
    assert trunc["by"] == "medium" and trunc["groups"]["Seal"]["rate"] == 0.5
    md = (tmp_path / "run" / "summary.md").read_text("utf-8")
    assert "| Seal | 2 | 1 | 50.00 |" in md


@pytest.mark.parametrize("kind", ["folder", "unreadable", "outside"])
def test_unreadable_conv_jsonl_costs_only_its_medium(tmp_path: Path, kind: str,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    # kind: a conv.jsonl that is a folder (or cannot be read) stopped the whole run
    data = _release(tmp_path / "data", {"d": SEALS["d"]})
    bad = data / "calligraphys" / "conv.jsonl"
    outside = tmp_path / "elsewhere.jsonl"
    if kind == "folder":
        bad.mkdir(parents=True)
    elif kind == "outside":  # a link leading out of the data folder
        outside.write_text("{}\n", encoding="utf-8")
        bad.parent.mkdir(parents=True)
        bad.symlink_to(outside)
    else:  # no read permission (simulated: the tests may run as root, who reads anyway)
        bad.parent.mkdir(parents=True)
        bad.write_text("{}\n", encoding="utf-8")
        from heritage_eval.benchmarks.ancient_bench import loader

        real_open = loader.open_regular

        def open_(path: Any, *args: Any, **kwargs: Any) -> Any:
            if Path(path) == bad:
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, *args, **kwargs)
        monkeypatch.setattr(loader, "open_regular", open_)
    with fake_openai_server() as srv:
        srv.responder = _responder({11: chat_reply("<res>王未央印</res>")}, [])
        assert _run(data, tmp_path / "run", srv.base_url) == 0
    recs = _records(tmp_path / "run")
    assert recs["seals/d"]["state"] == "scored"  # the other medium ran
    part = recs["calligraphys/conv.jsonl"]
    why = {"folder": "it is a folder, not a regular file", "unreadable": "Permission denied",
           # said of the file, not as an "image reference"
           "outside": f"it is a link leading outside the data folder, to "
                      f"{outside.resolve()}; pass --allow-outside-paths to read it"}[kind]
    assert part["state"] == "error" and part["details"]["error_kind"] == "data"
    assert part["error"] == (f"{bad}: cannot read conv.jsonl ({why}): category "
                             "'calligraphys' not evaluated")
    res = _summary(tmp_path / "run")["results"][0]
    assert res["per_category"]["calligraphys"]["n_error"] == 1
    assert f"{bad}: cannot read conv.jsonl" in capsys.readouterr().err


def _official_layout(root: Path) -> Path:
    """A release root beside a predictions root, as the official demo ships them."""
    _release(root / "gt", {"d": SEALS["d"], "e": SEALS["e"]})
    pred = root / "predictions" / "m1" / "seals" / "results"
    pred.mkdir(parents=True)
    (pred / "d.json").write_text(json.dumps({"answer": "王未央印"}), encoding="utf-8")
    return root


def test_score_predictions_one_folder_too_high(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    # kind: --predictions pointed at the folder above the predictions root: gt/ and
    # predictions/ were taken as models and a table of 0.00 printed with exit 0
    root = _official_layout(tmp_path / "demo")
    rc = main(["score", "ancient-bench", "--data", str(root / "gt"), "--predictions",
               str(root), "--out", str(tmp_path / "out")])
    assert rc == 2
    err = capsys.readouterr().err
    assert f"did you mean {root / 'predictions'}" in err
    assert not (tmp_path / "out").exists()


def test_missing_predictions_say_they_scored_zero(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]
                                                  ) -> None:
    # kind: missing prediction files silently scored 0 (numbers below the official ones)
    root = _official_layout(tmp_path / "demo")  # e.json is missing
    assert main(["score", "ancient-bench", "--data", str(root / "gt"), "--predictions",
                 str(root / "predictions"), "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert ("m1: 1 missing prediction file(s) scored 0 as empty answers (--missing empty: "
            "the model's failure stays in its denominator; the official evaluator would "
            "stop at the first, and '--missing skip' leaves them out)") in err


def test_unknown_model_gets_a_did_you_mean(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    # kind: a mistyped baseline reported as "a multiple-choice baseline" instead of an
    # unknown model, with no suggestion
    data = _release(tmp_path / "data", {"d": SEALS["d"]})
    assert main(["run", "ancient-bench", "--data", str(data), "--model", "baseline:randm",
                 "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "unknown model 'baseline:randm' (did you mean 'baseline:random'?)" in err
    assert "multiple-choice baseline" not in err
    assert main(["run", "ancient-bench", "--data", str(data), "--model", "opnai:gpt-4o",
                 "--out", str(tmp_path / "run")]) == 2
    assert "(did you mean 'openai:gpt-4o'?)" in capsys.readouterr().err
