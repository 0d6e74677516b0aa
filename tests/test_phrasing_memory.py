"""The phrasing memory: a criterion read by the training phrasings it sounds most like, where those agree."""

from __future__ import annotations

import shutil
from dataclasses import replace

import numpy as np
import pytest
from conftest import random_compositional_crm
from crm_core.compositional.memory import GENERAL, MEMORY_FILE, PhrasingMemory, label_of, quantize
from crm_core.properties import NAMES

K = len(NAMES)
WORDS, EMOJI = NAMES.index("words"), NAMES.index("emoji")


def unit(*values: float) -> np.ndarray:
    v = np.zeros(8, np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def toy_memory() -> PhrasingMemory:
    """Ten phrasings near axis 0 asking for shorter answers (8) or more emoji (2); ten general ones near axis 1."""
    near_short = [unit(1, 0.05 * i) for i in range(10)]
    near_general = [unit(0.05 * i, 1) for i in range(10)]
    labels = [label_of(WORDS, -1)] * 8 + [label_of(EMOJI, +1)] * 2 + [GENERAL] * 10
    magnitude = np.full((K, 2), 1.0, np.float32)
    magnitude[WORDS] = [2.5, 3.0]
    return PhrasingMemory(
        quantize(np.stack(near_short + near_general)),
        np.array(labels, np.int16),
        magnitude,
        neighbours=10,
        agreement=0.7,
        similarity=0.6,
    )


def test_the_memory_reads_only_where_the_nearest_phrasings_agree_and_are_near():
    memory = toy_memory()
    assert memory.read(unit(1, 0.2)) == (WORDS, -1)  # 8 of the 10 nearest are about length, all asking for less
    assert memory.read(unit(0.1, 1)) is None  # the nearest agree that it is general
    assert memory.read(unit(0, 0, 1)) is None  # nothing near: cosine under 0.6
    split = PhrasingMemory(memory.vectors, memory.labels, memory.magnitude, neighbours=10, agreement=0.9)
    assert split.read(unit(1, 0.2)) is None  # 8 of 10 is under 90%


def test_the_direction_can_come_from_more_phrasings_about_the_property_than_the_vote_holds():
    """Three nearest phrasings agree on length, two of them asking for more: alone they would give "more"; the five
    nearest phrasings about length (three of them further away, all asking for less) give "less". The rule is a
    serving choice: `with_rule` reads the same vectors by another rule, 0 keeping the memory's own."""
    vectors = [unit(1, 0.01), unit(1, 0.02), unit(1, 0.03), *(unit(1, 0.3 + 0.05 * i) for i in range(3)),
               *(unit(0.05 * i, 1) for i in range(6))]  # fmt: skip
    labels = [label_of(WORDS, 1), label_of(WORDS, 1), label_of(WORDS, -1), *[label_of(WORDS, -1)] * 3,
              *[GENERAL] * 6]  # fmt: skip
    magnitude = np.full((K, 2), 1.0, np.float32)
    few = PhrasingMemory(quantize(np.stack(vectors)), np.array(labels, np.int16), magnitude, 3, 0.7, 0.6)
    assert few.read(unit(1, 0)) == (WORDS, 1)
    wider = few.with_rule(direction_neighbours=5)
    assert wider.read(unit(1, 0)) == (WORDS, -1)
    assert (wider.neighbours, wider.agreement, wider.similarity) == (3, pytest.approx(0.7), pytest.approx(0.6))
    assert few.with_rule() is few and few.direction_neighbours == 0  # 0 everywhere: its own rule, itself
    assert few.with_rule(neighbours=12).read(unit(1, 0)) is None  # 6 of 12 agree on length: under 70%


def test_the_heads_read_criteria_by_the_serving_settings_memory_rule():
    """crm.json's `memory_*` choose the rule a folder's memory is read by (the file keeps the rule it was built
    with); the memory under a rule is made once, and again when the rule or the memory changes."""
    from crm_core.compositional.heads import CompositionalHeads
    from crm_core.compositional.serving import ServingConfig

    heads = object.__new__(CompositionalHeads)  # only the memory and the serving settings matter here
    heads.memory, heads._ruled = toy_memory(), None
    heads.serving = ServingConfig.off()  # every memory_* 0: the file's own rule
    assert heads.ruled_memory is heads.memory
    heads.serving = replace(ServingConfig.off(), memory_neighbours=4, memory_direction_neighbours=9)
    ruled = heads.ruled_memory
    assert (ruled.neighbours, ruled.direction_neighbours, ruled.similarity) == (4, 9, pytest.approx(0.6))
    assert heads.ruled_memory is ruled  # made once
    heads.memory = toy_memory()
    assert heads.ruled_memory is not ruled and heads.ruled_memory.neighbours == 4


def test_a_sentence_the_memory_holds_is_read_as_labelled_whatever_its_neighbours_vote():
    """A training sentence such as "Don't write an essay." may have another property's phrasings for neighbours:
    the memory knows its label, so it is read as labelled (typed with another case or without the stop too), and a
    reader that already reads it so is left alone; a sentence it does not hold goes to the vote."""
    from crm_core.compositional.memory import text_key

    base = toy_memory()
    texts = [f"short {i}" for i in range(8)] + ["More emoji, please.", "Emoji everywhere."]
    texts += [f"general {i}" for i in range(10)]
    keys = np.array([text_key(t) for t in texts], np.int64)
    memory = PhrasingMemory(base.vectors, base.labels, base.magnitude, 10, 0.7, 0.6, keys)
    emoji_text, emoji_vector = "Emoji everywhere.", unit(1, 0.45)
    assert memory.read(emoji_vector) == (WORDS, -1)  # the vote alone: eight of its ten nearest are about length
    assert memory.held(emoji_text) == memory.held("  emoji EVERYWHERE") == (EMOJI, 1)
    assert memory.held("Emoji nowhere.") is None and memory.held("general 3") is None  # not held; held as general
    greeting = np.zeros(K, np.float32)
    greeting[NAMES.index("greeting")] = 0.4
    replaced = memory.override(greeting, emoji_vector, emoji_text)
    assert replaced[EMOJI] == pytest.approx(1.0) and np.count_nonzero(replaced) == 1
    assert memory.override(greeting, emoji_vector)[WORDS] == pytest.approx(-2.5)  # no text: the vote
    right = np.zeros(K, np.float32)
    right[EMOJI], right[WORDS] = 0.8, -0.3
    assert np.array_equal(memory.override(right, emoji_vector, emoji_text), right)
    assert memory.override(-right, emoji_vector, emoji_text)[EMOJI] == pytest.approx(1.0)  # the label's direction
    without_keys = PhrasingMemory(base.vectors, base.labels, base.magnitude, 10, 0.7, 0.6)
    assert without_keys.held(emoji_text) is None  # a file made before keys: every sentence by the vote


def test_the_memory_overrides_a_misread_property_and_the_reader_keeps_the_direction():
    memory = toy_memory()
    sentence = unit(1, 0.2)
    greeting = np.zeros(K, np.float32)
    greeting[NAMES.index("greeting")] = 0.4
    replaced = memory.override(greeting, sentence)
    assert replaced[WORDS] == pytest.approx(-2.5) and np.count_nonzero(replaced) == 1
    assert memory.override(np.zeros(K, np.float32), sentence)[WORDS] == pytest.approx(-2.5)  # read as nothing
    weak_but_right = np.zeros(K, np.float32)
    weak_but_right[WORDS], weak_but_right[EMOJI] = -0.9, 0.3
    assert np.array_equal(memory.override(weak_but_right, sentence), weak_but_right)
    # the reader tells the direction: it stands where the reader reads the property, and sets the override's sign
    # where the reader gives the property a weight that is not its strongest
    wrong_way = -weak_but_right
    assert np.array_equal(memory.override(wrong_way, sentence), wrong_way)
    greeting_and_longer = greeting.copy()
    greeting_and_longer[WORDS] = 0.3
    replaced = memory.override(greeting_and_longer, sentence)
    assert replaced[WORDS] == pytest.approx(3.0) and np.count_nonzero(replaced) == 1
    assert np.array_equal(memory.override(greeting, unit(0.1, 1)), greeting)  # general: the reader stands


def test_a_saved_memory_loads_the_same_and_leaves_no_partial_file(tmp_path):
    memory = toy_memory()
    memory.keys = np.arange(len(memory.labels), dtype=np.int64) * 7919
    memory.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [MEMORY_FILE]
    loaded = PhrasingMemory.load(tmp_path)
    assert loaded is not None and np.array_equal(loaded.vectors, memory.vectors)
    assert loaded.keys is not None and np.array_equal(loaded.keys, memory.keys)
    assert (loaded.neighbours, loaded.agreement, loaded.similarity) == (10, pytest.approx(0.7), pytest.approx(0.6))
    assert PhrasingMemory.load(tmp_path / "elsewhere") is None


def test_a_built_memory_is_served_and_changes_the_checkpoint_identity(tmp_path):
    """build_memory on a real (random-headed) CRM folder: every training phrasing is stored with its label; the
    scorer then reads criteria through it, and the score cache no longer serves boards read without it."""
    from crm_core.compositional.scorer import CompositionalScorer
    from crm_train.compositional.memory import build_memory, memory_phrasings
    from usl_space.cache import checkpoint_id

    folder = random_compositional_crm(tmp_path / "c")
    before = checkpoint_id(folder, "heads.safetensors")
    texts, labels = memory_phrasings(tmp_path / "no-shared-data")
    assert len(texts) > 10_000 and (labels == GENERAL).sum() > 40 and len(set(labels.tolist())) > 2 * 20
    # asking for shorter answers, and general criteria: quicker to encode, and "Keep it brief." then has neighbours
    # that agree (MiniLM's embedding tells the property apart far better than the direction)
    keep = np.flatnonzero((labels == label_of(WORDS, -1)) | (labels == GENERAL))
    texts, labels = [texts[i] for i in keep], labels[keep]
    memory = build_memory(folder, texts, labels, per_label=2, backend="torch", progress=False)
    assert len(memory.vectors) == len(texts) and np.array_equal(memory.labels, labels)
    assert checkpoint_id(folder, "heads.safetensors") != before
    scorer = CompositionalScorer(folder)
    assert scorer.heads.memory is not None
    # the memory reads it as its neighbours are labelled, where the reader (random heads here) says otherwise
    text = "Keep it brief."
    assert scorer.heads.memory.read(scorer.encoder.encode([text])[0]) == (WORDS, -1)
    weights = scorer.criteria_side([text]).weights
    assert int(np.argmax(np.abs(weights))) == WORDS
    assert scorer.heads.memory.held("keep it brief") == (WORDS, -1)  # and holds the sentence itself, with its label
    assert scorer.heads.memory.held("Keep it brief, but friendly.") is None
    without = tmp_path / "without"
    shutil.copytree(folder, without)
    (without / MEMORY_FILE).unlink()
    assert CompositionalScorer(without).heads.memory is None
    with pytest.raises(ValueError, match="extend"):  # nothing to grow
        build_memory(without, texts, labels, backend="torch", progress=False, extend=True)
    # grown for the same readers over a grown bank: the vectors and weights it had are kept, the new one encoded
    memory.magnitude = memory.magnitude + 0.5
    memory.vectors = memory.vectors // 2  # not what the encoder gives: only kept vectors look like this
    memory.gain = np.ones_like(memory.magnitude) + (np.arange(memory.magnitude.size) % 3).reshape(-1, 2)
    memory.save(folder)
    grown_texts = [texts[0], "Answer in two short lines.", *texts[1:]]
    grown_labels = np.insert(labels, 1, label_of(WORDS, -1))
    grown = build_memory(folder, grown_texts, grown_labels, backend="torch", progress=False, extend=True)
    assert np.array_equal(np.delete(grown.vectors, 1, axis=0), memory.vectors)
    assert np.array_equal(grown.magnitude, memory.magnitude) and np.array_equal(grown.gain, memory.gain)  # same readers
    fresh = quantize(scorer.encoder.encode(["Answer in two short lines."]))[0]
    assert np.abs(grown.vectors[1].astype(int) - fresh).max() <= 1 and grown.held("answer in two short lines")


def test_a_soft_criterion_weighs_the_same_whatever_its_wording_and_a_must_counts_as_read(tmp_path):
    """soft_strength: the strongest weight of a soft criterion becomes soft_strength x the readers' weight for
    training phrasings of that property and direction (the memory's magnitude), the others in proportion; a reading
    weaker than lift_from, or spread over several properties (lift_share), is not lifted; a must sentence counts
    as read."""
    from crm_core.compositional.scorer import CompositionalScorer

    scorer = CompositionalScorer(random_compositional_crm(tmp_path / "c"))
    heads = scorer.heads
    toy = toy_memory()
    far_away = np.zeros((len(toy.vectors), 384), np.int8)  # nothing a real sentence is near: the memory never reads
    far_away[:, :8] = toy.vectors
    heads.memory = PhrasingMemory(far_away, toy.labels, toy.magnitude)
    strong, weak, stray = (np.zeros(K, np.float32) for _ in range(3))
    strong[WORDS], strong[EMOJI] = -3.5, 0.7
    weak[WORDS] = -0.8
    stray[EMOJI] = 0.3
    texts = ["Keep it brief.", "Never use emojis."]
    read = [scorer.criteria_side([t]).weights for t in texts]
    assert np.abs(read[0]).max() > 0  # the random heads read something: there is a strength to set
    # every soft reading set to the strength
    heads.serving = replace(heads.serving, soft_strength=0.6, lift_from=0.0, lift_share=0.0)
    memory = heads.memory
    shrunk = memory.at_strength(strong, 0.6, 0.5)
    assert shrunk[WORDS] == pytest.approx(-0.6 * 2.5) and shrunk[EMOJI] == pytest.approx(0.7 * 1.5 / 3.5)
    assert memory.at_strength(weak, 0.6, 0.5)[WORDS] == pytest.approx(-1.5)  # lifted
    assert np.array_equal(memory.at_strength(stray, 0.6, 0.5), stray)  # a stray weight stays weak
    diffuse = np.zeros(K, np.float32)
    diffuse[WORDS], diffuse[EMOJI] = 0.8, 0.7  # the reader unsure what the sentence asks for
    assert memory.at_strength(diffuse, 0.6, 0.5)[WORDS] == pytest.approx(0.6 * 3.0)  # lifted without a share
    assert np.array_equal(memory.at_strength(diffuse, 0.6, 0.5, 0.7), diffuse)  # 0.8 / 1.5 < 0.7: left as read
    assert memory.at_strength(strong, 0.6, 0.5, 0.7)[WORDS] == pytest.approx(-1.5)  # a cap applies whatever the share
    assert memory.at_strength(weak, 0.6, 0.5, 0.7)[WORDS] == pytest.approx(-1.5)  # one property: share 1
    # what the app tells a visitor: the readings left as read are unsure, the same before and after at_strength
    assert memory.unsure(diffuse, 0.6, 0.5, 0.7) and memory.unsure(stray, 0.6, 0.5)
    assert not memory.unsure(weak, 0.6, 0.5, 0.7) and not memory.unsure(strong, 0.6, 0.5, 0.7)
    assert not memory.unsure(memory.at_strength(weak, 0.6, 0.5, 0.7), 0.6, 0.5, 0.7)
    nothing = np.zeros(K, np.float32)
    assert not memory.unsure(nothing, 0.6, 0.5, 0.7)  # nothing read: not unsure, unread
    assert np.array_equal(memory.at_strength(nothing, 0.6, 0.5, 0.7), nothing)
    soft, must = (scorer.criteria_side([t]).weights for t in texts)
    assert np.allclose(must, read[1])  # "never": a hard requirement, as read
    k = int(np.argmax(np.abs(read[0])))
    expected = 0.6 * float(memory.magnitude[k, int(read[0][k] > 0)])
    assert abs(soft[k]) == pytest.approx(expected) and np.allclose(soft / soft[k], read[0] / read[0][k])


def test_a_gain_scales_the_readers_raw_weights_by_direction_and_is_saved_with_the_memory(tmp_path):
    """The memory file's gain: the heads multiply the readers' raw weight for each property by its gain in the
    weight's direction, before the threshold, so a weakly read property survives it; a folder whose memory has
    one is served with it, and the gain stays when the memory is set aside (the readers' weights are measured so)."""
    from crm_core.compositional.scorer import CompositionalScorer

    folder = random_compositional_crm(tmp_path / "c")
    scorer = CompositionalScorer(folder)
    scorer.heads.serving = replace(scorer.heads.serving, soft_strength=0.0, weight_threshold=0.0)
    text = ["Use emojis, never bullet points."]
    read = scorer.criteria_side(text).weights
    assert scorer.heads.gain is None and np.abs(read).max() > 0 and (read > 0).any() and (read < 0).any()
    gain = np.ones((K, 2), np.float32)
    gain[:, 1] = 3.0  # weights for more of a property, tripled ...
    scorer.heads.gain = gain
    tripled = np.where(read > 0, 3.0 * read, read)
    top = int(np.argmax(np.abs(tripled)))  # ... on what the sentence is most about; the others stay as read
    expected = read.copy()
    expected[top] = tripled[top]
    assert np.allclose(scorer.criteria_side(text).weights, expected, atol=1e-6)
    scorer.heads.serving = replace(scorer.heads.serving, weight_threshold=0.25)
    scorer.heads.gain = None
    thresholded = scorer.criteria_side(text).weights
    weak = int(np.argmin(np.where(read != 0, np.abs(read), np.inf)))  # the weakest reading: under the threshold
    assert thresholded[weak] == 0
    gain = np.ones((K, 2), np.float32)
    gain[weak] = 100.0
    scorer.heads.gain = gain
    assert scorer.criteria_side(text).weights[weak] != 0  # lifted before the threshold, it survives it
    far_away = np.zeros((len(toy_memory().vectors), 384), np.int8)  # the memory never reads a real sentence
    far_away[:, :8] = toy_memory().vectors
    replace(toy_memory(), vectors=far_away, gain=gain).save(folder)
    served = CompositionalScorer(folder)
    assert served.heads.gain is not None and np.array_equal(served.heads.gain, gain)
    served.heads.memory = None
    assert served.heads.gain is not None


def test_the_needed_weight_decides_the_asked_share_of_clear_pairs_and_lifts_only_weak_readers():
    """needed_weights: per property and direction, the least weight under which the side asked for wins the share
    of clearly differing pairs against the quality term; reader_gains lifts the readers' weight to a factor of it."""
    from types import SimpleNamespace

    from crm_train.compositional.features import Groups
    from crm_train.compositional.memory import needed_weights, reader_gains

    # five prompts, two answers each; the second answer has 2 units more emoji; quality favours it by 1, 1, 1, 1, -3
    n = 5
    phi = np.zeros((2 * n, K), np.float32)
    phi[1::2, EMOJI] = 2.0
    quality = np.zeros(2 * n)
    quality[1::2] = [1, 1, 1, 1, -3]
    groups = Groups([f"p{i}" for i in range(n)], ["a", "b"] * n, [f"t{i}" for i in range(2 * n)],
                    np.repeat(np.arange(n), 2), np.zeros((2 * n, 4)), np.zeros((2 * n, 4)), phi)  # fmt: skip
    scorer = SimpleNamespace(heads=SimpleNamespace(spread=np.ones(K, np.float32)),
                             response_side=lambda prompts, texts: SimpleNamespace(quality=quality))  # fmt: skip
    needed = needed_weights(scorer, groups, decides=0.85, gap=1.5, least_pairs=5)
    # more emoji: w x 2 must beat -3 in the fifth pair too (4 of 5 is under 0.85): 1.5; less: beat +1: 0.5
    assert needed[EMOJI, 1] == pytest.approx(1.5) and needed[EMOJI, 0] == pytest.approx(0.5)
    assert np.isnan(needed[WORDS]).all()  # no pair differs in length
    assert np.isnan(needed_weights(scorer, groups, least_pairs=6)[EMOJI]).all()  # too few pairs to say
    magnitude = np.full((K, 2), 1.0, np.float32)
    gain = reader_gains(magnitude, needed, factor=2.0)
    assert gain[EMOJI].tolist() == pytest.approx([1.0, 3.0]) and (gain[WORDS] == 1.0).all()
    assert reader_gains(magnitude, needed, factor=100.0, cap=20.0)[EMOJI, 1] == 20.0


def test_a_gained_memory_lifts_only_where_the_readers_fall_short_and_leaves_the_scorer_as_it_was(tmp_path):
    """gained_memory on a real (random-headed) CRM folder, as crm-train runs it after a fit: the gain is 1 or more,
    1 for the properties counted at full weight and where the readers read no phrasing right, the magnitudes kept
    where nothing is lifted; the scorer keeps its own memory."""
    from crm_core.compositional.scorer import FULL_WEIGHT, CompositionalScorer
    from crm_core.encoder import EmbeddingStore
    from crm_train.compositional.features import Features, make_groups
    from crm_train.compositional.memory import build_memory, gained_memory, memory_phrasings

    folder = random_compositional_crm(tmp_path / "c")
    texts, labels = memory_phrasings(tmp_path / "no-shared-data")
    keep = np.flatnonzero((labels == label_of(WORDS, -1)) | (labels == label_of(WORDS, 1)) | (labels == GENERAL))
    texts, labels = [texts[i] for i in keep][:300], labels[keep][:300]
    build_memory(folder, texts, labels, per_label=3, backend="torch", progress=False)
    scorer = CompositionalScorer(folder)
    memory = scorer.heads.memory
    scorer.store = EmbeddingStore(tmp_path / "store", scorer.encoder)
    answers = {f"m{n}": " ".join(["word"] * 4**n) for n in range(6)}  # 1 to 1,024 words: length pairs differ clearly
    groups = make_groups([(f"Question {q}?", answers) for q in range(3)], Features(scorer.store))
    gained = gained_memory(scorer, texts, labels, groups, factor=50.0, least_share=0.0, per_label=3, progress=False)
    assert gained.gain is not None and gained.gain.shape == memory.magnitude.shape and (gained.gain >= 1).all()
    assert (gained.gain[list(FULL_WEIGHT)] == 1).all()
    assert (gained.gain[np.arange(K) != WORDS] == 1).all()  # no other label has phrasings here to read
    unlifted = gained.gain == 1
    assert np.array_equal(gained.magnitude[unlifted], memory.magnitude[unlifted])
    assert scorer.heads.memory is memory and scorer.heads.gain is None  # the scorer as it was
    gained.save(folder)
    assert np.array_equal(CompositionalScorer(folder).heads.gain, gained.gain)
