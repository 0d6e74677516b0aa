"""The compositional CRM: scorer arithmetic, criteria splitting, the instant engine path against the per-pair path,
saved response sides (stale ones refused), uploads, and the data rules of its training sources. (Over 400 lines:
the tests share a module-scoped fixture, a small fitted CRM, that a split would fit twice.)"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import REPO, random_compositional_crm, write_jsonl
from crm_core.compositional.scorer import CompositionalScorer, split_criteria
from crm_core.compositional.serving import ServingConfig
from crm_core.encoder import write_encoder
from crm_core.loader import load_crm
from crm_core.properties import NAMES
from crm_core.spec import CRMSpec, Pair
from test_engine import toy_bench, toy_topics
from usl_space.anytime_engine import AnytimeEngine
from usl_space.cache import ScoreCache
from usl_space.instant import ResponseTable, StaleTableError
from usl_space.instant_engine import InstantEngine


@pytest.fixture(scope="module")
def compositional_crm(tmp_path_factory) -> Path:
    """Real MiniLM encoder, heads with random weights (seeded): exercises every term of the score."""
    return random_compositional_crm(tmp_path_factory.mktemp("compositional"))


def test_split_criteria_reads_sentences_and_dislikes():
    assert split_criteria(["No emojis. Use headings!", "  ", "Be brief"], ["emoji", "  long answers. "]) == [
        "No emojis.", "Use headings!", "Be brief", "I dislike emoji.", "I dislike long answers."]  # fmt: skip
    # a short reply stays with the question it answers; a longer sentence after a question is a wish of its own
    assert split_criteria(["Emojis? No thanks. Use headings!", "Can you use tables? Also keep answers short."]) == [
        "Emojis? No thanks.", "Use headings!", "Can you use tables?", "Also keep answers short."]  # fmt: skip
    assert split_criteria(["Why?", "Tables? Yes, please!"]) == ["Why?", "Tables? Yes, please!"]
    # after a semicolon: a short clause about what the one before names, or a language only the two name together,
    # stays with it; a wish of its own does not
    assert split_criteria(["Emoji everywhere; cut it. No stalling; deliver the essay now."]) == [
        "Emoji everywhere; cut it.", "No stalling;", "deliver the essay now."]  # fmt: skip
    assert split_criteria(["I ask in Finnish; reply in English, please.", "Use headings; keep answers short and plain."]
                          ) == ["I ask in Finnish; reply in English, please.", "Use headings;",
                                "keep answers short and plain."]  # fmt: skip


def test_spec_kind_is_checked(tmp_path):
    with pytest.raises(ValueError, match="kind"):
        CRMSpec("segments", 64, objective="pointwise", labels=["score"], kind="bag-of-words")
    with pytest.raises(ValueError, match="pointwise"):
        CRMSpec("segments", 64, kind="compositional")


def test_scorer_is_the_documented_sum_and_symmetric(compositional_crm):
    crm = load_crm(compositional_crm)
    assert isinstance(crm, CompositionalScorer) and crm.spec.kind == "compositional"
    a, b = "Sure! Here you go 😀\n\n- one\n- two", "The answer is two. It follows from the definition."
    p = crm.score_pairs([Pair(["No emojis."], "Count to two", a, b), Pair(["No emojis."], "Count to two", b, a)])
    assert p.p_a[0] == pytest.approx(1 - p.p_a[1], abs=1e-9)
    side = crm.response_side(["Count to two"] * 2, [a, b])
    crit = crm.criteria_side(["No emojis."])
    manual = side.quality + side.z @ crit.weights + side.voice @ crit.voice
    assert p.p_a[0] == pytest.approx(1 / (1 + np.exp(-(manual[0] - manual[1]))), abs=1e-6)  # float32 heads
    # criteria change the decision through weights and voice, and dislikes are criteria too
    assert not np.allclose(crm.criteria_side([]).weights, crit.weights)
    assert np.allclose(crm.criteria_side([], ["emojis"]).weights, crm.criteria_side(["I dislike emojis."]).weights)
    assert all(name in NAMES for name, _ in crit.explain(top=3, threshold=0.0))


def toy_engine(crm: Path, cache: ScoreCache, path: type = InstantEngine):
    bench = toy_bench()
    return path(bench, load_crm(crm), cache, toy_topics(bench))


def test_instant_leaderboard_equals_the_per_pair_path(compositional_crm, tmp_path):
    instant = toy_engine(compositional_crm, ScoreCache(tmp_path / "a.sqlite"))
    # the anytime path: score_points per (query, model), cached in SQLite
    per_pair = toy_engine(compositional_crm, ScoreCache(tmp_path / "b.sqlite"), AnytimeEngine)
    for criteria, dislikes in ((["Prefer short answers."], []), ([], ["detail"]), ([], [])):
        fast = instant.rank(criteria, dislikes)
        slow = per_pair.rank(criteria, dislikes)
        assert fast.done and [r["model"] for r in fast.rows] == [r["model"] for r in slow.rows]
        for x, y in zip(fast.rows, slow.rows, strict=True):
            assert x["win_rate"] == pytest.approx(y["win_rate"], abs=1e-6)
            assert x["mean_preference"] == pytest.approx(y["mean_preference"], abs=1e-6)
            assert (x["ci_low"], x["rank_ub"], x["n"]) == (y["ci_low"], y["rank_ub"], y["n"])


def test_inspecting_one_answer_gives_what_the_board_counts_on_both_paths(compositional_crm, tmp_path):
    """Inspect (judge_one) says the probability the board itself averages: the mean over the queries of one model's
    judged answers is its win rate, on the instant path (gated as the board is) and on the per-pair path."""
    criteria = ["Prefer short answers."]
    for path in (InstantEngine, AnytimeEngine):
        engine = toy_engine(compositional_crm, ScoreCache(tmp_path / f"{path.__name__}.sqlite"), path)
        board = {row["model"]: row for row in engine.rank(criteria, bootstrap=50).rows}
        model = next(m for m in engine.models if m != engine.baseline)
        answered = [i for i in engine.query_ids.tolist() if (i, model) in engine.output]
        judged = [engine.judge_one(criteria, [], i, model) for i in answered]
        assert np.mean([p for p, _ in judged]) == pytest.approx(board[model]["win_rate"], abs=1e-4)  # rounded
        assert all(0 < p < 1 for p, _ in judged)
        how = judged[0][1]
        assert ("as the board counts it" in how) if path is InstantEngine else ("pointwise CRM" in how)


def test_response_side_is_saved_once_and_foreign_files_are_refused(compositional_crm, tmp_path):
    engine = toy_engine(compositional_crm, ScoreCache(tmp_path / "c.sqlite"))
    table = engine.response_table()
    saved = list((tmp_path / "response-sides").glob("*.npz"))
    assert len(saved) == 1 and table.seconds > 0
    again = toy_engine(compositional_crm, ScoreCache(tmp_path / "c.sqlite")).response_table()
    assert again.seconds == 0 and np.array_equal(again.side.quality, table.side.quality)
    with pytest.raises(StaleTableError, match="checkpoint"):
        ResponseTable.load(saved[0], "another-crm", table.bench_hash)
    with pytest.raises(StaleTableError, match="bench_hash"):
        ResponseTable.load(saved[0], table.checkpoint, "another-bench")


def test_serving_settings_drop_small_weights_and_voices_and_keep_the_saved_table(compositional_crm, tmp_path):
    crm = load_crm(compositional_crm)
    texts = ["No emojis.", "Use headings."]
    plain, each = crm.criteria_side(texts), [crm.criteria_side([t]).weights for t in texts]
    voices = [crm.criteria_side([t]).voice for t in texts]
    cut = float(np.mean([np.linalg.norm(v) for v in voices]))  # between the two voices' lengths
    crm.serving = replace(crm.serving, weight_threshold=0.5, voice_threshold=cut)
    shrunk = crm.criteria_side(texts)
    # each criterion's weights and voice length are soft-thresholded before they are summed
    assert np.allclose(shrunk.weights, sum(np.sign(w) * np.maximum(np.abs(w) - 0.5, 0) for w in each), atol=1e-6)
    expected = sum(v * max(np.linalg.norm(v) - cut, 0) / np.linalg.norm(v) for v in voices)
    assert np.allclose(shrunk.voice, expected, atol=1e-5) and 0 < np.linalg.norm(shrunk.voice) < np.linalg.norm(
        plain.voice)  # fmt: skip
    assert (shrunk.weights == 0).sum() > (plain.weights == 0).sum()
    # the scale multiplies what survives the cut, and leaves the voice alone
    crm.serving = replace(crm.serving, weight_scale=2.5)
    scaled = crm.criteria_side(texts)
    assert np.allclose(scaled.weights, 2.5 * shrunk.weights, atol=1e-6) and np.allclose(scaled.voice, shrunk.voice)
    # the settings live in crm.json's serving: a saved bench table stays valid when they change
    folder = tmp_path / "crm"
    shutil.copytree(compositional_crm, folder)
    first = toy_engine(folder, ScoreCache(tmp_path / "e.sqlite"))
    before = first.rank(["No emojis."])
    spec = json.loads((folder / "crm.json").read_text(encoding="utf-8"))
    spec["extra"]["serving"].update(weight_threshold=0.5, voice_threshold=1.0, weight_scale=2.0)
    (folder / "crm.json").write_text(json.dumps(spec), encoding="utf-8")
    second = toy_engine(folder, ScoreCache(tmp_path / "e.sqlite"))
    serving = second.scorer.heads.serving
    assert (serving.weight_threshold, serving.voice_threshold, serving.weight_scale) == (0.5, 1.0, 2.0)
    assert second.response_table().seconds == 0 and second.checkpoint != first.checkpoint
    after = second.rank(["No emojis."])
    assert [r["mean_preference"] for r in after.rows] != [r["mean_preference"] for r in before.rows]


def test_an_upload_is_encoded_once_and_ranked_with_the_others(compositional_crm, tmp_path):
    engine = toy_engine(compositional_crm, ScoreCache(tmp_path / "d.sqlite"))
    outputs = {i: "Sure!! 🎉🎉 " * 5 + f"upload answer {i}" for i in range(12)}
    upload = engine.with_model("upload", outputs)
    board = upload.rank(["Use emojis, I love them."])
    assert "upload" in [r["model"] for r in board.rows] and len(board.rows) == 5
    assert "upload" not in engine.models and len(engine.response_table().models) < len(upload.response_table().models)
    calls = []
    original = engine.scorer.response_side
    engine.scorer.response_side = lambda *a, **k: calls.append(1) or original(*a, **k)
    again = engine.with_model("upload", outputs)  # the next request with the same upload: nothing re-encoded
    assert not calls and again.rank(["Use emojis, I love them."]).rows == board.rows


def test_an_upload_on_a_bench_with_its_own_panel_is_compared_with_that_panel(compositional_crm, tmp_path):
    """Where the bench lacks the CRM's reference panel, the engine's table is built against the bench's own top
    models; an upload joins the board, not the panel, and its answers are compared with that same panel."""
    from usl_space.engine import added_outputs
    from usl_space.instant import response_side_of

    engine = toy_engine(compositional_crm, ScoreCache(tmp_path / "p.sqlite"))
    scorer = engine.compositional
    scorer.reference_models = []
    scorer.serving = replace(scorer.serving, consensus_scale=0.5, panel_share=0.5)
    panel = engine.own_panel
    assert panel and set(panel) < set(engine.models)
    outputs = {i: f"An uploaded answer to question {i}, short and plain." for i in range(12)}
    upload = engine.with_model("upload", outputs)
    assert upload.own_panel == panel and "upload" in [r["model"] for r in upload.rank([]).rows]
    added = added_outputs("upload", outputs)
    alone = response_side_of(scorer, engine.query, added, engine.output, own=panel)
    np.testing.assert_allclose(upload.response_table().side.quality[-len(added) :], alone.quality, atol=1e-4)
    # the gate's scale (judging.quality_spread) is the bench's: the upload's answers do not move it
    words = scorer.heads.spread
    bench_only = engine.response_table().quality_spread(words)
    engine.response_table()._spread = None  # the upload's table was made before: it must not rely on a cached value
    assert upload.response_table().quality_spread(words) == bench_only


def test_a_generated_answer_file_built_into_the_bench_ranks_as_the_same_answers_uploaded(compositional_crm,
                                                                                          tmp_path):  # fmt: skip
    """usl-data build --answers (the file usl-data generate writes) and the app's upload give the same board entry."""
    from crm_core.data import with_answers
    from usl_space.instant_engine import InstantEngine

    engine = toy_engine(compositional_crm, ScoreCache(tmp_path / "u.sqlite"))
    outputs = {i: f"A generated answer, number {i}, in a sentence or two." for i in range(12)}
    instructions = engine.bench.instructions()
    write_jsonl(tmp_path / "gen.jsonl", [{"idx": 100 + i, "instruction": instructions[i], "output": text,
                                          "generator": "generated"} for i, text in outputs.items()])  # fmt: skip
    bench = with_answers(engine.bench, [tmp_path / "gen.jsonl"])
    built = InstantEngine(bench, engine.scorer, ScoreCache(tmp_path / "v.sqlite"), toy_topics(bench))
    uploaded = engine.with_model("generated", outputs)
    for criteria in ([], ["Prefer short answers."]):
        mine = next(r for r in built.rank(criteria).rows if r["model"] == "generated")
        theirs = next(r for r in uploaded.rank(criteria, models=[*engine.models, "generated"]).rows
                      if r["model"] == "generated")  # fmt: skip
        assert mine["win_rate"] == pytest.approx(theirs["win_rate"], abs=1e-9) and mine["n"] == theirs["n"] == 12


