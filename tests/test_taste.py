"""A visitor's votes refine the weights their criteria gave (usl_space.taste), and a saved profile ranks the same
in usl-rank as it was fitted."""

from __future__ import annotations

import base64
import json
import zlib
from dataclasses import asdict

import numpy as np
import pytest
from conftest import REPO
from crm_core.compositional.heads import CriteriaSide
from usl_space.taste import Profile, Vote, model_means, next_pair, refit

CRM = REPO / "space" / "models" / "crm-compositional"


def synthetic(seed: int = 0, n: int = 400, k: int = 5, r: int = 2):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (n, k + r))
    truth = np.array([2.0, -1.5, 0, 0, 0, 0.5, 0])
    prior = CriteriaSide(np.zeros(k, np.float32), np.zeros(r, np.float32))
    return rng, x, np.zeros(n), truth, prior


def test_votes_pull_the_weights_towards_the_truth_and_one_vote_cannot_swing_them():
    rng, x, quality, truth, prior = synthetic()
    a, b = rng.integers(0, len(x), 200), rng.integers(0, len(x), 200)
    outcomes = ((x[a] - x[b]) @ truth > 0).astype(float)
    fitted, covariance = refit(prior, x, a, b, outcomes, quality)
    theta = np.concatenate([fitted.weights, fitted.voice])
    assert np.corrcoef(theta, truth)[0, 1] > 0.95 and theta[0] > 1 and theta[1] < -0.8
    assert np.all(np.diag(covariance) < 0.25)  # 200 votes: surer than the prior (variance 1/4)
    one, _ = refit(prior, x, a[:1], b[:1], outcomes[:1], quality)
    assert np.abs(np.concatenate([one.weights, one.voice])).max() < 0.6  # regularised towards the criteria
    same, _ = refit(prior, x, a[:0], b[:0], outcomes[:0], quality)
    assert np.array_equal(same.weights, prior.weights)


def test_next_pair_asks_between_neighbouring_models_and_never_twice():
    rng, x, quality, _truth, prior = synthetic(1)
    rows = np.arange(400).reshape(100, 4)  # 100 queries x 4 models
    asked: set = set()
    for _ in range(10):
        q, a, b = next_pair(prior, np.eye(7) / 4, x, quality, rows, [2, 0, 3, 1], asked, rng, neighbours=1)
        assert (a, b) in {(2, 0), (0, 3), (3, 1)} and (q, a, b) not in asked
        asked.add((q, a, b))
    assert model_means(x, rows).shape == (4, 7)


def test_profile_round_trip_and_clear_errors(tmp_path):
    profile = Profile(["No emojis."], ["jargon"], [], [Vote(3, "m1", "m2", 1.0)], [0.5] * 27, [0.0] * 16)
    path = tmp_path / "profile.json"
    profile.save(path)
    assert Profile.load(path) == profile
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"version": 1, "votes": [{"idx": 3, "model_a": "m1", "model_b": "m2", "outcome": 2}]}))
    with pytest.raises(ValueError, match="outcome must be 1"):
        Profile.load(bad)
    bad.write_text('{"version": 1, ')
    with pytest.raises(ValueError, match="malformed JSON"):
        Profile.load(bad)
    bad.write_text(json.dumps({"version": 1, "criteria": "Be brief."}))  # a string, not a list: not 9 letters
    with pytest.raises(ValueError, match="criteria: expected a list of strings, got str"):
        Profile.load(bad)
    bad.write_text('{"version": 1, "weights": [0.5, NaN]}')  # Python's json reads NaN: refused, not a null board
    with pytest.raises(ValueError, match="weights: expected a list of finite numbers"):
        Profile.load(bad)
    bad.write_text(json.dumps({"version": 1, "criteria": [12345, {"x": 1}]}))
    with pytest.raises(ValueError, match="criteria: expected a list of strings, got a list holding dict, int"):
        Profile.load(bad)


def test_share_link_token_round_trip_and_damaged_links():
    profile = Profile(["No emojis 🙅", "Use headings."], [], ["Coding"], [Vote(3, "m1", "m2", 1.0)] * 10,
                      [0.5] * 27, [0.0] * 16)  # fmt: skip
    token = profile.link_token()
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")  # URL-safe
    back = Profile.from_link_token(token)
    assert back.criteria == profile.criteria and back.votes == profile.votes and back.topics == ["Coding"]
    assert back.weights is None  # refitted from criteria and votes on arrival, so links stay short
    assert Profile.from_link_token(profile.link_token(["Coding"])).topics == []  # all ticked: opens with all
    legacy = base64.urlsafe_b64encode(zlib.compress(json.dumps(asdict(profile)).encode())).decode().rstrip("=")
    assert Profile.from_link_token(legacy).votes == profile.votes  # links made before compact ones still open
    for broken in (token[:-8], "not a token", "A" * 9000, "2." + token[2:-3]):
        with pytest.raises(ValueError, match="link's profile"):
            Profile.from_link_token(broken)


def test_a_share_link_with_three_votes_of_todays_models_stays_short():
    from usl_space.topics import TOPICS

    votes = [Vote(12, "Meta-Llama-3.1-405B-Instruct-Turbo", "claude-3-5-sonnet-20240620", 1.0),
             Vote(301, "gpt-4o-2024-05-13", "Qwen2-72B-Instruct", 0.0),
             Vote(77, "yi-large-preview", "gpt-4-turbo-2024-04-09", 0.5)]  # fmt: skip
    profile = Profile(["Prefer short, concise answers."], [], list(TOPICS), votes)
    old = base64.urlsafe_b64encode(zlib.compress(json.dumps({k: v for k, v in asdict(profile).items()
                                   if k not in ("weights", "voice")}).encode(), 9)).decode()  # fmt: skip
    token = profile.link_token(TOPICS)
    assert len(token) <= 170 < len(old)  # ~540 characters before
    assert Profile.from_link_token(token).votes == votes


def test_usl_rank_with_a_profile_ranks_as_its_votes_say(per_model_dir, tmp_path, capsys):
    from usl_space.rank_cli import main as usl_rank

    common = ["--data", str(per_model_dir), "--baseline", "base", "--model", str(CRM), "--cache",
              str(tmp_path / "scores.sqlite"), "--quiet", "--bootstrap", "100"]  # fmt: skip
    assert usl_rank([*common, "--criteria", "Be brief."]) == 0
    plain = json.loads(capsys.readouterr().out)
    rate = {row["model"]: row["win_rate"] for row in plain["rows"]}
    # a bench without the reference panel's answers: quality compared with its own top models, named in the JSON
    assert len(plain["own_panel"]) == 2 and set(plain["own_panel"]) < set(rate) | {"base"}
    loser, winner = sorted(["alpha", "beta"], key=rate.get)
    votes = [Vote(i, loser, winner, 1.0) for i in range(5)]  # the visitor keeps preferring the board's loser
    path = tmp_path / "profile.json"
    Profile(["Be brief."], [], [], votes).save(path)
    assert usl_rank([*common, "--profile", str(path)]) == 0
    voted = json.loads(capsys.readouterr().out)
    moved = {row["model"]: row["win_rate"] for row in voted["rows"]}
    assert voted["criteria"] == ["Be brief."]
    assert moved[loser] - moved[winner] > rate[loser] - rate[winner]  # the votes moved the board their way
    assert usl_rank([*common, "--profile", str(path), "--criteria", "x"]) == 2
    assert "--profile brings its own criteria" in capsys.readouterr().err
