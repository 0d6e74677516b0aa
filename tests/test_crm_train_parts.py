"""crm_train's parts: config round trip and overrides, noise properties, per-epoch examples, eval metrics."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, make_tiny_qwen_crm, pair, write_jsonl
from crm_core.cross_encoder.model import save_crm
from crm_core.data import load_pairs
from crm_core.loader import load_crm
from crm_core.properties import NAMES
from crm_core.spec import Pair
from crm_train.cross_encoder.config import TrainConfig, load_config
from crm_train.cross_encoder.examples import build_examples, split_by_prompt
from crm_train.cross_encoder.modeling import build_model
from crm_train.cross_encoder.noise import add_noise, apply_noise, read_noise_pool, remove_noise, replace_noise
from crm_train.metrics import accuracy, expected_calibration_error, longer_wins_accuracy, random_accuracy
from crm_train.train_cli import main as crm_train

CRITERIA = [f"criterion {i}" for i in range(6)]
POOL = [f"unrelated {i}" for i in range(50)]


def test_config_round_trip_and_overrides(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("base_model: minilm\nlearning_rate: 2.0e-5\ntrain_files: [a.jsonl]\n")
    config = load_config(path, {"learning-rate": "1e-3", "position_swap": "false", "max_steps": "null",
                                "noise": "remove", "train_files": "b.jsonl", "attention_dropout": "0.1"})  # fmt: skip
    assert (config.learning_rate, config.position_swap, config.max_steps) == (1e-3, False, None)
    assert (config.noise, config.train_files, config.attention_dropout) == ("remove", ["b.jsonl"], 0.1)
    config.save(tmp_path / "saved.yaml")
    assert load_config(tmp_path / "saved.yaml") == config


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"lerning_rate": "1"}, "unknown option --lerning_rate"),
        ({"noise": "loud"}, "cannot read 'loud'"),
        ({"epochs": "two"}, "cannot read 'two'"),
        ({"noise_probability": "1.5"}, "between 0 and 1"),
        ({"objective": "pointwise", "ties": "true"}, "ties need the pairwise objective"),
        ({"objective": "pairwise", "length_slope": "true"}, "length_slope needs the pointwise objective"),
        ({"learning_rate": "nan"}, "--learning-rate: learning_rate: expected a finite number, got nan"),
    ],
)
def test_config_errors_are_clear(overrides, message):
    with pytest.raises(ValueError, match=message):
        load_config(None, overrides)


def test_a_yaml_nan_or_inf_is_refused_with_file_and_field(tmp_path):
    from crm_train.compositional.config import CompositionalConfig

    path = tmp_path / "run.yaml"
    path.write_text("learning_rate: .nan\n")
    with pytest.raises(ValueError, match=r"run\.yaml: learning_rate: expected a finite number, got nan"):
        load_config(path)
    path.write_text("kind: compositional\nquality_lr: .inf\n")
    with pytest.raises(ValueError, match="quality_lr: expected a finite number, got inf"):
        load_config(path, config_cls=CompositionalConfig)


def test_shipped_configs_load_and_every_field_has_help():
    from crm_train.compositional.config import CompositionalConfig
    from crm_train.cross_encoder.config import config_kind
    from crm_train.train_cli import config_class

    kinds = set()
    for path in sorted((REPO / "training" / "configs").glob("*.yaml")):
        cls = config_class(config_kind(path))
        kinds.add(cls)
        assert isinstance(load_config(path, config_cls=cls), cls), path
    assert kinds == {TrainConfig, CompositionalConfig}
    for cls in kinds:
        assert all(f.metadata["help"] for f in cls.__dataclass_fields__.values())
    with pytest.raises(ValueError, match="unknown config field"):  # a compositional config is not a TrainConfig
        load_config(REPO / "training/configs/crm-compositional.yaml")


def test_compositional_config_help_and_overrides(capsys):
    path = str(REPO / "training/configs/crm-compositional.yaml")
    assert crm_train(["--config", path, "--criteria-steps", "7", "--print-config"]) == 0
    out = capsys.readouterr().out
    assert "criteria_steps: 7\n" in out and "kind: compositional\n" in out
    with pytest.raises(SystemExit):
        crm_train(["--config", path, "--help"])
    assert "--weight-penalty VALUE" in capsys.readouterr().out
    with pytest.raises(SystemExit):  # a cross-encoder field is not an option of a compositional config
        crm_train(["--config", path, "--noise-probability", "0.5", "--print-config"])


def test_print_config_and_help(capsys):
    assert crm_train(["--config", str(REPO / "training/configs/tiny.yaml"), "--seed", "7", "--print-config"]) == 0
    assert "seed: 7\n" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        crm_train(["--help"])
    shown = capsys.readouterr().out
    assert "--noise-probability VALUE" in shown
    assert "--objective {pairwise,pointwise}" in shown  # choices, not VALUE
    assert "crash" not in shown  # the test aid is settable but not offered to users


def test_remove_noise_keeps_an_ordered_subset_at_the_asked_rate():
    kept = []
    for seed in range(400):
        out = remove_noise(CRITERIA, random.Random(seed), keep=0.5)
        assert out == [c for c in CRITERIA if c in out]
        kept.append(len(out))
    assert abs(np.mean(kept) / len(CRITERIA) - 0.5) < 0.05


def test_add_noise_keeps_the_originals_in_order_and_adds_new_pool_criteria():
    for seed in range(200):
        out = add_noise(CRITERIA[:2], random.Random(seed), POOL)
        assert [c for c in out if c in CRITERIA] == CRITERIA[:2]
        added = [c for c in out if c not in CRITERIA]
        assert 1 <= len(added) <= 2 and set(added) <= set(POOL) and len(set(out)) == len(out)


def test_replace_noise_changes_a_minority_preferring_the_losers_criteria():
    loser = ["loser a", "loser b", "loser c"]
    for seed in range(200):
        out = replace_noise(CRITERIA[:5], random.Random(seed), POOL, loser)
        unchanged = sum(a == b for a, b in zip(out, CRITERIA[:5], strict=True))
        assert len(out) == 5 and 5 / 2 < unchanged < 5
        assert set(out) - set(CRITERIA) <= set(loser)
    short = replace_noise(CRITERIA[:2], random.Random(0), POOL, loser)  # no minority exists: adds instead
    assert [c for c in short if c in CRITERIA] == CRITERIA[:2] and len(short) > 2


def test_random_noise_uses_every_kind_and_is_seeded():
    kinds = Counter(apply_noise("random", CRITERIA, random.Random(s), POOL)[1] for s in range(300))
    assert set(kinds) == {"remove", "add", "replace"} and min(kinds.values()) > 60
    assert apply_noise("random", CRITERIA, random.Random(5), POOL) == apply_noise(
        "random", CRITERIA, random.Random(5), POOL
    )
    with pytest.raises(ValueError, match="unknown noise kind"):
        apply_noise("shuffle", CRITERIA, random.Random(0), POOL)


def test_noise_pool_reads_biggen_rubrics_and_plain_criteria(tmp_path):
    path = write_jsonl(
        tmp_path / "pool.jsonl", [{"score_rubric": {"criteria": "Is it kind?"}}, {"criteria": ["a", "b"]}]
    )
    assert read_noise_pool(path) == ["Is it kind?", "a", "b"]
    write_jsonl(tmp_path / "bad.jsonl", [{"criteria": [1]}])
    with pytest.raises(ValueError, match=r"bad\.jsonl:1: criteria"):
        read_noise_pool(tmp_path / "bad.jsonl")


@pytest.fixture
def toy_frame(tmp_path):
    rows = [pair(i, criteria=CRITERIA[:3], loser_criteria=["the loser's wish"]) for i in range(40)]
    rows += [pair(100, preference="tie"), pair(101, preference="model_b", criteria=[])]
    return load_pairs(write_jsonl(tmp_path / "toy.jsonl", rows))


def test_examples_redraw_noise_every_epoch_and_repeat_per_seed(toy_frame):
    config = TrainConfig(noise="random", noise_probability=1.0, position_swap=False, seed=3)
    epoch0, stats = build_examples(toy_frame, config, 0, POOL)
    assert [e.criteria for e in epoch0] == [e.criteria for e in build_examples(toy_frame, config, 0, POOL)[0]]
    assert [e.criteria for e in epoch0] != [e.criteria for e in build_examples(toy_frame, config, 1, POOL)[0]]
    assert stats["ties_dropped"] == 1 and stats["examples"] == 41
    assert sum(v for k, v in stats.items() if k.startswith("noise_")) == 41


def test_reverse_direction_flips_labels_with_the_losers_criteria(toy_frame):
    examples, stats = build_examples(toy_frame, TrainConfig(direction="reverse", position_swap=False), 0, POOL)
    reversed_ = [e for e in examples if e.criteria == ["the loser's wish"]]
    assert len(reversed_) == stats["reversed"] == 40 and all(e.label == 1 for e in reversed_)
    assert next(e for e in examples if e.pair_id == "p101").label == 1  # no loser criteria: unchanged


def test_position_swap_and_ties(toy_frame):
    examples, _ = build_examples(toy_frame, TrainConfig(ties=True), 0, POOL)
    assert len(examples) == 2 * 42
    for original, swapped in zip(examples[::2], examples[1::2], strict=True):
        assert (swapped.first, swapped.second) == (original.second, original.first)
        assert swapped.label == {0: 1, 1: 0, 2: 2}[original.label]
    validation, _ = build_examples(toy_frame, TrainConfig(noise="random", direction="reverse"), 0, POOL, train=False)
    assert len(validation) == 41 and all(e.criteria == CRITERIA[:3] for e in validation[:40])


def test_source_weights_repeat_drop_and_sample_pairs_per_source(tmp_path):
    rows = [pair(i, source="human", loser_criteria=["the loser's wish"]) for i in range(10)]
    rows += [pair(100 + i, source="style") for i in range(10)] + [pair(200 + i, source="dsp") for i in range(400)]
    frame = load_pairs(write_jsonl(tmp_path / "mixed.jsonl", rows))
    base = TrainConfig(direction="random", position_swap=False, seed=1)
    plain, _ = build_examples(frame, base, 0, POOL)
    same, _ = build_examples(frame, TrainConfig(**{**vars(base), "source_weights": {"dsp": 1}}), 0, POOL)
    assert [(e.pair_id, e.criteria, e.label) for e in plain] == [(e.pair_id, e.criteria, e.label) for e in same]

    weighted = TrainConfig(**{**vars(base), "source_weights": {"human": 3, "style": 0, "dsp": 0.5}})
    examples, stats = build_examples(frame, weighted, 0, POOL)
    count = Counter(e.source for e in examples)
    assert count["human"] == 30 and count["style"] == 0 and 160 < count["dsp"] < 240
    assert stats["repeated"] == 20 and stats["left_out"] == 10 + (400 - count["dsp"])
    copies = [[(e.criteria, e.label) for e in examples if e.pair_id == f"p{i}"] for i in range(10)]
    assert any(len({str(c) for c in pair_copies}) == 2 for pair_copies in copies)  # each copy draws its direction
    with pytest.raises(ValueError, match="source_weights must be finite numbers >= 0"):
        load_config(None, {"source_weights": "{dsp: -1}"})


def test_split_by_prompt_never_shares_a_prompt(tmp_path):
    rows = [pair(i, prompt=f"prompt {i % 30}") for i in range(90)]
    frame = load_pairs(write_jsonl(tmp_path / "p.jsonl", rows))
    train, val = split_by_prompt(frame, 0.2, seed=1)
    assert train.height + val.height == 90 and val.height > 0
    assert not set(train["prompt"]) & set(val["prompt"])


def test_eval_metrics_against_hand_computed_values():
    labels = np.array([0, 0, 1, 1, 0])  # A, A, B, B, A
    p_a = np.array([0.9, 0.4, 0.2, 0.5, 0.7])  # right, wrong, right, undecided (half), right
    assert accuracy(p_a, labels) == pytest.approx(3.5 / 5)
    # confidences 0.9, 0.6, 0.8, 0.5, 0.7 in 10 bins over [0.5, 1]; correct: 1, 0, 1, 0, 1 (0.5 picks B)
    # bins: [0.5,0.55]: {0.5} acc 0 conf .5; (0.55,0.6]: {.6} acc 0; (0.65,0.7]: {.7} acc 1; (.75,.8]: {.8} acc 1;
    # (.85,.9]: {.9} acc 1  ->  (0.5 + 0.6 + 0.3 + 0.2 + 0.1) / 5
    assert expected_calibration_error(p_a, labels) == pytest.approx(1.7 / 5)
    lengths_a, lengths_b = np.array([10, 3, 5, 7, 4]), np.array([2, 8, 5, 9, 1])
    assert longer_wins_accuracy(lengths_a, lengths_b, labels) == pytest.approx((1 + 0 + 0.5 + 1 + 1) / 5)
    coin = np.random.default_rng(0).integers(0, 2, 5)  # 1 = predicts A
    assert random_accuracy(labels, seed=0) == pytest.approx(np.mean((coin == 1) == (labels == 0)))


def test_read_pairs_stops_on_rejected_rows_unless_told_to_skip(tmp_path, capsys):
    from crm_core.data import RejectedRowsError
    from crm_train.cross_encoder.examples import read_pairs

    path = write_jsonl(tmp_path / "p.jsonl", [pair(0), pair(1, preference="x")])
    with pytest.raises(RejectedRowsError, match="--skip-invalid"):
        read_pairs([str(path)], print)
    assert f"crm-train: {path}:2: preference:" in capsys.readouterr().err
    messages = []
    frame = read_pairs([str(path)], messages.append, skip_invalid=True)
    assert frame.height == 1 and "skipped 1 invalid row(s)" in messages[0]
    assert "skipped 1 invalid row(s) (--skip-invalid)" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(ValueError, match="no valid preference pairs"):
        read_pairs([str(empty)], print)


def test_flip_consistency_by_hand():
    from crm_train.metrics import flip_consistency

    labels = np.array([0, 1, 0, 0, 1, 1])
    p_a = np.array([0.8, 0.3, 0.7, 0.6, 0.2, 0.9])  # right, right | right, right | right, wrong
    groups = ["g1", "g1", "g2", "g2", "g3", "g3"]
    assert flip_consistency(p_a, labels, groups) == {"groups": 3, "flip_accuracy": pytest.approx(2 / 3)}
    assert flip_consistency(p_a, labels, [None, "solo", None, None, None, None])["groups"] == 0


def test_adding_a_length_slope_to_a_trained_crm_keeps_its_scores(tmp_path, qwen_tokenizer):
    base = make_tiny_qwen_crm(tmp_path / "base", qwen_tokenizer, labels=("score",), objective="pointwise", seed=5)
    model, tokenizer, spec = build_model(TrainConfig(base_model=str(base), objective="pointwise", max_length=256,
                                                     length_slope=True))  # fmt: skip
    assert spec.labels == ["score", "length_slope"] and model.config.num_labels == 2
    assert not model.score.weight[1].any()  # the slope starts at 0
    grown = save_crm(model, tokenizer, spec, tmp_path / "grown")
    pairs = [Pair(["be brief"], "q?", "Short.", "A much longer answer. " * 20), Pair([], "Hi", "Hello!", "Hey")]
    before, after = load_crm(base).score_pairs(pairs).p_a, load_crm(grown).score_pairs(pairs).p_a
    np.testing.assert_allclose(after, before, atol=1e-6)
    with pytest.raises(ValueError, match="has a length-slope output: set length_slope: true"):
        build_model(TrainConfig(base_model=str(grown), objective="pointwise", max_length=256))


def test_extra_silent_criteria_stay_apart_from_validation_and_rubrics_about_form_are_left_out(tmp_path):
    from crm_train.compositional import phrasings

    extra = phrasings.silent_criteria(extra=True)
    assert set(phrasings.TRAIN_GENERAL) <= set(extra) and not set(phrasings.TRAIN_GENERAL) & set(
        phrasings.silent_criteria()
    )
    assert not set(extra) & set(phrasings.VALIDATION_GENERAL)  # validation phrasings are never trained on
    rubrics = tmp_path / phrasings.RUBRIC_FILE
    rubrics.parent.mkdir(parents=True)
    rows = ["Does the response correctly apply the Pythagorean theorem?", "Is the response concise and brief?",
            "Does the response use a bulleted list?", "Does the response name the capital of France?"]  # fmt: skip
    rubrics.write_text("".join(json.dumps({"score_rubric": {"criteria": r}}) + "\n" for r in rows))
    assert phrasings.rubric_criteria(tmp_path) == [rows[0], rows[3]]
    assert phrasings.rubric_criteria(tmp_path / "absent") == []


def test_the_phrasing_banks_share_no_sentence_and_cover_every_steered_property():
    from crm_core.properties import NAMES
    from crm_train.compositional import phrasings

    def texts(bank) -> set[str]:
        return {p.text.lower() for p in bank}

    from crm_train.compositional.criteria_fit import DSP_DEVELOPMENT, DSP_TRAIN, DSP_VALIDATION, WIDE_DSP

    train = texts(phrasings.training_bank(0, 0, wide=True)) | {t.lower() for t in phrasings.silent_criteria(True)}
    assert texts(phrasings.training_bank(0, 0)) < train  # the wider bank holds the default one
    dsp_train = {t.lower() for d in DSP_TRAIN for t in DSP_TRAIN[d] + WIDE_DSP[d]}
    dsp_validation = {t.lower() for d in DSP_VALIDATION for t in DSP_VALIDATION[d]}
    dsp_development = {t.lower() for d in DSP_DEVELOPMENT for t in DSP_DEVELOPMENT[d]}
    assert not dsp_train & dsp_validation and not dsp_train & dsp_development and not dsp_validation & dsp_development
    validation = texts(phrasings.validation_bank()) | {t.lower() for t in phrasings.VALIDATION_GENERAL}
    development = texts(phrasings.development_bank()) | {t.lower() for t in phrasings.DEVELOPMENT_GENERAL}
    assert not development & train and not development & validation and not train & validation
    second = texts(phrasings.second_development_bank())
    assert not second & (train | validation | development)
    units = texts(phrasings.unit_development_sentences())
    assert len(units) == 25 and not units & (train | validation | development | second)
    negation = texts(phrasings.negation_development_sentences())
    assert len(negation) >= 40 and not negation & (train | validation | development | second | units)
    assert {p.prop for p in phrasings.negation_development_sentences()} == set(NAMES)  # every property
    wishes = texts(phrasings.wish_development_sentences())
    assert len(wishes) == 96 and not wishes & (train | validation | development | second | units | negation)
    wishes_2 = texts(phrasings.second_wish_development_sentences())
    earlier = train | validation | development | second | units | negation | wishes
    assert len(wishes_2) == 96 and not wishes_2 & earlier
    third = texts(phrasings.third_development_bank())
    assert len(third) >= 400 and not third & (earlier | wishes_2)
    fourth, fifth = texts(phrasings.fourth_development_bank()), texts(phrasings.fifth_development_bank())
    assert len(fourth) >= 1000 and not fourth & (earlier | wishes_2 | third)
    assert len(fifth) >= 1000 and not fifth & (earlier | wishes_2 | third | fourth)
    wishes_3, wishes_4 = (
        texts(phrasings.third_wish_development_sentences()),
        texts(phrasings.fourth_wish_development_sentences()),
    )
    assert len(wishes_3) == 52 and not wishes_3 & (earlier | wishes_2 | third | fourth | fifth)
    assert len(wishes_4) == 44 and not wishes_4 & (earlier | wishes_2 | third | fourth | fifth | wishes_3)
    wishes_5, wishes_6 = (
        texts(phrasings.fifth_wish_development_sentences()),
        texts(phrasings.sixth_wish_development_sentences()),
    )
    later = earlier | wishes_2 | third | fourth | fifth | wishes_3 | wishes_4
    assert len(wishes_5) == 48 and not wishes_5 & later and len(wishes_6) == 48 and not wishes_6 & (later | wishes_5)
    later |= wishes_5 | wishes_6
    # the seventh set on (development.toml wish_sentences_<n>): each of its size, sharing nothing with any before it
    sizes = {7: 28, 8: 24, 9: 28, 10: 24, 11: 26, 12: 24, 13: 28, 14: 24, 15: 48, 16: 32, 17: 20, 18: 12, 19: 36,
             20: 32, 21: 23, 22: 19, 23: 41, 24: 30, 25: 35, 26: 19, 27: 21, 28: 12,
             29: 20, 30: 13, 31: 19, 32: 12, 33: 10, 34: 9,
             35: 16, 36: 10, 37: 30, 38: 20, 39: 16, 40: 10, 41: 12, 42: 10, 43: 12, 44: 9, 45: 18, 46: 10,
             47: 12, 48: 14, 49: 12, 50: 12, 51: 13, 52: 14, 53: 9, 54: 9, 55: 12, 56: 8, 57: 8, 58: 8,
             59: 5, 60: 6, 61: 9, 62: 7, 63: 14, 64: 7, 65: 23, 66: 8, 67: 2, 68: 3}  # fmt: skip
    for n, size in sizes.items():
        wish_set = texts(phrasings.wish_development_set(n))
        assert len(wish_set) == size and not wish_set & later, n
        later |= wish_set
    by_prop = {p.prop: set() for p in phrasings.development_bank()}
    for p in phrasings.development_bank():
        by_prop[p.prop].add(p.sign)
    assert set(by_prop) == set(phrasings.VALIDATION_NOUNS) and all(s == {1, -1} for s in by_prop.values())


def test_the_compositional_config_defaults_are_the_shipped_recipe():
    """CompositionalConfig() builds the CRM that ships: every setting its crm.json records, except where it was
    written and options since removed (token_dropout, threshold_in_fit, voice_penalty: tried, not shipped; the
    switches whose shipped side is now the only one: silent_extra, wide_bank, wide_dsp, dsp_weights 'stray'; a CRM
    fitted after their removal records none of them)."""
    import dataclasses

    from crm_train.compositional.config import CompositionalConfig

    shipped = json.loads((REPO / "space/models/crm-compositional/crm.json").read_text())["extra"]["config"]
    defaults = dataclasses.asdict(CompositionalConfig())
    differ = {k: (defaults.get(k), v) for k, v in shipped.items() if k in defaults and defaults[k] != v}
    assert set(differ) <= {"output_dir"}, differ
    removed = {"silent_extra": True, "wide_bank": True, "wide_dsp": True, "dsp_weights": "stray"}
    recorded = {k: shipped[k] for k in removed if k in shipped}
    assert recorded == {k: removed[k] for k in recorded}  # what was shipped is what the code now always does
    assert set(shipped) - set(defaults) <= {"threshold_in_fit", "voice_penalty", *removed}


def test_the_serving_defaults_are_the_shipped_settings_and_old_folders_serve_as_they_did(tmp_path):
    """ServingConfig() is how the shipped CRM is served (crm.json `serving`); a folder written before that key
    existed reads the same names from `config`, and a setting it predates is off, as it was served then."""
    from crm_core.compositional.serving import ServingConfig

    shipped = json.loads((REPO / "space/models/crm-compositional/crm.json").read_text())["extra"]
    assert ServingConfig.from_extra(shipped, tmp_path) == ServingConfig()
    old = {"config": {"seed": 0, "quality_gate": 0.3, "weight_scale": 1.5, "criteria_steps": 2000}}
    served = ServingConfig.from_extra(old, tmp_path)
    assert (served.quality_gate, served.weight_scale, served.nonanswer_penalty, served.weight_threshold) == (
        0.3, 1.5, 0.0, 0.0)  # fmt: skip
    # the settings a folder leaves out: the defaults
    assert ServingConfig.from_extra({"serving": {"quality_gate": 0.1}}, tmp_path).weight_scale == 1.5


def _toy_criteria_data(k: int):
    """Criteria data with made-up token states (no encoder): four phrasings of two properties, two general
    criteria, one phrasing per domain, twenty answers."""
    import torch
    from crm_train.compositional import phrasings as P
    from crm_train.compositional.criteria_fit import CriteriaData

    rng = np.random.default_rng(0)
    bank = [P.Phrasing("More emojis.", "emoji", 1), P.Phrasing("No emojis.", "emoji", -1),
            P.Phrasing("Use bullets.", "bullets", 1), P.Phrasing("No bullets.", "bullets", -1)]  # fmt: skip
    n, phrasings = 20, len(bank) + 2 + 4
    z = rng.normal(0, 1, (n, k)).astype(np.float32)
    clear = {k_: [(i, i + 1) if z[i, k_] > z[i + 1, k_] else (i + 1, i) for i in range(0, n, 2)]
             for k_ in (NAMES.index("emoji"), NAMES.index("bullets"))}  # fmt: skip
    quality = rng.normal(0, 0.1, n).astype(np.float32)
    states = torch.tensor(rng.normal(0, 1, (phrasings, 5, 384)), dtype=torch.float32)
    return CriteriaData(z, rng.normal(0, 0.1, (n, 384)).astype(np.float32), quality, quality, 0.1, clear,
                        [(d, 2 * d, 2 * d + 1) for d in range(4)], bank, states, torch.ones(phrasings, 5),
                        np.array([4, 5]), None, [np.array([6 + d]) for d in range(4)])  # fmt: skip


def test_the_criteria_loss_names_its_terms_and_the_total_is_their_weighted_sum():
    """criteria_loss returns each term it teaches and the total the fit minimises; a term switched off in the config
    is neither returned nor counted."""
    import torch
    from crm_train.compositional.config import CompositionalConfig
    from crm_train.compositional.criteria_fit import CriteriaNet, CriteriaSampler, criteria_loss

    k = len(NAMES)
    data = _toy_criteria_data(k)
    for stray, gate in ((2.0, 0.5), (0.0, 0.0)):
        config = CompositionalConfig(criteria_phrasings=8, rows_per_phrasing=2, stray_penalty=stray,
                                     form_gate_weight=gate, silent_weight=3.0, weight_penalty=0.5)  # fmt: skip
        torch.manual_seed(0)
        net = CriteriaNet(k, 16, 2, [], form_gate=bool(gate))
        torch.nn.init.normal_(net.criteria[2].weight)  # weights off zero, so that size and stray are not 0
        terms = criteria_loss(net, CriteriaSampler(data, config, np.random.default_rng(0)).draw(), data, config)
        named = {"property", "silent_kl", "dsp", "size"} | ({"stray", "form_gate"} if stray else set())
        assert set(terms) == named | {"total"}
        expected = (terms["property"] + 3.0 * terms["silent_kl"] + terms["dsp"] + terms["size"]
                    + stray * terms.get("stray", 0.0) + gate * terms.get("form_gate", 0.0))  # fmt: skip
        assert float(terms["total"]) == pytest.approx(float(expected), rel=1e-6)
        assert all(float(v) > 0 for v in terms.values())
        terms["total"].backward()  # the loss reaches the heads
        assert net.criteria[2].weight.grad is not None and net.criteria[2].weight.grad.abs().sum() > 0


def test_the_quality_loss_prefers_the_preferred_answer_weighs_sources_and_leaves_length_to_its_own_term():
    import torch
    from crm_train.compositional.train import QualityNet, quality_loss

    torch.manual_seed(0)
    net = QualityNet(4, 8)
    with torch.no_grad():
        net.length_bias.fill_(1.0)
    t = {"xa": torch.randn(6, 4), "xb": torch.randn(6, 4), "sa": torch.zeros(6), "sb": torch.zeros(6),
         "dlen": torch.linspace(-1, 1, 6), "y": torch.ones(6), "w": torch.ones(6)}  # fmt: skip
    a_better = net.pair_logit(t, slice(None), False) > 0
    agree = {**t, "y": a_better.float()}
    disagree = {**t, "y": (~a_better).float()}
    assert quality_loss(net, agree, slice(None), False) < quality_loss(net, disagree, slice(None), False)
    heavy = {**disagree, "w": torch.tensor([3.0, 1, 1, 1, 1, 1])}  # a row of a small source counts more
    assert quality_loss(net, heavy, slice(None), False) != quality_loss(net, disagree, slice(None), False)
    other_lengths = {**t, "dlen": -t["dlen"]}
    assert quality_loss(net, other_lengths, slice(None), False) == quality_loss(net, t, slice(None), False)
    assert quality_loss(net, other_lengths, slice(None), True) != quality_loss(net, t, slice(None), True)


class Planted:
    """What an attacker leaves in an output folder: unpickling it would create `path`."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def test_a_saved_quality_fit_is_read_as_plain_values_and_a_planted_pickle_never_runs(tmp_path, capsys):
    import torch
    from crm_train.compositional.train import load_stage

    stage, ran = tmp_path / "quality-stage.pt", tmp_path / "ran"
    torch.save({"key": "k", "dim": 3, "state": {"w": torch.ones(2)}, "log": {"best_val_loss": 0.5}}, stage)
    assert load_stage(stage)["dim"] == 3
    torch.save({"key": "k", "evil": Planted(ran)}, stage)
    assert load_stage(stage) is None and not ran.exists()
    assert "not a plain checkpoint" in capsys.readouterr().err
    assert load_stage(tmp_path / "missing.pt") is None


