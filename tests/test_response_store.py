"""The content-keyed response store: rows are reused across benches, a published store is read first, and adding
one model computes only its answers."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_compositional_crm
from crm_core.loader import load_crm
from usl_space.instant import response_side_of
from usl_space.response_store import ResponseStore, publish


@pytest.fixture(scope="module")
def crm(tmp_path_factory):
    return load_crm(random_compositional_crm(tmp_path_factory.mktemp("store")))


def bench(models: list[str]) -> tuple[dict, dict]:
    query = {i: f"How do I fix a {t}?" for i, t in enumerate(("tap", "bike", "door"))}
    outputs = {(i, m): f"{m} says: fix the {q.split()[-1]} {'carefully ' * (n + 1)}" for i, q in query.items()
               for n, m in enumerate(models)}  # fmt: skip
    return query, outputs


def test_rows_are_reused_and_one_more_model_computes_only_its_answers(crm, tmp_path):
    crm.reference_models = ["gpt4_1106_preview"]
    query, outputs = bench(["gpt4_1106_preview", "alpha", "beta"])
    store = ResponseStore(tmp_path / "store")
    side, computed = store.side(crm, query, outputs, outputs)
    assert computed == 9 and len(store) == 9
    direct = response_side_of(crm, query, outputs, outputs)  # batches differ: float noise only
    assert np.allclose(side.quality, direct.quality, atol=1e-3) and np.allclose(side.z, direct.z)
    query, more = bench(["gpt4_1106_preview", "alpha", "beta", "gamma"])
    encoded: list[str] = []
    encode = crm.encoder.encode
    crm.encoder.encode = lambda texts, **kw: encoded.extend(texts) or encode(texts, **kw)
    try:
        again, computed = ResponseStore(tmp_path / "store").side(crm, query, more, more)  # a new process: from disk
    finally:
        crm.encoder.encode = encode
    assert computed == 3  # gamma's three answers
    assert not any(t.startswith("gpt4_1106_preview") for t in encoded)  # the panel's vectors came from the store
    assert any(t.startswith("gamma") for t in encoded)
    assert np.allclose(again.quality, response_side_of(crm, query, more, more).quality, atol=1e-3)


def test_a_published_store_is_read_first_and_the_local_one_gets_only_what_is_missing(crm, tmp_path):
    crm.reference_models = []
    query, outputs = bench(["base", "alpha"])
    ResponseStore(tmp_path / "published").side(crm, query, outputs, outputs)
    _, more = bench(["base", "alpha", "beta"])
    local = ResponseStore(tmp_path / "local", readonly=[tmp_path / "published"])
    _, computed = local.side(crm, query, more, more)
    assert computed == 3 and len(list((tmp_path / "local").glob("part-*.npz"))) == 1


def test_a_bench_compared_with_its_own_answers_encodes_each_answer_once(crm, tmp_path):
    """Without the named panel every answer is in its query's panel: its vector, encoded for the panel, serves the
    answer too; a second build against the bench's own panel (usl_space.instant.own_panel) encodes nothing."""
    from collections import Counter
    from dataclasses import replace

    crm.reference_models = []
    query, outputs = bench(["base", "alpha", "beta"])
    encoded: Counter = Counter()
    encode, served = crm.encoder.encode, crm.serving
    crm.encoder.encode = lambda texts, **kw: encoded.update(texts) or encode(texts, **kw)
    crm.serving = replace(served, consensus_scale=0.5)
    try:
        store = ResponseStore(tmp_path / "s")
        first, computed = store.side(crm, query, outputs, outputs)
        assert computed == 9 and max(encoded[t] for t in outputs.values()) == 1
        encoded.clear()
        second, computed = store.side(crm, query, outputs, outputs, own=["base", "alpha"])
    finally:
        crm.encoder.encode, crm.serving = encode, served
    assert computed == 9 and not any(encoded[t] for t in outputs.values())  # new rows, no answer encoded again
    assert not np.allclose(first.quality, second.quality)


def test_a_torn_shard_is_skipped_and_its_rows_rebuilt(crm, tmp_path, capsys):
    crm.reference_models = []
    query, outputs = bench(["base", "alpha"])
    ResponseStore(tmp_path / "s").side(crm, query, outputs, outputs)
    shard = next((tmp_path / "s").glob("part-*.npz"))
    shard.write_bytes(shard.read_bytes()[:100])
    _, computed = ResponseStore(tmp_path / "s").side(crm, query, outputs, outputs)
    assert computed == 6 and "is unreadable" in capsys.readouterr().err


def test_a_published_row_with_a_nan_or_inf_is_not_trusted_but_computed_again(crm, tmp_path, capsys):
    crm.reference_models = []
    query, outputs = bench(["base", "alpha"])
    ResponseStore(tmp_path / "published").side(crm, query, outputs, outputs)
    shard = next((tmp_path / "published").glob("part-*.npz"))
    with np.load(shard) as data:
        parts = {k: data[k].copy() for k in data.files}
    parts["quality"][0], parts["voice"][1, 0] = np.nan, np.inf  # a doctored download
    np.savez(shard, **parts)
    local = ResponseStore(tmp_path / "local", readonly=[tmp_path / "published"])
    side, computed = local.side(crm, query, outputs, outputs)
    assert computed == 2 and np.isfinite(side.quality).all() and np.isfinite(side.voice).all()
    assert "2 row(s) with a NaN or infinite value left out" in capsys.readouterr().err


