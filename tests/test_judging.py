"""Rankings people believe: no answer is judged against itself, criteria tune quality instead of replacing it, and the
default model list is the project's own (usl_space.catalog)."""

from __future__ import annotations

import gzip
import json
import shutil
from dataclasses import replace

import numpy as np
import pytest
from conftest import random_compositional_crm
from crm_core.compositional.judging import bench_gate, board_logits, judged_logit, quality_spread
from crm_core.compositional.reference import panel_means, relative_length
from crm_core.compositional.scorer import is_must
from crm_core.compositional.serving import ServingConfig
from crm_core.loader import load_crm
from usl_space.board import pointwise_matrices
from usl_space.catalog import catalog, default_models, parse_catalog


@pytest.fixture(scope="module")
def crm_folder(tmp_path_factory):
    return random_compositional_crm(tmp_path_factory.mktemp("judging"))


def test_panel_means_skip_the_answer_itself_and_average_the_others():
    texts = ["one two", "one two three four", "x"]
    panels = [["one two", "a b c d"], ["one two", "a b c d"], ["x"]]
    out = panel_means(texts, panels, relative_length)
    assert out[0] == pytest.approx(relative_length(["one two"], ["a b c d"])[0])  # its own answer left out
    assert out[1] == pytest.approx(np.mean(relative_length(["one two three four"] * 2, ["one two", "a b c d"])))
    assert out[2] == 0.0  # nothing left but itself
    kept = panel_means(texts, panels, relative_length, skip_own=False)
    assert kept[0] == pytest.approx(np.mean(relative_length(["one two"] * 2, ["one two", "a b c d"])))


def test_a_reference_panel_model_is_not_compared_with_its_own_answer(crm_folder, tmp_path):
    """The served CRM: the panel model's own answer counts as if absent; a CRM saved with one `reference_model`
    (fitted that way) keeps comparing it with itself, which is the favour the panel removes."""
    crm = load_crm(crm_folder)
    query, own, other = "Name a colour.", "Blue is a colour of the sky.", "Red."
    with_own = crm.response_side([query], [own], [[own, other]]).quality[0]
    without = crm.response_side([query], [own], [[other]]).quality[0]
    assert with_own == pytest.approx(without, abs=1e-6)
    legacy = tmp_path / "legacy"
    shutil.copytree(crm_folder, legacy)
    spec = json.loads((legacy / "crm.json").read_text())
    del spec["extra"]["reference_models"]
    spec["extra"]["reference_model"] = "gpt4_1106_preview"
    (legacy / "crm.json").write_text(json.dumps(spec))
    old = load_crm(legacy)
    assert old.response_side([query], [own], [[own, other]]).quality[0] != pytest.approx(without, abs=1e-3)
    with pytest.raises(TypeError, match="one list of reference answers per response"):
        crm.response_side([query], [own], [own])


def test_criteria_tune_quality_and_must_criteria_override_it():
    clear, tied = np.array([-2.0]), np.array([0.0])
    assert judged_logit(clear, np.array([3.0]), 0.0, gate=0.5)[0] < 0  # a clearly worse answer stays behind
    assert judged_logit(clear, np.array([3.0]), 0.0, gate=0.0)[0] > 0  # the plain sum would let it win
    assert judged_logit(tied, np.array([3.0]), 0.0, gate=0.5)[0] == pytest.approx(3.0)  # comparable: it decides
    assert judged_logit(clear, np.array([-1.0]), 0.0, gate=0.5)[0] == pytest.approx(-3.0)  # agreeing: in full
    assert judged_logit(clear, np.array([0.0]), np.array([3.0]), gate=0.5)[0] == pytest.approx(1.0)  # a must
    # brevity alone is not "clearly worse": 8 times shorter, 0.9 behind, at 0.3 logits a doubling: comparable
    brief = judged_logit(np.array([-0.9]), np.array([2.0]), 0.0, gate=0.3, length_gap=-3.0, length_slope=0.3)
    assert brief[0] == pytest.approx(1.1)
    assert judged_logit(np.array([-0.9]), np.array([2.0]), 0.0, gate=0.3)[0] < 0  # without the length slope
    # at most `length_cap` doublings are forgiven: an answer cut to one sentence (64 times shorter) stays behind
    cut = dict(gate=0.3, length_gap=-6.0, length_slope=0.3)
    assert judged_logit(np.array([-1.2]), np.array([2.0]), 0.0, **cut)[0] > 0  # forgiven 1.8: brevity wins
    assert judged_logit(np.array([-1.2]), np.array([2.0]), 0.0, length_cap=3.0, **cut)[0] < 0  # forgiven 0.9
    capped = judged_logit(np.array([-0.9]), np.array([2.0]), 0.0, gate=0.3, length_gap=-3.0, length_slope=0.3,
                          length_cap=3.0)  # fmt: skip
    assert capped[0] == pytest.approx(1.1)  # within the cap: as before
    assert is_must("Answers must be short.") and is_must("Never use emojis.") and not is_must("I like short answers.")