# -- data rules ---------------------------------------------------------------------------------------------------
def fake_shared(root: Path) -> Path:
    """An AlpacaEval folder with default and other models, instructions in both halves."""
    from crm_train.compositional.sources import alpaca_train_half

    ae = root / "usl/alpaca_eval"
    ae.mkdir(parents=True)
    texts = [f"Instruction number {i}?" for i in range(16)]
    assert {alpaca_train_half(t) for t in texts} == {True, False}
    write_jsonl(ae / "instructions.jsonl", [{"idx": i, "dataset": "x", "instruction": t} for i, t in enumerate(texts)])
    (ae / "default_models.txt").write_text("gpt4_1106_preview\ndefault-model\n", encoding="utf-8")
    models = ["gpt4_1106_preview", "default-model", "other-model"]
    with gzip.open(ae / "model_outputs.jsonl.gz", "wt", encoding="utf-8") as handle:
        for i in range(16):
            for m in models:
                handle.write(json.dumps({"model": m, "idx": i, "generator": m, "output": f"{m} says {i}"}) + "\n")
    with gzip.open(ae / "judge_annotations_weighted_gpt4_turbo.jsonl.gz", "wt", encoding="utf-8") as handle:
        for i in range(16):
            for m in models[1:]:
                handle.write(json.dumps({"model": m, "idx": i, "generator_1": "gpt4_1106_preview", "generator_2": m,
                                         "preference": 1.25}) + "\n")  # fmt: skip
    return root


