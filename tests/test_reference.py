"""The quality term's whole-text reference signals (crm_core.compositional.reference) and how the scorer weighs
them in."""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest
from crm_core.compositional.reference import IDF_FILE, IdfTable, lexical_similarity, relative_length, words
from crm_core.loader import load_crm
from test_compositional import compositional_crm  # noqa: F401  (the fixture)

CORPUS = ["The cat sat on the mat.", "The dog ate the bone.", "A photosynthesis primer: chlorophyll absorbs light.",
          "The sun is a star.", "Cats and dogs are pets; the cat purrs."]  # fmt: skip


def test_words_are_lower_cased_unicode_tokens():
    assert words("Héllo, WORLD! naïve_café 42 😀") == ["héllo", "world", "naïve_café", "42"]


def test_idf_table_round_trip_and_rare_words_weigh_more(tmp_path):
    table = IdfTable.build(CORPUS, min_count=1)
    assert table.documents == 5 and table.idf["the"] < table.idf["chlorophyll"]
    assert IdfTable.build(CORPUS).idf.keys() == {w for w in table.idf if sum(w in words(t) for t in CORPUS) >= 2}
    table.save(tmp_path)
    again = IdfTable.load(tmp_path)
    assert again.documents == 5 and again.idf == table.idf and IdfTable.load(tmp_path / "missing") is None
    assert table.vector("unheardofword")["unheardofword"] == pytest.approx(1.0)  # unit length
    assert table.unseen == pytest.approx(math.log(6)) and table.unseen > max(table.idf.values())
    with pytest.raises(ValueError, match="at least one text"):
        IdfTable.build([])


def test_lexical_similarity_reads_the_whole_text_and_favours_shared_rare_words():
    table = IdfTable.build(CORPUS, min_count=1)
    ref = "Chlorophyll absorbs light in the leaf."
    same, none = lexical_similarity([ref, "Dogs bark loudly."], [ref, ref], table)
    assert same == pytest.approx(1.0, abs=1e-6) and none == 0.0
    rare, common = lexical_similarity(["The chlorophyll.", "The the the."], [ref, ref], table)
    assert rare > common > 0
    filler = "word " * 2000
    late = lexical_similarity([filler + "chlorophyll", filler], [ref, ref], table)
    assert late[0] > late[1]  # a shared word 2,000 words in still counts
    assert lexical_similarity(["x"], [None], table)[0] == 0.0 and lexical_similarity([""], [ref], table)[0] == 0.0


def test_relative_length_is_signed_and_zero_without_a_reference():
    ref = "one two three"
    out = relative_length(["one two three", "a b c d e f g", "a", "anything"], [ref, ref, ref, None])
    assert out[0] == pytest.approx(0.0) and out[1] == pytest.approx(math.tanh(math.log2(8 / 4)))
    assert out[2] < 0 and out[3] == 0.0


def test_scorer_weighs_in_the_signals_and_keys_saved_tables_by_the_idf_table(compositional_crm, tmp_path):  # noqa: F811
    from safetensors.numpy import load_file, save_file

    folder = tmp_path / "crm"
    shutil.copytree(compositional_crm, folder)
    plain = load_crm(folder)
    assert plain.idf is None
    params = load_file(folder / "heads.safetensors")
    params.update(lexsim_weight=np.array([2.0], np.float32), length_weight=np.array([-0.5], np.float32))
    save_file(params, str(folder / "heads.safetensors"))
    IdfTable.build(CORPUS, min_count=1).save(folder)
    crm = load_crm(folder)
    query, ref = "What absorbs light?", "Chlorophyll absorbs light in the leaf."
    texts = ["Chlorophyll absorbs light.", "The sun is a star, and stars are bright, and the sky is blue today."]
    with_ref = crm.response_side([query] * 2, texts, [[ref], [ref]]).quality
    without = crm.response_side([query] * 2, texts, [[], []]).quality
    lex, rel = lexical_similarity(texts, [ref, ref], crm.idf), relative_length(texts, [ref, ref])
    embed_only = plain.response_side([query] * 2, texts, [[ref], [ref]]).quality - without
    assert np.allclose(with_ref - without, embed_only + 2.0 * lex - 0.5 * rel, atol=1e-5)
    assert crm.response_side_id != plain.response_side_id
    (folder / IDF_FILE).write_text((folder / IDF_FILE).read_text().replace('"documents": 5', '"documents": 6'))
    assert load_crm(folder).response_side_id != crm.response_side_id