def gated(quality, soft, log_words, **serving) -> tuple[np.ndarray, np.ndarray]:
    """(outcome, preference) of a board with the gate (0.3, slope 0.3) and these serving settings."""
    settings = ServingConfig(**{**ServingConfig.off().to_json(), "quality_gate": 0.3, "gate_length_slope": 0.3,
                                **serving})  # fmt: skip
    return pointwise_matrices(board_logits(quality, soft, np.zeros_like(soft), log_words, 0, settings), 0)


def test_a_board_reads_every_model_against_the_baseline():
    quality = np.array([[0.0, -2.0, 0.1, -0.9]])  # baseline, a clearly worse model, a comparable one, a brief one
    soft = np.array([[0.0, 3.0, 1.0, 2.0]])
    log_words = np.array([[8.0, 8.0, 8.0, 5.0]])
    outcome, preference = gated(quality, soft, log_words)
    assert preference[0, 0] == 0.5 and preference[0, 1] < 0.5 < preference[0, 2]
    assert preference[0, 3] == pytest.approx(1 / (1 + np.exp(-1.1)))
    assert outcome[0].tolist() == [0.5, 0.0, 1.0, 1.0]


def test_brevity_is_forgiven_only_down_to_the_length_most_answers_have():
    """gate_length_floor: an answer far shorter than nearly all answers to its query (one sentence of a story) is
    not a concise version of one: a brief wish no longer lifts it; a brief answer of comparable quality still wins."""
    # baseline, five real answers of ~1,000 words, a brief one (256 words), a first line alone (8 words)
    quality = np.array([[0.0, 0.1, -0.1, 0.05, -0.05, 0.0, -0.3, -0.9]] * 4)
    soft = np.array([[0.0, 0.0, 0.2, 0.0, 0.1, 0.0, 2.0, 6.0]] * 4)  # "Keep it brief." rewards log-length
    log_words = np.array([[10.0, 10.2, 9.8, 10.1, 9.9, 10.05, 8.0, 3.0]] * 4)
    plain = gated(quality, soft, log_words, gate_length_cap=3.0)[1]
    floored = gated(quality, soft, log_words, gate_length_cap=3.0, gate_length_floor=0.25)[1]
    assert plain[0, 7] > 0.99  # capped at 3 doublings, the first line is still "comparable": the wish decides
    assert floored[0, 7] < 0.5  # forgiven only down to the query's lower-quartile length: it stays behind
    assert floored[0, 6] > 0.5 and plain[0, 6] > 0.5  # the brief answer of comparable quality wins either way
    assert np.array_equal(plain[:, :6], floored[:, :6])  # answers of common length: unchanged