def test_no_training_row_from_a_default_model_or_the_evaluation_half(tmp_path):
    from crm_train.compositional.sources import annotation_pairs

    shared = fake_shared(tmp_path)
    pairs = annotation_pairs(shared)
    texts = [f"Instruction number {i}?" for i in range(16)]
    train_half = [t for t in texts if int(hashlib.sha256(t.encode()).hexdigest(), 16) % 2 == 0]
    assert pairs and {p.meta["model"] for p in pairs} == {"other-model"}
    assert sorted(p.prompt for p in pairs) == sorted(train_half)
    assert all(p.a.startswith("other-model") and p.reference == p.b for p in pairs)
    assert all(p.p_a == pytest.approx(0.25) for p in pairs)


def test_development_folds_cut_the_training_half_apart_from_the_half_itself():
    from crm_train.compositional.sources import alpaca_train_half, development_fold

    texts = [f"Instruction number {i}?" for i in range(400)]
    half = [t for t in texts if alpaca_train_half(t)]
    folds = [development_fold(t, 2) for t in half]
    assert set(folds) == {0, 1} and 0.4 < sum(folds) / len(folds) < 0.6  # a random cut, not the half's own parity
    assert [development_fold(t, 2) for t in half] == folds  # the same cut on every run
    assert {development_fold(t, 3) for t in texts} == {0, 1, 2}


