"""Issue 10, item 14: BERTScore with a local model (a tiny BERT built from a config).

The model has random weights and a WordPiece tokenizer built with ``tokenizers`` and
saved without a maximum length, like the one in the report; nothing is downloaded.
Kinds guarded against: a bare KeyError for a layer bert-score cannot look up; every text
failing with OverflowError for a tokenizer without a maximum length; rescaling silently
skipped or applied with a baseline that was never loaded; results that do not say
which model, layer and baseline made them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.core.benchmark import UsageError
from heritage_eval.metrics.bertscore import (
    BertScoreConfig,
    BertScoreConfigError,
    BertScorer,
    default_layer,
    load_baseline,
    packaged_baseline,
)

pytestmark = pytest.mark.slow  # loads torch (a few seconds)

WORDS = ["the", "a", "thin", "thick", "stroke", "brush", "ink", "seal", "script", "round",
         "turn", "even", "slender", "tall", "bold", "dry", "wet", "王", "羲", "之", "行", "书",
         "笔", "画"]
B_ZH8 = 0.54755783  # bert-score's zh/bert-base-chinese.tsv, LAYER 8, column F


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    out = tmp_path_factory.mktemp("tiny-bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, ".", ","]
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                            cls_token="[CLS]", sep_token="[SEP]",
                            mask_token="[MASK]").save_pretrained(out)
    # saved without a maximum length: model_max_length is transformers' 1e30 sentinel
    assert json.loads((out / "tokenizer_config.json").read_text())["model_max_length"] > 1e29
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=3,
                         num_attention_heads=2, intermediate_size=64,
                         max_position_embeddings=512)).save_pretrained(out)
    return out


def test_local_model_without_layer_is_a_clear_usage_error(tiny: Path) -> None:
    # kind: bert-score's layer table has no entry for a path -> bare KeyError('/path')
    with pytest.raises(BertScoreConfigError) as err:
        BertScorer(BertScoreConfig(model=str(tiny)))
    assert str(err.value) == (
        f"BERTScore model {str(tiny)!r} is not in bert-score's table of default layers (it "
        "picks a tuned layer per model, e.g. 8 of 12 for bert-base-chinese); give the layer "
        "with --bertscore-layers N (1–3 for this model)")
    assert isinstance(err.value, UsageError)  # exit status 2, before anything is written
    with pytest.raises(BertScoreConfigError, match=r"outside the model .* 3 hidden layers"):
        BertScorer(BertScoreConfig(model=str(tiny), num_layers=5))
    # the table is used only for a hub id it lists
    assert default_layer("bert-base-chinese") == 8
    assert default_layer(str(tiny)) is None


def test_tokenizer_without_max_length_is_capped_at_positions(tiny: Path) -> None:
    # kind: model_max_length 1e30 -> OverflowError for every text ("int too big")
    scorer = BertScorer(BertScoreConfig(model=str(tiny), num_layers=2))
    long = " ".join(WORDS[i % len(WORDS)] for i in range(700))  # 700 tokens > 512
    f_long, f_short = scorer.f1([long, "thin stroke"], [long, "thin stroke"])
    assert f_long == pytest.approx(1.0, abs=1e-5) and f_short == pytest.approx(1.0, abs=1e-5)
    ident = scorer.identity()
    assert (ident["max_length"], ident["num_layers"], ident["model_path"]) == (512, 2, str(tiny))
    assert ident["rescale_with_baseline"] is False and ident["baseline_sha256"] is None


def test_rescaling_with_the_issue_numbers() -> None:
    # kind: rescaling asked for but the raw F reported (8.00 instead of 5.58)
    path = packaged_baseline("zh", "bert-base-chinese")
    base = load_baseline(path, 8)
    assert base.f == B_ZH8
    # (0.80 - 0.54755783) / (1 - 0.54755783) = 0.25244217 / 0.45244217 = 0.557955 (by
    # hand: 0.45244217 x 0.558 = 0.25246273, 0.00002056 too much, / 0.45244 = 0.0000454)
    assert base.rescale(0.80) == pytest.approx(0.557955, abs=1e-6)
    assert round(10 * base.rescale(0.80), 2) == 5.58
    assert base.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_rescaled_scores_and_identity(tiny: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "tiny.tsv"
    baseline.write_text("LAYER,P,R,F\n0,0.1,0.1,0.1\n1,0.2,0.2,0.2\n2,0.5,0.5,0.5\n")
    raw = BertScorer(BertScoreConfig(model=str(tiny), num_layers=2))
    scaled = BertScorer(BertScoreConfig(model=str(tiny), num_layers=2, baseline=str(baseline)))
    pairs: tuple[list[str], list[str]] = (["thin stroke", "bold ink"], ["thin stroke",
                                                                         "dry brush"])
    (r_same, r_diff), (s_same, s_diff) = raw.f1(*pairs), scaled.f1(*pairs)
    assert r_same == pytest.approx(1.0, abs=1e-5)
    assert s_same == pytest.approx(1.0, abs=1e-5)        # (1 - 0.5) / (1 - 0.5)
    assert s_diff == pytest.approx((r_diff - 0.5) / 0.5)  # layer-2 row: b = 0.5
    ident: dict[str, Any] = scaled.identity()
    assert ident["rescale_with_baseline"] is True and ident["baseline_f"] == 0.5
    assert ident["baseline_file"] == str(baseline)
    assert ident["baseline_sha256"] == hashlib.sha256(baseline.read_bytes()).hexdigest()


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read it"),
    ("layer;p;r;f\n2;0.5;0.5;0.5\n", "line 1: expected the header LAYER,P,R,F"),
    ("LAYER,P,R,F\n2,0.5,x,0.5\n", "line 2: not numbers"),
    ("LAYER,P,R,F\n0,0.1,0.1,0.1\n", "has no row for layer 2"),
    ("LAYER\tP\tR\tF\n2\t0.5\t0.5\t1.0\n", "line 2: P, R and F must lie in [0, 1)"),
])
def test_baseline_file_loaded_or_fails_loudly(tiny: Path, tmp_path: Path, content: str | None,
                                               message: str) -> None:
    # kind: rescaling asked for with a missing / malformed baseline went on unrescaled
    path = tmp_path / "b.tsv"
    if content is not None:
        path.write_text(content)
    with pytest.raises(BertScoreConfigError) as err:
        BertScorer(BertScoreConfig(model=str(tiny), num_layers=2, baseline=str(path)))
    assert str(err.value).startswith(f"BERTScore baseline file {path}")
    assert message in str(err.value)


def test_language_code_needs_a_packaged_file(tiny: Path) -> None:
    # kind: a language code for a local model silently picking some other model's file
    with pytest.raises(BertScoreConfigError, match="ships no 'zh' baseline"):
        BertScorer(BertScoreConfig(model=str(tiny), num_layers=2, baseline="zh"))


def test_hcsu_description_run_with_the_local_model(tiny: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # kind: the run exited 1 with every description "unscored" and no reason given
    from heritage_eval.cli.main import main
    from tests.conftest import realdata
    from tests.fake_server import chat_reply, fake_openai_server

    real = realdata("hcsu")

    def run(out: Path, *extra: str) -> int:
        return main(["run", "hcsu-description", "--data", str(real), "--model", "openai:vlm",
                     "--base-url", srv.base_url, "--limit", "1", "--no-cache",
                     "--out", str(out), "--bertscore-model", str(tiny), *extra])

    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("Thin even strokes in seal script.")
        assert run(tmp_path / "no-layer") == 2            # usage error, before any request
        assert srv.requests == [] and not (tmp_path / "no-layer").exists()
        assert "give the layer with --bertscore-layers N (1–3" in capsys.readouterr().err
        assert run(tmp_path / "ok", "--bertscore-layers", "2") == 0
    rows = [json.loads(line) for line in
            (tmp_path / "ok" / "samples.jsonl").read_text("utf-8").splitlines()]
    assert len(rows) == 2 and all(r["details"]["bertscore_status"] == "scored" for r in rows)
    summary = json.loads((tmp_path / "ok" / "summary.json").read_text("utf-8"))
    found = json.dumps(summary)
    assert '"max_length": 512' in found and '"num_layers": 2' in found