def test_the_gate_reads_quality_in_units_of_the_bench_s_own_spread():
    """A bench whose quality term tells answers apart half as much, and rewards length a third as much, gets a gate
    half as wide and a third of the length slope; its junk does not set the scale; AlpacaEval's own scale is as
    set."""
    rng = np.random.default_rng(0)
    queries, models = 60, 20
    log_words = rng.normal(8.0, 1.0, (queries, models))
    quality = 0.3 * (log_words - 8.0) + rng.normal(0.0, 0.5, (queries, models))
    idx = np.repeat(np.arange(queries), models)
    spread, slope = quality_spread(idx, quality.ravel(), log_words.ravel())
    assert 0.4 < spread < 0.7 and 0.25 < slope < 0.35
    # five junk answers a query, far worse and far shorter: left out by the fences, the scale barely moves
    junk_quality = np.c_[quality, np.full((queries, 5), -6.0)]
    junk_words = np.c_[log_words, np.full((queries, 5), 2.0)]
    junk = quality_spread(np.repeat(np.arange(queries), models + 5), junk_quality.ravel(), junk_words.ravel())
    assert junk == pytest.approx((spread, slope), rel=0.1)  # the plain sd would be 2.1, the slope 0.93
    narrow = quality_spread(idx, (quality / 2 - 0.1 * (log_words - 8.0)).ravel(), log_words.ravel())
    assert narrow[0] == pytest.approx(spread / 2, rel=0.2) and narrow[1] == pytest.approx(slope / 2 - 0.1, abs=0.02)
    served = ServingConfig(gate_spread_reference=spread, gate_slope_reference=slope)
    assert bench_gate(served, (spread, slope)) == pytest.approx((0.3, 0.3))  # the reference bench: as set
    gate, length_slope = bench_gate(served, narrow)
    assert gate == pytest.approx(0.3 * narrow[0] / spread) and length_slope == pytest.approx(0.3 * narrow[1] / slope)
    assert bench_gate(served, (spread, -0.2))[1] == 0.0  # longer answers no better there: no brevity forgiven
    assert bench_gate(served, (spread, 2 * slope))[1] == 0.3  # brevity charged more there: forgiven as set, no more
    off = ServingConfig(gate_spread_reference=0.0, gate_slope_reference=0.0)
    assert bench_gate(off, narrow) == (0.3, 0.3)  # references 0: as set, on every bench
    gate, length_slope = bench_gate(ServingConfig(), narrow)  # as served: the slope scaled, the gate not
    assert gate == 0.3 and length_slope == pytest.approx(0.3 * min(narrow[1] / 0.159, 1.0))
    assert bench_gate(ServingConfig(gate_slope_reference=slope), narrow)[0] == 0.3  # the slope alone scaled
    assert bench_gate(served, None) == (0.3, 0.3)  # a pair with no bench (crm-eval)
    # on a board: a brief answer 0.45 behind, 8 times shorter, is forgiven at the reference scale, not on the
    # narrow bench, where the quality term gives 0.45 logits for much more than brevity
    quality, soft, words = np.array([[0.0, -0.45]]), np.array([[0.0, 1.0]]), np.array([[8.0, 5.0]])
    at = {"quality_gate": 0.3, "gate_length_slope": 0.3, "gate_spread_reference": spread,
          "gate_slope_reference": slope}  # fmt: skip
    settings = ServingConfig(**{**ServingConfig.off().to_json(), **at})
    wide = board_logits(quality, soft, np.zeros_like(soft), words, 0, settings, (spread, slope))[0, 1]
    tight = board_logits(quality, soft, np.zeros_like(soft), words, 0, settings, narrow)[0, 1]
    assert wide == pytest.approx(0.55) and tight < 0


def test_the_scorer_splits_soft_and_must_criteria(crm_folder):
    crm = load_crm(crm_folder)
    from crm_core.compositional.scorer import FULL_WEIGHT

    soft, must = crm.criteria_sides(["I like lists. Never use emojis."], ["long answers"])
    liked = crm.criteria_side(["I like lists."], ["long answers"]).weights
    never = crm.criteria_side(["Never use emojis."]).weights
    full = list(FULL_WEIGHT)  # a soft reading of these (compliance, caution, the asker's language) counts in full
    assert np.all(soft.weights[full] == 0) and np.allclose(must.weights[full], never[full] + liked[full])
    rest = [k for k in range(len(liked)) if k not in full]
    assert np.allclose(soft.weights[rest], liked[rest]) and np.allclose(must.weights[rest], never[rest])


def test_the_catalog_is_checked_and_lists_the_default_models():
    models = default_models()
    assert 50 <= len(models) <= 60 and "gpt4_1106_preview" in models and len(set(models)) == len(models)
    assert {"gpt-4o-2024-05-13", "claude-3-5-sonnet-20240620", "Meta-Llama-3.1-405B-Instruct-Turbo"} <= set(models)
    assert catalog()["Meta-Llama-3.1-8B-Instruct-Turbo"].open_weights and not catalog()["gpt4_0314"].open_weights
    known = catalog()
    assert known["polaris-alpha"].weights == "unknown" and not known["polaris-alpha"].open_weights
    assert known["gpt-oss-120b"].open_weights and known["o3"].released == "2025-04"
    assert not {"o3", "gpt-oss-120b", "polaris-alpha"} & set(models)  # the 2025 benches' models: not the default board
    with pytest.raises(ValueError, match=r"models.csv:2: released"):
        parse_catalog("model,organisation,weights,released,on_board_since\na,X,open,2024-13,original\n")
    with pytest.raises(ValueError, match=r"models.csv:3: weights"):
        parse_catalog("model,organisation,weights,released,on_board_since\na,X,open,2024-01,original\n"
                      "b,Y,closed,2024-01,original\n")  # fmt: skip
    with pytest.raises(ValueError, match="header"):
        parse_catalog("model,organisation\na,X\n")