@pytest.mark.shared_data
def test_real_training_sources_hold_no_alpaca_eval_instruction_outside_the_allowance(shared_data):
    from crm_core.data.importers import read_models_file
    from crm_train.compositional.sources import (
        alpaca_instructions,
        alpaca_train_half,
        annotation_pairs,
        answer_groups,  # fmt: skip
        human_pairs,
    )

    defaults = set(read_models_file(shared_data / "usl/alpaca_eval/default_models.txt"))
    alpaca = {t.strip() for t in alpaca_instructions(shared_data).values()}
    annotations = annotation_pairs(shared_data)
    assert len(annotations) > 10_000
    assert not {p.meta["model"] for p in annotations} & defaults
    assert all(alpaca_train_half(p.prompt) for p in annotations)
    assert not {p.prompt.strip() for p in human_pairs(shared_data, "train")} & alpaca
    assert not {prompt.strip() for prompt, _ in answer_groups(shared_data)} & alpaca


def test_tuned_criteria_layers_change_criteria_embeddings_only(compositional_crm, tmp_path):
    """A fitted top layer (criteria_layers.5.*) reads criteria; responses still go through the shared encoder."""
    import shutil

    from safetensors.numpy import load_file, save_file

    folder = tmp_path / "tuned"
    shutil.copytree(compositional_crm, folder)
    plain = load_crm(compositional_crm)
    layer = plain.encoder.model.encoder.layer[5].state_dict()
    params = load_file(folder / "heads.safetensors")
    rng = np.random.default_rng(0)
    params.update({f"criteria_layers.5.{k}": (v.numpy() + rng.normal(0, 0.05, v.shape)).astype(np.float32)
                   for k, v in layer.items()})  # fmt: skip
    save_file(params, str(folder / "heads.safetensors"))
    tuned = load_crm(folder)
    text = ["No emojis, please."]
    assert not np.allclose(tuned.criteria_encoder.encode(text), plain.encoder.encode(text), atol=1e-3)
    assert np.array_equal(tuned.encoder.encode(text), plain.encoder.encode(text))
    assert np.array_equal(plain.criteria_encoder.encode(text), plain.encoder.encode(text))


def test_tuned_quality_layers_change_the_quality_term_only(compositional_crm, tmp_path, monkeypatch):
    """Layers fine-tuned for quality (quality_layers.<i>.*, training/gpu) feed the quality term and its reference
    similarity; properties and voice still read the frozen encoder, and an embedding store keeps the tuned vectors
    under their own identity."""
    import shutil

    from crm_core.compositional.scorer import CompositionalScorer
    from safetensors.numpy import load_file, save_file

    folder = tmp_path / "quality-tuned"
    shutil.copytree(compositional_crm, folder)
    plain = load_crm(compositional_crm)
    params = load_file(folder / "heads.safetensors")
    rng = np.random.default_rng(1)
    for index in (4, 5):
        layer = plain.encoder.model.encoder.layer[index].state_dict()
        params.update({f"quality_layers.{index}.{k}": (v.numpy() + rng.normal(0, 0.05, v.shape)).astype(np.float16)
                       for k, v in layer.items()})  # fmt: skip
    save_file(params, str(folder / "heads.safetensors"))
    monkeypatch.setenv("USL_EMBEDDINGS", str(tmp_path / "store"))
    tuned = CompositionalScorer(folder)
    assert tuned.quality_encoder is not None and "-quality-" in tuned.quality_encoder.identity
    queries = ["Name a fruit.", "Name a fruit.", "Say hi."]
    answers = ["An apple.", "Bananas are yellow fruit.", "Hello there!"]
    panels = [["A pear.", "An apple."], ["A pear.", "An apple."], ["Hi!"]]
    before = CompositionalScorer(compositional_crm).response_side(queries, answers, panels)
    after = tuned.response_side(queries, answers, panels)
    assert not np.allclose(after.quality, before.quality, atol=1e-3)
    np.testing.assert_array_equal(after.z, before.z)
    np.testing.assert_allclose(after.voice, before.voice, atol=1e-6)
    stored = {p.parent.name for p in (tmp_path / "store").glob("*/part-*.npz")}
    assert stored == {tuned.encoder.identity, tuned.quality_encoder.identity}
    again = CompositionalScorer(folder).response_side(queries, answers, panels)  # from the store: the same side
    np.testing.assert_allclose(again.quality, after.quality, atol=1e-5)
    # vectors made elsewhere (a GPU run) go into the same store and are read, not encoded again
    from crm_core.encoder import EmbeddingStore

    outside = EmbeddingStore(tmp_path / "store", tuned.quality_encoder)
    made = np.eye(3, 384, dtype=np.float32)
    assert outside.put(["Made on a GPU.", "Also made there.", "Made on a GPU."], made) == 2
    assert outside.put(["Made on a GPU."], made[:1]) == 0  # already stored
    reread = EmbeddingStore(tmp_path / "store", tuned.quality_encoder).get(["Also made there.", "Made on a GPU."])
    np.testing.assert_array_equal(reread, made[[1, 0]])