def test_publish_dry_run_lists_the_shards_and_says_non_commercial(crm, tmp_path, capsys):
    from crm_core.hub import DryRunApi

    crm.reference_models = []
    query, outputs = bench(["base", "alpha"])
    ResponseStore(tmp_path / "s").side(crm, query, outputs, outputs)
    url = publish(tmp_path / "s", "someone/usl-sides", DryRunApi())
    out = capsys.readouterr().out
    assert url == "https://huggingface.co/datasets/someone/usl-sides"
    assert "would create (or reuse) dataset repo someone/usl-sides" in out and "part-" in out
    assert "license: cc-by-nc-4.0" in out
    with pytest.raises(FileNotFoundError, match="no part"):
        publish(tmp_path / "empty", "someone/x", DryRunApi())


def test_usl_data_sides_and_publish_sides_dry_run(tmp_path, combined_dir, capsys):
    import json

    from conftest import MODELS
    from usl_space.data_cli import main as usl_data

    crm_folder = random_compositional_crm(tmp_path / "crm")
    store = tmp_path / "store"
    args = ["sides", "--data", str(combined_dir), "--model", str(crm_folder), "--output", str(store), "--quiet",
            "--baseline", "base"]  # fmt: skip
    assert usl_data(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["responses"] == first["computed"] == 6 * len(MODELS)
    assert usl_data(args) == 0  # again: everything from the store
    assert json.loads(capsys.readouterr().out)["computed"] == 0
    assert usl_data(["publish-sides", "--store", str(store), "--repo-id", "me/sides", "--dry-run"]) == 0
    assert "dry run: nothing sent to https://huggingface.co/datasets/me/sides" in capsys.readouterr().out
    assert usl_data(["sides", "--data", str(combined_dir), "--model", str(crm_folder), "--output",
                     str(combined_dir), "--baseline", "base"]) == 2  # fmt: skip
    assert "would destroy the input" in capsys.readouterr().err
    # a CRM that compares a bench without its panel with the bench's own top models: the store gets both builds, as
    # the app makes them (usl_space.instant.bench_side), so a published store holds the rows the app reads
    meta = json.loads((crm_folder / "crm.json").read_text())
    meta["extra"]["serving"] |= {"consensus_scale": 0.5, "panel_share": 0.5}
    meta["extra"]["reference_models"] = ["nobody"]
    (crm_folder / "crm.json").write_text(json.dumps(meta))
    args[args.index(str(store))] = str(tmp_path / "store2")
    assert usl_data(args) == 0
    built = json.loads(capsys.readouterr().out)
    assert built["computed"] == 2 * built["responses"] and len(built["own_panel"]) == max(2, round(len(MODELS) / 2))


def test_a_build_reports_progress_by_shard_and_one_cut_short_keeps_what_it_finished(crm, tmp_path):
    from usl_space.progress import Progress

    crm.reference_models = []
    query, outputs = bench(["base", "alpha", "beta"])  # 9 rows: shards of 4, 4 and 1
    report = Progress("building", 0, log=False)
    calls = []
    side = crm.response_side

    def failing_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # the build is killed while computing its third shard
        return side(*args, **kwargs)

    crm.response_side = failing_third
    try:
        with pytest.raises(KeyboardInterrupt):
            ResponseStore(tmp_path / "s").side(crm, query, outputs, outputs, report=report, chunk=4)
    finally:
        del crm.response_side
    assert (report.total, report.done) == (9, 8) and "8 of 9 answers" in report.line()
    again = Progress("building", 0, log=False)
    _, computed = ResponseStore(tmp_path / "s").side(crm, query, outputs, outputs, report=again, chunk=4)
    assert computed == 1 and (again.total, again.done) == (1, 1)  # only the row the killed build had not saved


def test_an_upload_is_prepared_in_chunks_with_progress_and_stops_with_nothing_kept(crm):
    from test_engine import toy_bench
    from usl_space.cache import ScoreCache
    from usl_space.loading import make_engine
    from usl_space.progress import Progress

    crm.reference_models = []
    bench_ = toy_bench()
    engine = make_engine(bench_, crm, ScoreCache(":memory:"))
    outputs = {int(i): f"An uploaded answer to query {i}." for i in engine.query}
    asked = []
    assert not engine.prepare_upload("up", outputs, should_stop=lambda: asked.append(1) or len(asked) > 1, chunk=4)
    assert not engine._uploads  # stopped after the first chunk: nothing kept
    report = Progress("encoding", len(outputs), log=False)
    assert engine.prepare_upload("up", outputs, report=report, chunk=4) and report.done == len(outputs)
    assert len(outputs) > 4 and len(asked) == 2  # Stop was asked before each chunk and heard before the second
    board = engine.with_model("up", outputs).rank(models=[*engine.models, "up"])
    assert "up" in {row["model"] for row in board.rows}