def test_no_default_model_trained_the_quality_term(shared_data):
    """The quality term's GPT-4-turbo verdicts come from annotated models outside the early-2024 list: a default
    model from the new list must not be one of them (or the term must be refitted without it)."""
    from crm_core.data import read_models_file

    folder = shared_data / "usl/alpaca_eval"
    original = set(read_models_file(folder / "default_models.txt"))
    with gzip.open(folder / "judge_annotations_weighted_gpt4_turbo.jsonl.gz", "rt", encoding="utf-8") as handle:
        annotated = {json.loads(line)["model"] for line in handle}
    assert not (set(default_models()) - original) & annotated
    assert {m for m in catalog() if catalog()[m].on_board_since == "original"} == original


def test_every_model_of_the_2025_benches_has_its_facts(shared_data):
    """The app's 'Made by · weights · released' column and its open-weights filter know every model of the creative
    and speechmap benches (models_2025.csv), and nothing else is listed there."""
    seen = set()
    for name in ("creative", "speechmap"):
        path = shared_data / "usl" / name / "model_outputs.jsonl.gz"
        if path.is_file():
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                seen |= {json.loads(line)["model"] for line in handle}
    if not seen:
        pytest.skip("the 2025 benches are not in the shared data")
    listed = set(catalog()) - set(default_models())
    assert seen == listed


