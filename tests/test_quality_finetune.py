"""training/experiments/quality_finetune.py: the tuned variant splits MiniLM in two (token states from the frozen layers
below, copies of the top layers above), so before any step it must read texts exactly as the whole encoder does,
and its stand-in store must give queries the store's vectors and answers the tuned ones."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
TEXTS = ["Use headings.", "A much longer answer with several words, a list:\n- one\n- two", "¡Hola! 😀"]


def _split(tmp_path, tuned: int = 2):
    sys.path.insert(0, str(REPO / "training" / "experiments"))
    from crm_core.encoder import TextEncoder, write_encoder
    from quality_finetune import TunedLayers

    encoder = TextEncoder(write_encoder(tmp_path / "encoder", max_tokens=32))
    n = encoder.model.config.num_hidden_layers
    layers = TunedLayers([copy.deepcopy(encoder.model.encoder.layer[i]).float() for i in range(n - tuned, n)])
    return encoder, layers, n - tuned


def test_untouched_top_layers_over_the_states_below_read_as_the_whole_encoder(tmp_path):
    encoder, layers, after = _split(tmp_path)
    states, mask = encoder.hidden_states(TEXTS, after, max_tokens=32)
    with torch.no_grad():
        split = layers(states, mask).numpy()
    whole = encoder.encode(TEXTS)
    assert np.allclose(split, whole, atol=2e-3)
    with torch.no_grad():  # and the tuned copies are the ones read: changing them changes the vectors
        layers.layers[-1].output.LayerNorm.bias += torch.linspace(-0.5, 0.5, 384)
        assert not np.allclose(layers(states, mask).numpy(), whole, atol=2e-3)


def test_the_stand_in_store_keeps_queries_frozen_and_reads_answers_through_the_tuned_layers(tmp_path):
    from quality_finetune import TunedStore

    encoder, layers, after = _split(tmp_path)
    with torch.no_grad():
        layers.layers[-1].output.LayerNorm.bias += torch.linspace(-0.5, 0.5, 384)

    class FrozenStore:
        def get(self, texts, progress=False):
            return np.full((len(texts), 384), 7.0, np.float32)

    store = TunedStore(FrozenStore(), encoder, layers, after, 32, frozen={TEXTS[0]})
    got = store.get([TEXTS[1], TEXTS[0], TEXTS[2], TEXTS[1]])
    assert (got[1] == 7.0).all()
    states, mask = encoder.hidden_states([TEXTS[1], TEXTS[2]], after, max_tokens=32)
    with torch.no_grad():
        tuned = layers(states, mask).numpy()
    assert np.allclose(got[[0, 2]], tuned, atol=1e-5) and np.allclose(got[3], got[0])
    assert not np.allclose(got[0], encoder.encode([TEXTS[1]])[0], atol=2e-3)