def test_a_bench_without_the_reference_panel_compares_each_answer_with_its_other_answers(compositional_crm):
    """panels_of: the CRM's named panel where the bench holds its answers; elsewhere every answer of the bench to
    the same query (a leave-one-out consensus, its own skipped) at the CRM's consensus_scale."""
    from crm_core.compositional.scorer import CompositionalScorer
    from usl_space.instant import panels_of

    scorer = CompositionalScorer(compositional_crm)
    scorer.reference_models, scorer.serving = ["ref-a", "ref-b"], replace(scorer.serving, consensus_scale=0.5)
    outputs = {(0, "m1"): "Paris is the capital of France.", (0, "m2"): "The capital of France is Paris.",
               (0, "junk"): "Bananas are rich in potassium.", (1, "m1"): "Two.", (1, "m2"): "2"}  # fmt: skip
    keys = sorted(outputs)
    panels, scale = panels_of(scorer, keys, outputs)
    assert scale == 0.5 and panels[keys.index((0, "junk"))] == [outputs[(0, "junk")], outputs[(0, "m1")],
                                                               outputs[(0, "m2")]]  # fmt: skip
    named = {**outputs, (0, "ref-a"): "Paris.", (1, "ref-b"): "2."}
    named_panels, named_scale = panels_of(scorer, keys, named)
    assert named_scale == 1.0 and named_panels[keys.index((0, "m1"))] == ["Paris."]
    scorer.serving = replace(scorer.serving, consensus_scale=0.0)
    assert panels_of(scorer, keys, outputs)[0] == [[] for _ in keys]  # no panel, no consensus: nothing compared

    queries = ["What is the capital of France?"] * 3
    texts = [outputs[(0, m)] for m in ("m1", "m2", "junk")]
    alone = scorer.response_side(queries, texts)
    compared = scorer.response_side(queries, texts, [panels[0]] * 3, reference_scale=0.5)
    lift = compared.quality - alone.quality  # 0.5 x the refsim weight x mean cosine to the others
    assert lift[0] > lift[2] and lift[1] > lift[2]  # the outlier gains least from the consensus
    vecs = scorer.encoder.encode(texts)
    expected = 0.5 * scorer.heads.reference_weights["refsim_weight"] * (vecs[0] @ vecs[1] + vecs[0] @ vecs[2]) / 2
    assert "length_weight" not in scorer.heads.reference_weights  # this test CRM weighs similarity alone
    assert lift[0] == pytest.approx(expected, abs=0.02)


def test_the_own_panel_is_the_top_share_of_models_by_quality_above_each_querys_mean():
    """own_panel ranks models by their mean quality above the mean of each query's answers (no baseline), so a
    model that skipped the hard queries is not lifted by the easy ones; it keeps at least two models."""
    from usl_space.instant import own_panel

    keys = [(0, "a"), (0, "b"), (0, "c"), (0, "d"), (1, "a"), (1, "b"), (1, "c"), (1, "d"), (2, "b"), (2, "c")]
    # query 2 is easy (everyone high); "c" only looks good there, and "d" is the junk
    quality = np.array([2.0, 1.0, 0.0, -3.0, 1.0, 0.5, -0.5, -3.0, 9.0, 10.0])
    assert own_panel(quality, keys, 0.5) == ["a", "b"]
    assert own_panel(quality, keys, 0.75) == ["a", "b", "c"]
    assert own_panel(quality, keys, 0.1) == ["a", "b"]  # never fewer than two
    assert own_panel(quality + 5.0, keys, 0.5) == ["a", "b"]  # a shift of every answer changes nothing


def test_a_bench_without_the_reference_panel_is_compared_with_its_own_top_models(compositional_crm, tmp_path):
    """A bench that lacks the CRM's named panel is built twice: first each answer against every other answer to
    its query, then against the answers of the models own_panel picks from that first side; the table keeps the
    panel (saved and loaded with it), and a model added later is compared with that same panel."""
    from usl_space.instant import own_panel, panels_of, response_side_of

    scorer = CompositionalScorer(compositional_crm)
    scorer.reference_models = []
    scorer.serving = replace(scorer.serving, consensus_scale=0.5, panel_share=0.5)
    query = {0: "What is the capital of France?", 1: "How many legs does a spider have?"}
    answers = {"m1": ("Paris is the capital of France.", "A spider has eight legs."),
               "m2": ("The capital of France is Paris.", "Eight legs."),
               "m3": ("France's capital city is Paris, on the Seine.", "Spiders have 8 legs."),
               "junk": ("Bananas are rich in potassium.", "Bananas are rich in potassium.")}  # fmt: skip
    outputs = {(i, m): texts[i] for m, texts in answers.items() for i in query}
    keys = sorted(outputs)
    first = response_side_of(scorer, query, outputs, outputs)
    expected = own_panel(first.quality, keys, 0.5)
    table = ResponseTable.build(scorer, query, outputs, "ckpt", "bench")
    assert table.panel == expected and len(expected) == 2
    again = response_side_of(scorer, query, outputs, outputs, own=expected)
    np.testing.assert_allclose(table.side.quality, again.quality, atol=1e-4)
    panels, _ = panels_of(scorer, keys, outputs, expected)
    assert panels[keys.index((0, "junk"))] == [outputs[(0, m)] for m in expected]
    assert not np.allclose(table.side.quality, first.quality)  # the panel changed what quality compares with
    table.save(tmp_path / "side.npz")
    assert ResponseTable.load(tmp_path / "side.npz", "ckpt", "bench").panel == expected

    extra = {(i, "m4"): f"Answer {i}: {text}" for i, text in enumerate(answers["m1"])}
    grown = table.extended(scorer, query, extra, {**outputs, **extra})
    assert grown.panel == expected  # a model added joins the board, not the panel
    np.testing.assert_allclose(grown.side.quality[-2:], response_side_of(
        scorer, query, extra, {**outputs, **extra}, own=expected).quality, atol=1e-4)  # fmt: skip

    scorer.serving = replace(scorer.serving, panel_share=0.0)  # off: every answer, as before
    plain = ResponseTable.build(scorer, query, outputs, "ckpt", "bench")
    assert plain.panel is None
    np.testing.assert_allclose(plain.side.quality, first.quality, atol=1e-4)