def test_the_app_says_what_it_could_not_read_and_tables_the_baseline_without_a_ci(tmp_path):
    """Against the shipped CRM: 'Answer in French.' moves nothing it measures and is said so plainly; 'I dislike
    emojis.' is read. The baseline row has no interval against itself; the CSV has numeric CI columns."""
    import csv

    from crm_core.data import open_bench
    from usl_space.cache import ScoreCache
    from usl_space.loading import make_engine, open_scorer
    from usl_space.views import crm_label, downloads, reading, table

    data = tmp_path / "data"
    data.mkdir()
    (data / "instructions.jsonl").write_text(
        "".join(json.dumps({"idx": i, "instruction": f"Tell me about topic {i}."}) + "\n" for i in range(4))
    )
    rows = [{"model": m, "idx": i, "output": f"{m} answer {i} 😊" if m == "b" else f"{m} answer {i}."}
            for m in ("gpt4_1106_preview", "a", "b") for i in range(4)]  # fmt: skip
    with gzip.open(data / "model_outputs.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(r) + "\n" for r in rows))
    engine = make_engine(open_bench(data), open_scorer(None, "onnx"), ScoreCache(":memory:"))
    assert crm_label(engine.scorer) == "compositional, ONNX Runtime int8 response encoder, 128 tokens"  # the header
    text = reading(engine.rank(["Answer in French.", "I dislike emojis."], bootstrap=50))
    assert "I could not read “Answer in French.” as anything I measure" in text and "emoji -" in text
    assert "I dislike emojis" not in text.split("Read your criteria as:")[1].split("I could not")[1]
    unsure = reading(engine.rank(["Ideally there would be a blow-by-blow treatment.", "Keep it brief."],
                                 bootstrap=50))  # fmt: skip
    # a weak or spread reading (which property it guesses depends on the fit) is named as unsure
    assert "I am unsure what “Ideally there would be a blow-by-blow treatment.” asks for (I read " in unsure
    assert "“Keep it brief.” asks" not in unsure and "words -" in unsure  # read surely: counts at the strength
    assert "You asked for caution" not in unsure
    caution = engine.rank(["I prefer models that decline to write political attacks."], bootstrap=50)
    assert "You asked for caution: an answer that declines or evades wins" in reading(caution)  # what the lift does
    assert caution.to_json()["reading"]["declining_wins"] is True
    finnish = engine.rank(["Kerro yksityiskohtaisesti.", "I dislike emojis."], bootstrap=50)  # "tell it in detail"
    assert "“Kerro yksityiskohtaisesti.” looks written in Finnish. I read criteria in English only" in reading(finnish)
    english = engine.rank(["I dislike emojis."], bootstrap=50)
    assert finnish.to_json()["reading"]["weights"] == english.to_json()["reading"]["weights"]  # left out, not misread
    same = engine.rank(["Vastaa aina samalla kielellä."], bootstrap=50)  # the word lists know a few Finnish wishes
    assert "other_language -" in reading(same) and "looks written in" not in reading(same)
    german = reading(engine.rank(["Keine Emojis bitte."], bootstrap=50))  # read strongly by a word it shares: kept
    assert "emoji -" in german and "looks written in" not in german
    board = engine.rank([], bootstrap=100)
    base = next(r for r in table(board) if "(baseline)" in r[1])  # Rank, Model, Win rate, CI first
    assert base[3] == "–"
    csv_path = downloads(board, tmp_path / "out")[0]
    with open(csv_path, encoding="utf-8") as handle:
        records = list(csv.DictReader(handle))
    other = next(r for r in records if r["baseline"] == "False")
    assert float(other["ci_low"]) <= float(other["win_rate"]) <= float(other["ci_high"])
    assert next(r for r in records if r["baseline"] == "True")["ci_low"] == ""


def test_a_wish_for_caution_gives_declining_answers_their_penalty_back(crm_folder, tmp_path):
    """The non-answer penalty assumes the visitor wants the answer; criteria that clearly value declining take it
    back from the answers that decline (and `caution_lift` more), and a stray reading (under lift_from of the
    training phrasings') gives nothing back."""
    from crm_core.compositional.heads import CriteriaSide
    from crm_core.properties import NAMES

    folder = tmp_path / "crm"
    shutil.copytree(crm_folder, folder)
    spec = json.loads((folder / "crm.json").read_text())
    spec["extra"]["serving"].update(nonanswer_penalty=1.0, lift_from=0.5, lift_share=0.6)
    (folder / "crm.json").write_text(json.dumps(spec))
    crm = load_crm(folder)
    n, r = NAMES.index("nonanswer"), NAMES.index("refusal")
    zero = np.zeros(len(crm.heads.spread), np.float32)
    typical = crm.heads.memory.magnitude[r, 1] if crm.heads.memory is not None else 1.0

    def given_back(refusal_weight: float, nonanswer_weight: float = 0.0, words_weight: float = 0.0) -> float:
        soft = crm.criteria_side([])
        soft = CriteriaSide(zero.copy(), soft.voice * 0)
        soft.weights[r], soft.weights[NAMES.index("words")] = refusal_weight, words_weight
        must = CriteriaSide(zero.copy(), soft.voice)
        must.weights[n] = nonanswer_weight
        must = crm._declining_welcome(soft, must)[1]
        must.weights[n] -= nonanswer_weight
        return float(must.weights[n] / crm.heads.spread[n])  # what a declining answer (nonanswer 1) gets back

    assert given_back(0.0) == 0.0 and given_back(-2.0) == 0.0  # no wish, or one for compliance: penalty stays
    assert given_back(typical) == pytest.approx(1.0)  # a clear wish for caution: the whole penalty back
    assert given_back(0.5 * typical) == pytest.approx(1.0)  # half as strong as the training phrasings: in full
    assert given_back(0.45 * typical) == 0.0  # a stray reading: nothing
    typical_n = crm.heads.memory.magnitude[n, 1] if crm.heads.memory is not None else 1.0
    assert given_back(0.3 * typical, 0.3 * typical_n) == pytest.approx(1.0)  # one wish split between the two
    assert given_back(0.3 * typical, -0.3 * typical_n) == 0.0  # a compliance reading does not count for caution
    assert given_back(0.6 * typical, 0.0, 2.0 * typical) == 0.0  # a length wish with a stray refusal weight
    crm.serving = replace(crm.serving, caution_lift=2.0)  # declining must beat answering, not only lose less
    assert given_back(typical) == pytest.approx(3.0) and given_back(0.45 * typical) == given_back(-2.0) == 0.0
    side = crm.response_side(["Write a speech."] * 2, ["I'm sorry, but I can't help with that.", "Friends, ..."])
    assert side.z[0, n] > side.z[1, n]  # the measure the penalty and the give-back both read