def test_a_config_inside_its_own_output_folder_is_not_overwritten(tmp_path, capsys):
    from crm_train.train_cli import main as crm_train

    out = tmp_path / "run"
    out.mkdir()
    config = out / "train_config.yaml"
    text = f"# my notes on this run\noutput_dir: {out}\nlearning_rate: 2.0e-5\n"
    config.write_text(text)
    assert crm_train(["--config", str(config)]) == 2
    assert "the run's own train_config.yaml" in capsys.readouterr().err and config.read_text() == text


def test_a_refit_is_promoted_only_when_no_development_check_is_worse_and_one_is_better(tmp_path, capsys):
    """training/promote.py: each check compared with a slack (a count: and by more than one item), the
    lower-is-better one turned round; a folder that is not a CRM is refused before any work."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("promote", REPO / "training" / "promote.py")
    promote = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(promote)
    assert promote.number("264/324") == pytest.approx(264 / 324) and promote.number("0.697 / 0.714") == 0.697
    assert promote.number("1 / 4", last=True) == 4.0 and promote.number(0.52) == 0.52
    shipped = {"twins": (0.80, 1), "null from the bottom": (2.0, -1), "read right": (0.60, 1)}
    better, rows = promote.verdict(shipped, {"twins": (0.81, 1), "null from the bottom": (1.0, -1),
                                             "read right": (0.70, 1)}, 0.02)  # fmt: skip
    assert better and [r["change"] for r in rows] == ["same", "better", "better"]
    worse, rows = promote.verdict(shipped, {"twins": (0.70, 1), "null from the bottom": (1.0, -1),
                                            "read right": (0.90, 1)}, 0.02)  # fmt: skip
    assert not worse and rows[0]["change"] == "worse"  # a gain elsewhere does not buy a loss
    assert not promote.verdict(shipped, shipped, 0.02)[0]  # nothing better: the shipped CRM stays
    # a count moves only by more than one item: one phrasing of 25 (0.04) is the same, two are worse
    assert promote.items("13/25") == 25 and promote.items(0.52) == 0 and promote.items("0.697 / 0.714") == 0
    units = {"units": (13 / 25, 1, 25), "twins": (0.80, 1, 324)}
    one, rows = promote.verdict(units, {"units": (12 / 25, 1, 25), "twins": (0.85, 1, 324)}, 0.02)
    assert one and [r["change"] for r in rows] == ["same", "better"]
    two, rows = promote.verdict(units, {"units": (11 / 25, 1, 25), "twins": (0.85, 1, 324)}, 0.02)
    assert not two and rows[0]["change"] == "worse"
    assert promote.shown(promote.SHIPPED) == "space/models/crm-compositional"  # no absolute path in a result file
    assert promote.shown(tmp_path) == str(tmp_path)  # outside the repository: as given
    with pytest.raises(SystemExit):
        promote.main(["--candidate", str(tmp_path)])
    assert "not a CRM folder (no crm.json)" in capsys.readouterr().err


def test_more_wordings_of_a_property_widen_its_rows_not_their_share():
    """row_shares gives each property of the wide bank the share of rows it has without the WORDING_* tables; the
    sampler draws property rows by such probabilities (keep_row_shares), and evenly without them."""
    from collections import Counter

    from crm_train.compositional import phrasings as P
    from crm_train.compositional.config import CompositionalConfig
    from crm_train.compositional.criteria_fit import CriteriaSampler

    bank = P.training_bank(0, wide=True, wordings=True)
    before = Counter(p.prop for p in P.training_bank(0, wide=True))
    assert len(bank) > sum(before.values())  # the wording tables add phrasings
    shares = Counter()
    for phrasing, p in zip(bank, P.row_shares(bank), strict=True):
        shares[phrasing.prop] += p
    for prop in before:
        assert shares[prop] == pytest.approx(before[prop] / sum(before.values()))
    data = _toy_criteria_data(len(NAMES))  # four phrasings: emoji +, emoji -, bullets +, bullets -
    config = CompositionalConfig(criteria_phrasings=4000)
    even = CriteriaSampler(data, config, np.random.default_rng(0)).draw().phrasings[:4000]
    data.bank_p = np.array([0.7, 0.1, 0.1, 0.1])
    skewed = CriteriaSampler(data, config, np.random.default_rng(0)).draw().phrasings[:4000]
    assert abs(np.mean(even == 0) - 0.25) < 0.03 and abs(np.mean(skewed == 0) - 0.7) < 0.03
