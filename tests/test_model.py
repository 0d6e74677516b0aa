"""crm_core.cross_encoder.model: checkpoints, symmetric scoring, batching that does not change results."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import make_tiny_qwen_crm
from crm_core.cross_encoder.model import length_feature
from crm_core.loader import load_crm
from crm_core.spec import CRMSpec, Pair

PAIRS = [
    Pair(["prefer concise answers"], "What is 2+2?", "4", "The answer, after careful thought, is four. " * 30),
    Pair([], "Name a colour.", "Blue.", "Red, a warm colour."),
    Pair(["I like lists"], [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello"},
                            {"role": "user", "content": "Give me two fruits."}], "- apple\n- pear", "apples and pears"),
    Pair(["be formal"], "Greet my client.", "Dear Ms. Smith,", "yo!", dislikes=["slang"]),
]  # fmt: skip


def swapped(pairs):
    return [Pair(p.criteria, p.context, p.response_b, p.response_a, p.dislikes) for p in pairs]


@pytest.mark.parametrize("crm", ["tiny_qwen_crm", "minilm_crm"])
def test_swapping_a_and_b_gives_exactly_one_minus_p(crm, request):
    scorer = load_crm(request.getfixturevalue(crm))
    forward, backward = scorer.score_pairs(PAIRS), scorer.score_pairs(swapped(PAIRS))
    np.testing.assert_allclose(backward.p_a, 1 - forward.p_a, rtol=0, atol=1e-12)
    np.testing.assert_allclose(backward.p_a_first, 1 - forward.p_a_second, rtol=0, atol=1e-15)  # same logits
    assert 0 <= forward.position_consistency <= 1
    assert np.all((forward.p_a > 0) & (forward.p_a < 1))


@pytest.mark.parametrize("crm", ["tiny_qwen_crm", "minilm_crm"])
def test_batch_size_and_padding_do_not_change_scores(crm, request):
    scorer = load_crm(request.getfixturevalue(crm))
    one_by_one = scorer.score_pairs(PAIRS, batch_size=1).p_a
    batched = scorer.score_pairs(PAIRS * 3, batch_size=16).p_a
    np.testing.assert_allclose(batched, np.tile(one_by_one, 3), atol=1e-5)


def test_one_order_only_when_asked(tiny_qwen_crm):
    scorer = load_crm(tiny_qwen_crm)
    single = scorer.score_pairs(PAIRS, symmetric=False)
    both = scorer.score_pairs(PAIRS)
    np.testing.assert_allclose(single.p_a, both.p_a_first, atol=1e-6)
    assert np.isnan(single.position_consistency) and not np.isnan(both.position_consistency)


def test_three_way_head_gives_a_tie_probability(tmp_path, qwen_tokenizer):
    folder = make_tiny_qwen_crm(tmp_path / "three", qwen_tokenizer, labels=("model_a", "model_b", "tie"))
    scores = load_crm(folder).score_pairs(PAIRS)
    assert scores.p_tie is not None and np.all((scores.p_tie > 0) & (scores.p_tie < 1))
    assert np.all(scores.p_a + scores.p_tie < 1)
    flipped = load_crm(folder).score_pairs(swapped(PAIRS))
    np.testing.assert_allclose(flipped.p_tie, scores.p_tie, atol=1e-12)


def test_pointwise_checkpoint_scores_single_responses(tmp_path, qwen_tokenizer):
    folder = make_tiny_qwen_crm(tmp_path / "point", qwen_tokenizer, labels=("score",), objective="pointwise")
    scorer = load_crm(folder)
    scores = scorer.score_responses(["be brief"], "q?", ["a", "a much longer answer", "a"])
    assert scores.shape == (3,) and scores[0] == scores[2] and scores[0] != scores[1]
    pair_scores = scorer.score_pairs(PAIRS)  # P(A) = sigmoid(score A - score B); order plays no part
    a = np.array(
        [scorer.score_responses(p.criteria, p.context, [p.response_a, p.response_b], p.dislikes) for p in PAIRS]
    )
    assert np.allclose(pair_scores.p_a, 1 / (1 + np.exp(-(a[:, 0] - a[:, 1]))), atol=1e-3)  # batch padding: ~1e-4
    assert pair_scores.position_consistency == 1.0


def test_a_length_slope_head_adds_its_slope_times_log2_words(tmp_path, qwen_tokenizer):
    assert length_feature(255) == 0 and length_feature(511) == 1 and length_feature(127) == -1
    labels = ("score", "length_slope")
    scorer = load_crm(make_tiny_qwen_crm(tmp_path / "slope", qwen_tokenizer, labels=labels, objective="pointwise"))
    responses = ["Two words.", "A longer answer with more words. " * 30, "Two words."]
    logits = scorer.logits([scorer.builder.point(["be brief"], "q?", r) for r in responses])
    assert np.abs(logits[:, 1]).min() > 0  # a random head: the slope column is live
    words = np.array([2, 180, 2])
    expected = logits[:, 0] + logits[:, 1] * np.log2((words + 1) / 256)
    np.testing.assert_allclose(scorer.score_responses(["be brief"], "q?", responses), expected, rtol=1e-5)
    pair = scorer.score_pairs([Pair(["be brief"], "q?", responses[0], responses[1])])
    assert pair.p_a[0] == pytest.approx(1 / (1 + np.exp(-(expected[0] - expected[1]))), abs=1e-3)
    with pytest.raises(ValueError, match="do not fit the pointwise objective"):
        CRMSpec("chat", 256, objective="pointwise", labels=["length_slope"])


def test_checkpoint_folder_and_crm_json(tiny_qwen_crm):
    files = {p.name for p in tiny_qwen_crm.iterdir()}
    assert {"crm.json", "config.json", "model.safetensors", "tokenizer.json", "README.md"} <= files
    assert not any(name.endswith((".bin", ".pt")) for name in files)
    spec = CRMSpec.load(tiny_qwen_crm)
    assert (spec.style, spec.max_length, spec.labels) == ("chat", 256, ["model_a", "model_b"])
    assert json.loads((tiny_qwen_crm / "config.json").read_text())["id2label"] == {"0": "model_a", "1": "model_b"}


def test_a_checkpoint_is_scored_with_its_own_format_or_not_at_all(tmp_path, tiny_qwen_crm):
    data = json.loads((tiny_qwen_crm / "crm.json").read_text())
    for change, message in (({"prompt_format_version": 99}, "prompt format v99"),
                            ({"labels": ["yes", "no"]}, "do not fit the pairwise objective"),
                            ({"temperature": 2}, "unknown field")):  # fmt: skip
        (tmp_path / "crm.json").write_text(json.dumps({**data, **change}))
        with pytest.raises(ValueError, match=message):
            CRMSpec.load(tmp_path)


def test_loading_errors_are_clear(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="no such checkpoint folder, and not a Hub repo id"):
        load_crm(tmp_path / "missing")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(FileNotFoundError, match="not in the local Hugging Face cache"):
        load_crm("some-org/some-crm")
    with pytest.raises(FileNotFoundError, match="not a CRM checkpoint"):
        load_crm(tmp_path)


def test_a_cross_encoder_is_a_scorer(tiny_qwen_crm):
    from crm_core.spec import Scorer

    assert isinstance(load_crm(tiny_qwen_crm), Scorer)  # the same protocol as the compositional kind
