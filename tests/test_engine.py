"""usl_space engine: anytime leaderboards, the persistent cache (kill and restart), sharding, usl-rank."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import make_tiny_qwen_crm, write_jsonl
from crm_core.data import make_bench
from crm_core.guard import check_criteria
from crm_core.loader import load_crm
from usl_space.cache import ScoreCache, criteria_key
from usl_space.engine import Engine
from usl_space.loading import make_engine
from usl_space.request import RankRequest
from usl_space.topics import TOPICS, TopicIndex

MODELS = ["base", "m1", "m2", "m3"]
N_QUERIES = 12


def toy_records() -> tuple[list[dict], list[dict]]:
    queries = [{"idx": i, "instruction": f"Question {i}: how do I do task {i}?"} for i in range(N_QUERIES)]
    responses = []
    for i in range(N_QUERIES):
        for k, model in enumerate(MODELS):
            if model == "m3" and i == 7:
                continue  # m3 missed a query
            text = f"{model} answer {i}. " + "More detail here. " * ((k * 3 + i) % 7)
            responses.append({"idx": i, "model": model, "output": text, "generator": model})
    return queries, responses


def toy_bench():
    queries, responses = toy_records()
    return make_bench("toy", "test", "base", pl.DataFrame(queries), pl.DataFrame(responses))


def toy_topics(bench) -> TopicIndex:
    """Queries 0-5 on the first topic, 6-11 on the second, without embedding anything."""
    n = bench.queries.height
    similarity = np.zeros((n, len(TOPICS)))
    similarity[np.arange(n), (np.arange(n) >= n // 2).astype(int)] = 1.0
    return TopicIndex(bench.queries["idx"].to_numpy(), np.eye(n, 8), similarity)


class Counting:
    """Wraps a scorer and counts the inputs it runs."""

    def __init__(self, scorer):
        self.scorer, self.inputs = scorer, 0

    def __getattr__(self, name):
        return getattr(self.scorer, name)

    def score_points(self, criteria, dislikes, items, references=None, batch_size=16):
        return type(self.scorer).score_points(self, criteria, dislikes, items, references, batch_size)

    def point_scores(self, encoded, batch_size=16, progress=False):
        return type(self.scorer).point_scores(self, encoded, batch_size, progress)  # through the counting logits

    def logits(self, encoded, batch_size=16, progress=False):
        self.inputs += len(encoded)
        return self.scorer.logits(encoded, batch_size, progress)


@pytest.fixture(scope="module")
def pointwise_crm(tmp_path_factory, qwen_tokenizer) -> Path:
    return make_tiny_qwen_crm(tmp_path_factory.mktemp("crm") / "point", qwen_tokenizer, labels=("score",),
                              objective="pointwise", seed=3)  # fmt: skip


def engine_for(crm: Path, cache: ScoreCache) -> Engine:
    bench = toy_bench()
    return make_engine(bench, Counting(load_crm(crm)), cache, toy_topics(bench))


def test_check_criteria_refuses_what_a_visitor_should_not_send():
    assert check_criteria(["  prefer   short ", "", "no emojis"]) == ["prefer short", "no emojis"]
    with pytest.raises(ValueError, match="at most 300 characters"):
        check_criteria(["x" * 301])
    with pytest.raises(ValueError, match="binary"):
        check_criteria(["ok\x00bad"])
    with pytest.raises(ValueError, match="at most 12 lines"):
        check_criteria([f"c{i}" for i in range(13)])
    # one rule for a list and for the text of a box: the same criteria, the same cache key
    assert check_criteria(" a  b\n\n") == check_criteria([" a  b", ""]) == ["a b"] == check_criteria("a b")
    assert check_criteria(None) == [] and criteria_key(["a", "b"]) != criteria_key(["b", "a"])


def test_order_is_seeded_and_topic_stratified(tiny_qwen_crm):
    engine = engine_for(tiny_qwen_crm, ScoreCache(":memory:"))
    order = engine.order(seed=1)
    assert sorted(order) == list(range(N_QUERIES)) and order == engine.order(seed=1) != engine.order(seed=2)
    for k in (2, 4, 6):  # every prefix holds the two topics in equal shares
        first_topic = sum(idx < N_QUERIES // 2 for idx in order[:k])
        assert first_topic == k // 2, (k, order)
    assert engine.sample(4, seed=1) == order[:4]
    assert sorted(engine.sample(3, seed=0, query_ids=[0, 1, 2, 9])) != [0, 1, 2]  # the sample spans both topics


def test_a_rank_request_is_cleaned_once_names_one_board_and_ranks_what_it_asks(pointwise_crm):
    typed = RankRequest.checked(" Be   brief. \n\n", ["jargon"], query_ids=[5, 1, 5], models=["m1"], baseline="m2",
                                n_queries=2, seed=3)  # fmt: skip
    assert typed == RankRequest(("Be brief.",), ("jargon",), (1, 5), ("m1",), "m2", 2, 3)
    assert hash(typed) == hash(RankRequest.checked(["Be brief."], "jargon", [1, 5], ["m1"], "m2", 2, 3))
    assert RankRequest.checked("Be brief.") != RankRequest.checked("Be brief.", n_queries=4)  # another board
    assert RankRequest.checked(models=["m2", "m1", "m2"]).models == ("m2", "m1")  # named twice: ranked once
    with pytest.raises(ValueError, match="at least 1"):
        RankRequest.checked(n_queries=0)
    with pytest.raises(ValueError, match="dislikes line 1"):
        RankRequest.checked("", "x" * 301)
    engine = engine_for(pointwise_crm, ScoreCache(":memory:"))
    *_, board = engine.stream_request(typed)
    assert board.baseline == "m2" and board.criteria == ["Be brief."] and board.dislikes == ["jargon"]
    assert {row["model"] for row in board.rows} == {"m1", "m2"} and board.n_queries == 2
    assert set(engine.request_ids(typed)) <= {1, 5} and engine.request_ids(typed) == engine.sample(2, 3, [1, 5])


@pytest.mark.parametrize("objective", ["pairwise", "pointwise"])
def test_anytime_stream_refines_to_the_full_leaderboard(objective, tiny_qwen_crm, pointwise_crm):
    crm = tiny_qwen_crm if objective == "pairwise" else pointwise_crm
    engine = engine_for(crm, ScoreCache(":memory:"))
    boards = list(engine.stream(["prefer concise answers"], ["I dislike jargon"], first_batch=1, max_batch=4))
    assert [b.n_queries for b in boards] == [1, 3, 7, 11, 12]  # batches of 1, 2, 4, 4, 1
    final = boards[-1]
    assert final.done and final.n_selected == N_QUERIES and final.criteria == ["prefer concise answers"]
    rows = {row["model"]: row for row in final.rows}
    assert set(rows) == set(MODELS)
    assert rows["base"]["win_rate"] == 0.5 and rows["base"]["baseline"] and rows["base"]["n"] == N_QUERIES
    assert rows["m3"]["n"] == N_QUERIES - 1 and rows["m1"]["n"] == N_QUERIES
    for row in final.rows:
        assert row["ci_low"] <= row["win_rate"] <= row["ci_high"]
        assert row["wins"] + row["ties"] + row["losses"] == row["n"]
        assert row["win_rate"] == pytest.approx((row["wins"] + row["ties"] / 2) / row["n"], abs=1e-4)
        assert row["rank_ub"] is None  # 12 queries: below MIN_QUERIES_FOR_RANKS, Rank (UB) is not shown
        assert set(row["topics"]) == set(list(TOPICS)[:2])
    assert [r["win_rate"] for r in final.rows] == sorted((r["win_rate"] for r in final.rows), reverse=True)
    if objective == "pairwise":
        assert 0 <= final.position_consistency <= 1
    json.dumps(final.to_json())  # serialisable as it is


def test_pairwise_engine_agrees_with_direct_symmetric_scoring(tiny_qwen_crm):
    from crm_core.spec import Pair

    engine = engine_for(tiny_qwen_crm, ScoreCache(":memory:"))
    scores = engine.score(["be brief"], [], [3], ["m1"])
    value, value2, _ = scores[(3, "m1")]
    direct = load_crm(tiny_qwen_crm).score_pairs(
        [Pair(["be brief"], engine.query[3], engine.output[(3, "m1")], engine.output[(3, "base")])]
    )
    assert (value + value2) / 2 == pytest.approx(float(direct.p_a[0]), abs=1e-5)


def test_repeated_and_overlapping_requests_cost_nothing(tiny_qwen_crm, tmp_path):
    cache = ScoreCache(tmp_path / "scores.sqlite")
    engine = engine_for(tiny_qwen_crm, cache)
    first = engine.rank(["prefer lists"], query_ids=range(6))
    cost = engine.scorer.inputs
    assert cost == 6 * 3 * 2  # 6 queries x 3 models x both orders
    again = engine.rank(["  prefer   lists "], query_ids=range(6))  # same criteria once normalised
    assert engine.scorer.inputs == cost and again.rows == first.rows
    engine.rank(["prefer lists"], query_ids=range(4, 8))  # overlaps on 4 and 5
    assert engine.scorer.inputs == cost + 2 * 3 * 2 - (1 * 2)  # m3 has no answer to query 7
    restarted = engine_for(tiny_qwen_crm, ScoreCache(tmp_path / "scores.sqlite"))
    assert restarted.rank(["prefer lists"], query_ids=range(6)).rows == first.rows
    assert restarted.scorer.inputs == 0


def test_warming_at_start_leaves_the_general_leaderboard_cached(pointwise_crm, tmp_path):
    from usl_space.app import warm_general_leaderboard

    warm = engine_for(pointwise_crm, ScoreCache(tmp_path / "scores.sqlite"))
    warm_general_leaderboard(warm)
    assert warm.scorer.inputs == N_QUERIES * len(MODELS) - 1  # pointwise: each response once; m3 missed one
    visitor = engine_for(pointwise_crm, ScoreCache(tmp_path / "scores.sqlite"))
    board = visitor.rank([])
    assert visitor.scorer.inputs == 0 and board.n_queries == N_QUERIES


def test_a_changed_response_is_rescored_not_served_stale(tiny_qwen_crm, tmp_path):
    cache = ScoreCache(tmp_path / "scores.sqlite")
    engine = engine_for(tiny_qwen_crm, cache)
    engine.rank([], query_ids=[0])
    engine.output[(0, "m1")] = "an edited answer"
    before = engine.scorer.inputs
    engine.rank([], query_ids=[0])
    assert engine.scorer.inputs == before + 2  # only the edited pair, both orders


KILL_SCRIPT = """
import os, signal, sys
sys.path.insert(0, {tests!r})
from test_engine import engine_for
from usl_space.cache import ScoreCache
from pathlib import Path
engine = engine_for(Path({crm!r}), ScoreCache({cache!r}))
for board in engine.stream(["prefer numbered steps"], first_batch=2, max_batch=2):
    if board.n_queries >= 6:
        print(board.n_queries, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # no clean shutdown: the process dies mid-run
"""


@pytest.mark.slow
def test_cache_survives_a_kill_and_the_restart_recomputes_nothing_finished(tiny_qwen_crm, tmp_path):
    cache_file = tmp_path / "scores.sqlite"
    script = KILL_SCRIPT.format(tests=str(Path(__file__).parent), crm=str(tiny_qwen_crm), cache=str(cache_file))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == -9, done.stderr[-2000:]
    assert done.stdout.strip() == "6"
    engine = engine_for(tiny_qwen_crm, ScoreCache(cache_file))
    boards = list(engine.stream(["prefer numbered steps"], first_batch=2, max_batch=2))
    assert boards[0].n_queries == 6  # the first leaderboard comes straight from the cache
    unscored = engine.order()[6:]
    assert engine.scorer.inputs == 2 * sum(3 - (idx == 7) for idx in unscored)  # m3 skipped query 7
    fresh = engine_for(tiny_qwen_crm, ScoreCache(":memory:")).rank(["prefer numbered steps"])
    assert boards[-1].rows == fresh.rows


@pytest.fixture
def alpaca_dir(tmp_path) -> Path:
    queries, responses = toy_records()
    root = tmp_path / "alpaca"
    write_jsonl(root / "instructions.jsonl", queries)
    write_jsonl(root / "model_outputs.jsonl.gz", responses)
    (root / "default_models.txt").write_text("\n".join(MODELS) + "\n")
    return root


def usl_rank(*args: str, env=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "usl_space.rank_cli", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})  # fmt: skip


@pytest.mark.slow
def test_usl_rank_end_to_end(alpaca_dir, tiny_qwen_crm, tmp_path):
    out = tmp_path / "board.json"
    args = ["--data", str(alpaca_dir), "--baseline", "base", "--model", str(tiny_qwen_crm),
            "--cache", str(tmp_path / "c.sqlite")]  # fmt: skip
    done = usl_rank(*args, "--criteria", "Prefer short answers.", "--criteria", "No emojis.", "--queries", "8",
                    "--seed", "3", "--output", str(out), "--quiet", env={"OMP_NUM_THREADS": "1"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result == json.loads(out.read_text())
    assert result["criteria"] == ["Prefer short answers.", "No emojis."] and result["n_queries"] == 8
    assert result["bench"] and result["checkpoint"] and result["baseline"] == "base"
    assert {row["model"] for row in result["rows"]} == set(MODELS)
    for row in result["rows"]:
        assert {"model", "win_rate", "ci_low", "ci_high", "rank_ub", "n"} <= set(row)
    general = json.loads(usl_rank(*args, "--criteria", "", "--quiet").stdout)
    assert general["criteria"] == [] and general["n_queries"] == N_QUERIES
    missing = usl_rank(*args)
    assert missing.returncode == 2 and "--criteria" in missing.stderr
    bad = usl_rank(*args, "--criteria", "x" * 400)
    assert bad.returncode == 2 and "at most 300 characters" in bad.stderr


@pytest.mark.slow
def test_sharded_scoring_with_two_processes_equals_one_process(alpaca_dir, tiny_qwen_crm, tmp_path):
    common = ["--data", str(alpaca_dir), "--baseline", "base", "--model", str(tiny_qwen_crm),
              "--criteria", "Prefer detail.", "--quiet"]  # fmt: skip
    single = usl_rank(*common, "--cache", str(tmp_path / "single.sqlite"))
    assert single.returncode == 0, single.stderr[-3000:]
    launch = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
              "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
              "--main_process_port", "29517", "-m", "usl_space.rank_cli", *common,
              "--cache", str(tmp_path / "sharded.sqlite")]  # fmt: skip
    env = {**os.environ, "ACCELERATE_USE_CPU": "1", "OMP_NUM_THREADS": "1"}
    sharded = subprocess.run(launch, capture_output=True, text=True, timeout=600, env=env)
    assert sharded.returncode == 0, sharded.stderr[-3000:]
    for shard in range(2):  # two processes ran, each scoring half of the queries
        assert f"usl-rank: process {shard}/2 scored {N_QUERIES // 2} queries" in sharded.stderr, sharded.stderr[-2000:]
    one, two = json.loads(single.stdout), json.loads(sharded.stdout)
    assert two["rows"] == one["rows"] and two["n_queries"] == one["n_queries"] == N_QUERIES


def test_fair_lock_serves_waiting_jobs_round_robin():
    import threading
    import time

    from usl_space.scheduling import FairLock

    lock, turns = FairLock(), []
    lock.acquire()  # hold it until all three jobs queue, so the order they ask in is known

    def job(name: str) -> None:
        for _ in range(4):
            with lock:
                turns.append(name)

    threads = []
    for name in "abc":
        threads.append(threading.Thread(target=job, args=(name,)))
        threads[-1].start()
        while lock.waiting < len(threads) + 1:
            time.sleep(0.001)
    lock.release()
    for thread in threads:
        thread.join(timeout=10)
    # each job queues again after its turn, so no job takes two turns while another waits
    assert turns == list("abc") * 4


def test_stop_takes_effect_within_one_query_and_keeps_the_partial_board(tiny_qwen_crm, tmp_path):
    engine = engine_for(tiny_qwen_crm, ScoreCache(tmp_path / "scores.sqlite"))
    order = engine.order()
    cost = [2 * sum((idx, m) in engine.output for m in MODELS[1:]) for idx in order]  # inputs per query
    boards = []

    def should_stop() -> bool:  # Stop was pressed while the second query was being scored
        return engine.scorer.inputs >= cost[0] + 1

    for board in engine.stream(["prefer lists"], max_batch=16, first_batch=12, should_stop=should_stop):
        boards.append(board)
    assert engine.scorer.inputs == cost[0] + cost[1]  # the query in flight finished; none after it started
    assert len(boards) == 1 and boards[-1].n_queries == 2 and not boards[-1].done  # the partial board is kept
    resumed = engine.rank(["prefer lists"])  # nothing scored before the Stop is scored again
    assert resumed.done and engine.scorer.inputs == N_QUERIES * 3 * 2 - 2


def test_an_uploads_scores_are_cached_apart_and_expire_after_a_day(tiny_qwen_crm, tmp_path, monkeypatch):
    from usl_space import cache as cache_module

    cache = ScoreCache(tmp_path / "scores.sqlite")
    engine = engine_for(tiny_qwen_crm, cache)
    mine = engine.with_model("upload:mine", {i: f"my answer {i}" for i in range(N_QUERIES)})
    mine.rank(["prefer lists"], query_ids=range(4), models=["m1", "upload:mine"])
    assert cache.count(table="upload_scores") == 4  # the upload's rows, apart
    assert cache.count() == 4  # m1's rows only: the shared scores hold no visitor's model
    cost = mine.scorer.inputs
    mine.rank(["prefer lists"], query_ids=range(4), models=["m1", "upload:mine"])
    assert mine.scorer.inputs == cost  # within the day the upload's scores are reused
    now = cache_module.time.time()
    monkeypatch.setattr(cache_module.time, "time", lambda: now + cache_module.UPLOAD_SECONDS + 1)
    mine.rank(["prefer lists"], query_ids=range(4), models=["m1", "upload:mine"])
    assert mine.scorer.inputs == cost + 2 * 4  # a day later they are gone: only the upload is scored (both orders)
    assert cache.count(table="upload_scores") == 4  # the expired rows were replaced, not kept beside