def test_query_ids_file_is_read_and_bad_lines_are_named(tmp_path):
    from usl_space.rank_cli import read_query_ids

    good = tmp_path / "ids.txt"
    good.write_text("\ufeff# held-out half\n3\n\n1  # a comment\n3\n", encoding="utf-8")
    assert read_query_ids(str(good), {1, 2, 3}) == [1, 3]
    bad = tmp_path / "bad.txt"
    bad.write_text("1\nabc\n9\n", encoding="utf-8")
    with pytest.raises(ValueError) as error:
        read_query_ids(str(bad), {1, 2, 3})
    assert f"{bad}:2: expected a query id" in str(error.value) and f"{bad}:3: query id 9 is not on the bench" in str(
        error.value
    )
    (tmp_path / "empty.txt").write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no query ids"):
        read_query_ids(str(tmp_path / "empty.txt"), {1})


def test_the_app_says_how_it_read_the_criteria(compositional_crm, tmp_path):
    from usl_space.views import reading

    engine = toy_engine(compositional_crm, ScoreCache(tmp_path / "e.sqlite"))
    board = engine.rank(["<b>No emojis</b>"], ["$\\\\undefined$"], bootstrap=50)  # the board carries its reading
    text = reading(board)
    assert text.startswith("\n\nRead your criteria as:") and "<b>" not in text and "undefined" not in text
    weights = engine.scorer.criteria_side(["<b>No emojis</b>"], ["$\\\\undefined$"]).explain()
    assert weights and all(f"{name} {weight:+.1f}" in text for name, weight in weights)
    assert board.to_json()["reading"]["weights"] == dict(weights)  # usl-rank's JSON says it too
    assert reading(engine.rank([], bootstrap=50)) == "" and "reading" not in engine.rank([], bootstrap=50).to_json()


def test_reference_boost_keeps_the_quality_spread_and_moves_weight_to_the_reference():
    import torch
    from crm_train.compositional.train import QualityNet, boost_reference, centred_std

    torch.manual_seed(0)
    net = QualityNet(8, 16)
    x, sim = torch.randn(60, 8), torch.rand(60)
    prompts = [f"p{i % 6}" for i in range(60)]
    before = net(x, sim).detach().numpy()
    log = boost_reference(net, {"xa": x, "sa": sim}, prompts, list(range(60)), 30.0)
    after = net(x, sim).detach().numpy()
    assert centred_std(after, prompts) == pytest.approx(centred_std(before, prompts), rel=1e-5)
    assert float(net.refsim_weight) == pytest.approx(log["refsim_weight"], abs=1e-4) and log["scale"] < 1
    # the reference now decides more of the order within a prompt than the network does
    head = net.quality(x)[:, 0].detach().numpy()
    assert centred_std(float(net.refsim_weight) * sim.numpy(), prompts) > centred_std(head, prompts)
    unchanged = QualityNet(8, 16)
    assert boost_reference(unchanged, {"xa": x, "sa": sim}, prompts, list(range(60)), 0.0)["scale"] == 1.0


@pytest.mark.slow
def test_uploads_are_freed_when_the_visitor_leaves(compositional_crm, tmp_path):
    engine = toy_engine(compositional_crm, ScoreCache(tmp_path / "u.sqlite"))
    for k in range(20):  # 20 visitors, one upload each, who come and go
        outputs = {idx: f"upload {k}: my answer to query {idx}" for idx in engine.query}
        board = engine.with_model(f"upload:v{k}", outputs).rank([])
        assert f"upload:v{k}" in {row["model"] for row in board.rows} and len(engine._uploads) == 1
        engine.forget_uploads({f"upload:v{k}": outputs})
        assert not engine._uploads


