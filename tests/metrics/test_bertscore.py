"""BERTScore through bert-score with the bundled offline MiniLM.

Reference: the formula of Zhang et al. (ICLR 2020) recomputed here directly with
transformers on the same model and layer: greedy cosine matching of token states
without [CLS]/[SEP], precision over candidate tokens, recall over reference tokens,
F1 their harmonic mean (no IDF, no rescaling).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from heritage_eval.metrics.bertscore import (
    BUNDLED_MODEL_ID,
    BertScoreConfig,
    BertScorer,
    BertScoreUnavailable,
    bundled_model_path,
)

pytestmark = pytest.mark.slow  # loads torch and the model (about 8 s)


@pytest.fixture(scope="module")
def scorer() -> BertScorer:
    return BertScorer()


def _reference_f1(cand: str, ref: str) -> float:
    import torch
    from transformers import AutoModel, AutoTokenizer

    path = str(bundled_model_path())
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()

    def states(text: str) -> torch.Tensor:
        enc = tok(text, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**enc, output_hidden_states=True).hidden_states[6][0]
        hidden = hidden[1:-1]  # drop [CLS] and [SEP]
        return hidden / hidden.norm(dim=-1, keepdim=True)

    c, r = states(cand), states(ref)
    sim = c @ r.T
    p = sim.max(dim=1).values.mean().item()
    rec = sim.max(dim=0).values.mean().item()
    return 2 * p * rec / (p + rec)


def test_self_comparison_is_ten_when_scaled(scorer: BertScorer) -> None:
    ref = ("Broad, flat clerical characters with silkworm-head starts and flared "
           "wild-goose tails; airy spacing and a lilting rhythm.")
    (f,) = scorer.f1([ref], [ref])
    assert round(10 * f, 2) == 10.00  # the paper's self-comparison figure


def test_matches_the_formula_recomputed_with_transformers(scorer: BertScorer) -> None:
    cand = "Slender even strokes in tall seal script with round turns."
    ref = "Qin small seal script: tall rectangles, even spacing of parallel strokes."
    (f,) = scorer.f1([cand], [ref])
    assert f == pytest.approx(_reference_f1(cand, ref), abs=1e-4)
    assert 0.2 < f < 0.95


def test_identity_records_model_and_layer(scorer: BertScorer) -> None:
    ident = scorer.identity()
    assert ident["model_id"] == BUNDLED_MODEL_ID and ident["num_layers"] == 6
    assert ident["library"] == "bert-score 0.3.13"
    assert Path(ident["model_path"]).is_dir()


def test_unloadable_model_raises_unavailable(tmp_path: Path) -> None:
    with pytest.raises(BertScoreUnavailable, match="cannot load BERTScore model"):
        BertScorer(BertScoreConfig(model=str(tmp_path / "no-model"), num_layers=2))


def test_empty_text_is_refused_not_scored(scorer: BertScorer) -> None:
    # bert-score fails on an empty candidate (AttributeError inside its tokenizer call),
    # which used to turn the whole batch into "unscored"; an empty text has no token to
    # match, so the scorer refuses it by name instead of guessing a 0
    with pytest.raises(ValueError, match=r"empty text at index\(es\) \[1\]"):
        scorer.f1(["thin strokes", "  "], ["thin strokes", "bold ink"])
    with pytest.raises(ValueError, match=r"index\(es\) \[0\]"):
        scorer.f1(["thin strokes"], [""])