def test_the_shipped_encoder_derives_its_weights_from_the_package_and_checks_them(tmp_path):
    import json
    import shutil

    from crm_core.encoder import TextEncoder, make_lean, write_encoder

    shipped = REPO / "space" / "models" / "crm-compositional" / "encoder"
    assert not (shipped / "model.safetensors").exists()  # the folder stays small: weights come from the package
    full = write_encoder(tmp_path / "full", max_tokens=32)
    lean = tmp_path / "lean"
    shutil.copytree(full, lean)
    assert make_lean(lean) and not (lean / "model.safetensors").exists()
    texts = ["No emojis, please.", "Here is a table 🎉"]
    assert np.array_equal(TextEncoder(full).encode(texts), TextEncoder(lean).encode(texts))
    meta = json.loads((lean / "encoder.json").read_text())
    meta["weights_sha256"] = "0" * 16  # as if another package version were installed
    (lean / "encoder.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="not the ones this encoder was made with"):
        TextEncoder(lean)


def test_a_criterion_the_form_gate_reads_as_general_moves_no_property():
    """The gate drops a general criterion's property weights whole (no small ones left to flip close decisions),
    leaves its voice, and leaves a criterion it reads as being about a property exactly as it was."""
    from crm_core.compositional.heads import CompositionalHeads

    k, r = len(NAMES), 4
    identity = np.zeros((k + r, 384), np.float32)
    identity[:, : k + r] = np.eye(k + r)
    gate = np.zeros((1, 384), np.float32)
    gate[0, 383] = 1.0  # the gate reads the last input dimension
    params = {"spread": np.ones(k), "voice_proj": np.zeros((r, 384)), "criteria.0.weight": identity,
              "criteria.0.bias": np.zeros(k + r), "form_gate.0.weight": gate,
              "form_gate.0.bias": np.zeros(1)}  # fmt: skip
    rows = np.zeros((2, 384), np.float32)
    rows[:, :k] = np.random.default_rng(0).normal(0, 1.0, (2, k))
    rows[:, k : k + r] = 1.0
    rows[0, 383], rows[1, 383] = 2.0, -2.0  # about a property; general
    heads = CompositionalHeads(params, ServingConfig.off())
    about, general = heads.criteria_side(rows[:1]), heads.criteria_side(rows[1:])
    assert np.allclose(about.weights, rows[0, :k]) and (general.weights == 0).all()
    assert np.allclose(general.voice, 1.0) and np.allclose(about.voice, 1.0)
    cut = replace(ServingConfig.off(), form_gate_cut=3.0)
    assert (CompositionalHeads(params, cut).criteria_side(rows[:1]).weights == 0).all()


def test_several_criteria_fits_average_their_readings_before_the_cut(compositional_crm, tmp_path):
    """Two fits: raw weights and gate logits are averaged, then cut, so a weight only one fit gives falls under the
    cut that it would pass alone; voices stand side by side at half weight. Saved and loaded, each fit reads the
    criteria with its own re-tuned layer."""
    from crm_core.compositional.heads import CompositionalHeads, member_prefix, mlp
    from safetensors.numpy import load_file, save_file

    k, r = len(NAMES), 4
    identity = np.zeros((k + r, 384), np.float32)
    identity[:, : k + r] = np.eye(k + r)
    gate = np.zeros((1, 384), np.float32)
    gate[0, 383] = 1.0
    member = {"voice_proj": np.eye(r, 384, dtype=np.float32), "criteria.0.weight": identity,
              "criteria.0.bias": np.zeros(k + r), "form_gate.0.weight": gate,
              "form_gate.0.bias": np.zeros(1)}  # fmt: skip
    params = {"spread": np.ones(k)} | member | {member_prefix(1) + key: v for key, v in member.items()}
    thresholded = replace(ServingConfig.off(), weight_threshold=0.25)
    heads = CompositionalHeads(params, thresholded)
    assert len(heads.members) == 2 and heads.rank == 2 * r
    one, other = np.zeros((1, 384), np.float32), np.zeros((1, 384), np.float32)
    one[0, :3], other[0, :3] = (1.0, 0.4, -0.8), (0.6, 0.0, -0.8)  # both read property 0 and 2; only one reads 1
    one[0, k : k + r], other[0, k : k + r] = 1.0, 3.0
    one[0, 383], other[0, 383] = 3.0, -1.0  # the gate: mean logit 1 opens it, alone the second would close it
    both = heads.criteria_side([one, other])
    assert np.allclose(both.weights[:3], (0.55, 0.0, -0.55)) and (both.weights[3:] == 0).all()
    alone = CompositionalHeads({"spread": np.ones(k)} | member, thresholded).criteria_side(one)
    assert np.allclose(alone.weights[:3], (0.75, 0.15, -0.55))
    assert np.allclose(both.voice, [0.5] * r + [1.5] * r)
    side = heads.response_side(np.zeros((2, 384)), np.eye(2, 384), np.zeros((2, k)))
    assert side.voice.shape == (2, 2 * r) and np.allclose(side.voice[:, :r], side.voice[:, r:])
    with pytest.raises(ValueError, match="hold 2 criteria fits; got embeddings for 1"):
        heads.criteria_side(one)
    # a folder with two fits: the second reads criteria through its own (perturbed) top layer
    folder = tmp_path / "two"
    shutil.copytree(compositional_crm, folder)
    saved = load_file(folder / "heads.safetensors")
    layer = load_crm(compositional_crm).encoder.model.encoder.layer[5].state_dict()
    noise = np.random.default_rng(1)
    second = {key: v for key, v in saved.items() if key.startswith(("criteria.", "voice_proj"))}
    second |= {f"criteria_layers.5.{key}": (v.numpy() + noise.normal(0, 0.05, v.shape)).astype(np.float32)
               for key, v in layer.items()}  # fmt: skip
    save_file(saved | {member_prefix(1) + key: v for key, v in second.items()}, folder / "heads.safetensors")
    single, double = load_crm(compositional_crm), load_crm(folder)
    assert len(double.criteria_encoders) == 2 and double.heads.rank == 2 * single.heads.rank
    assert double.criteria_encoders[0] is double.encoder and double.criteria_encoders[1] is not double.encoder
    text = "No emojis, please."
    vecs = double._criteria_cache(text)
    assert np.array_equal(vecs[0], single.encoder.encode([text])[0]) and not np.allclose(vecs[0], vecs[1], atol=1e-3)
    assert np.array_equal(double.encoder.encode([text]), single.encoder.encode([text]))  # responses untouched
    crit = double.criteria_side([text])
    raw = [mlp(double.heads.members[m], "criteria", vecs[m][None])[0, :k] for m in range(2)]
    assert np.allclose(crit.weights, np.mean(raw, axis=0), atol=1e-5)  # the test folder has no cut


def test_the_stray_penalty_counts_only_weights_a_phrasing_is_not_about():
    """A bank phrasing's own property is free; its others, and all of a general criterion's, are penalised."""
    from crm_train.compositional.criteria_fit import stray_weights

    k = len(NAMES)
    w = torch.zeros(4, k)
    w[0, 3] = w[3, 5] = 2.0  # bank rows 0 and 3 on their own property: free
    assert float(stray_weights(w, np.array([3, -1, -1, 5]))) == 0.0
    w[1, 3] = 2.0  # a general criterion (rows 1-2, about -1) with a weight: penalised
    w[3, 4] = 1.0  # bank row 3 on a property it is not about
    assert float(stray_weights(w, np.array([3, -1, -1, 5]))) == pytest.approx((4.0 + 1.0) / (4 * k))


def test_the_response_side_encodes_each_distinct_text_once(compositional_crm):
    """A bench repeats some answers verbatim and holds the reference model's own answers: none is encoded twice."""
    crm = load_crm(compositional_crm)
    rows: list[int] = []
    hook = crm.encoder.model.register_forward_pre_hook(lambda _m, _a, kw: rows.append(len(kw["input_ids"])),
                                                       with_kwargs=True)  # fmt: skip
    a, b = "The answer is two.", "Two, because one plus one is two."
    try:
        side = crm.response_side(["Count to two"] * 3, [a, a, b], [[a], [a], [a]])
    finally:
        hook.remove()
    assert sum(rows) == 3  # the query, then a and b; the reference a comes from the responses
    assert np.allclose(side.quality[0], side.quality[1])
    fresh = crm.response_side(["Count to two"], [b], [[a]])  # the reference encoded on its own: the same numbers
    assert side.quality[2] == pytest.approx(fresh.quality[0], abs=1e-4)


@pytest.mark.slow
def test_the_criteria_fit_learns_the_form_gate_and_the_stray_penalty_holds_other_weights_down(tmp_path):
    """A short criteria fit on the real encoder and synthetic answers: the gate tells the bank's phrasings from the
    general criteria it was shown, and the stray penalty leaves smaller weights on properties a phrasing is not
    about than the same fit without it."""
    from crm_core.encoder import TextEncoder
    from crm_train.compositional import phrasings as P
    from crm_train.compositional.config import CompositionalConfig
    from crm_train.compositional.criteria_fit import CriteriaData, fit_criteria, phrase_table

    encoder = TextEncoder(write_encoder(tmp_path / "encoder", max_tokens=32))
    bank = [p for p in P.training_bank(0, 0.0) if p.prop in ("emoji", "bullets") and "{" not in p.text][::6]
    general = P.silent_criteria()[:12]
    states, mask, general_idx, dsp_phr = phrase_table(encoder, bank, general, 1)
    rng = np.random.default_rng(0)
    n, k = 60, len(NAMES)
    z = rng.normal(0, 1.0, (n, k)).astype(np.float32)
    quality = rng.normal(0, 0.1, n).astype(np.float32)
    clear = {NAMES.index(p): [(i, i + 1) if z[i, NAMES.index(p)] > z[i + 1, NAMES.index(p)] else (i + 1, i)
                              for i in range(0, n, 2)] for p in ("emoji", "bullets")}  # fmt: skip
    vec = rng.normal(0, 0.05, (n, 384)).astype(np.float32)
    dsp = [(d, 2 * d, 2 * d + 1) for d in range(4)]
    data = CriteriaData(z, vec, quality, quality, 0.1, clear, dsp, bank, states, mask, general_idx, None, dsp_phr)

    def fit(stray: float):
        config = CompositionalConfig(criteria_steps=120, criteria_phrasings=16, stray_penalty=stray,
                                     form_gate_weight=1.0, criteria_hidden=64, voice_rank=2)  # fmt: skip
        net, _ = fit_criteria(data, encoder, config)
        with torch.no_grad():
            return net(states, mask)

    own = torch.tensor([NAMES.index(p.prop) for p in bank])
    w, _, gate = fit(10.0)
    assert (gate[: len(bank)] > 0).all() and (gate[general_idx] < 0).all()
    w0, _, _ = fit(0.0)

    def stray(weights: torch.Tensor) -> float:
        bank_w = weights[: len(bank)].clone()
        bank_w[torch.arange(len(bank)), own] = 0.0
        return float(bank_w.abs().mean() + weights[general_idx].abs().mean())

    assert stray(w) < 0.7 * stray(w0)
    assert float(w[torch.arange(len(bank)), own].abs().mean()) > 3 * stray(w)  # the weights that do the job stay


def test_the_compositional_kind_is_a_scorer(tmp_path):
    """load_crm returns a crm_core.spec.Scorer for each kind (the protocol the engine and CLIs type against)."""
    from conftest import random_compositional_crm
    from crm_core.spec import Scorer

    compositional = load_crm(random_compositional_crm(tmp_path / "c"))
    assert isinstance(compositional, Scorer)
    assert not isinstance(object(), Scorer)  # the check is real: a thing without the calls is not one
