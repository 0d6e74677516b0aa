"""The Gradio app, served on 127.0.0.1: through gradio_client, and in headless Chromium (Playwright). (Over 400
lines: the tests share one served app and its browser, started once per module, which a split would start twice.)"""

from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path

import pytest
from test_engine import MODELS, N_QUERIES, toy_bench, toy_topics
from usl_space.cache import ScoreCache
from usl_space.loading import make_engine
from usl_space.topics import TOPICS

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def app_url(tiny_qwen_crm, tmp_path_factory):
    yield from served(tiny_qwen_crm, tmp_path_factory.mktemp("cache") / "scores.sqlite")


class Slow:
    """A real CRM that takes `seconds` longer per query, as a bigger model on a CPU would: time to press Stop."""

    def __init__(self, scorer, seconds: float):
        self.scorer, self.seconds = scorer, seconds

    def __getattr__(self, name):
        return getattr(self.scorer, name)

    def logits(self, encoded, batch_size=16, progress=False):
        time.sleep(self.seconds)
        return self.scorer.logits(encoded, batch_size, progress)


@pytest.fixture(scope="module")
def slow_app_url(tiny_qwen_crm, tmp_path_factory):
    yield from served(tiny_qwen_crm, tmp_path_factory.mktemp("cache-slow") / "scores.sqlite", slow=0.5)


def served(crm, cache_path, slow: float = 0.0):
    """The app over the toy bench with this CRM, on a free 127.0.0.1 port: yields its URL, then closes it."""
    from crm_core.loader import load_crm
    from usl_space.app import build_app

    bench = toy_bench()
    scorer = Slow(load_crm(crm), slow) if slow else load_crm(crm)
    demo = build_app(make_engine(bench, scorer, ScoreCache(cache_path), toy_topics(bench)))
    demo.queue(default_concurrency_limit=2)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield f"http://127.0.0.1:{port}/"
    demo.close()


def settled_text(locator, quiet: float = 2.0, timeout: float = 60.0) -> str:
    """A component's text once it has stopped changing for `quiet` seconds: a board that Gradio is still
    replacing (a queued update after the last event) reads as its final state, not as the one before."""
    text, since, deadline = locator.inner_text(), time.monotonic(), time.monotonic() + timeout
    while time.monotonic() - since < quiet and time.monotonic() < deadline:
        time.sleep(0.25)
        now = locator.inner_text()
        if now != text:
            text, since = now, time.monotonic()
    return text


@pytest.mark.slow
def test_customize_through_gradio_client(app_url):
    from gradio_client import Client

    client = Client(app_url, verbose=False)
    topics = ["Creative Writing & Literature", "Humor & Entertainment"]
    table, topic_table, _plot, status, files = client.predict(
        topics, "", "Prefer short answers.\nNo emojis.", "", "base", ["m1", "m2", "m3"], N_QUERIES,
        api_name="/customize",
    )  # fmt: skip
    assert "done" in status and f"{N_QUERIES} / {N_QUERIES} queries" in status
    models = [row[1] for row in table["data"]]
    assert sorted(models) == sorted(["base (baseline)", "m1", "m2", "m3"])
    rates = [float(row[2]) for row in table["data"]]
    assert rates == sorted(rates, reverse=True)
    assert all(len(row[2].split(".")[1]) == 1 for row in table["data"])  # one decimal, always ("52.0", not "52")
    assert table["headers"][:4] == ["Rank", "Model", "Win rate %", "95% CI %"]  # what a phone shows
    assert topic_table["headers"] == ["Model", *topics] and len(topic_table["data"]) == len(table["data"])
    downloaded = json.loads(Path(files[1]).read_text())
    assert downloaded["criteria"] == ["Prefer short answers.", "No emojis."]
    # only the first topic ticked: the ranking covers its 6 queries
    _, _, _, status, _ = client.predict([topics[0]], "", "", "", "base", ["m1"], N_QUERIES, api_name="/customize")
    assert "6 / 6 queries" in status
    *_, message, _ = client.predict(topics, "", "x" * 301, "", "base", ["m1"], N_QUERIES,
                                            api_name="/customize")  # fmt: skip
    assert message.startswith("**Not ranked:**") and "at most 300 characters" in message


def test_topic_controls_mean_what_they_show_and_another_baseline_keeps_the_first_as_a_row(app_url):
    from gradio_client import Client

    client = Client(app_url, verbose=False)
    *_, message, _ = client.predict([], "", "", "", "base", ["m1"], N_QUERIES, api_name="/customize")
    assert "Not ranked" in message and "no topic is ticked" in message  # cleared topics: a message, not all queries
    table, *_ = client.predict(list(TOPICS), "", "", "", "m1", ["m2", "m3"], N_QUERIES,
                               api_name="/customize")  # fmt: skip
    rows = {row[1]: row for row in table["data"]}
    assert set(rows) == {"m1 (baseline)", "m2", "m3", "base"}  # the bench's baseline ranked like any other
    assert rows["m1 (baseline)"][3] == "–" and rows["base"][3] != "–"  # no interval against itself


def test_inspect_and_compare(app_url):
    from gradio_client import Client

    client = Client(app_url, verbose=False)
    query, model_out, base_out, detail = client.predict(
        "3: Question 3: how do I do task 3?", "m2", "be brief", "", api_name="/inspect"
    )
    assert query.startswith("Question 3") and model_out.startswith("m2 answer 3") and base_out.startswith("base")
    assert "shown first" in detail and "shown second" in detail
    a, b, _plot, tau, _status = client.predict("Prefer short.", "Prefer long.", N_QUERIES, api_name="/compare")
    assert "Kendall tau" in tau and len(a["data"]) == len(b["data"]) == len(MODELS)


def test_upload_is_validated_then_ranked_inspected_and_unticked(app_url, tmp_path):
    from gradio_client import Client, handle_file

    client = Client(app_url, verbose=False)
    bad = tmp_path / "bad.json"
    bad.write_text('[{"instruction": "Question 0: how do I do task 0?", "output": 5}]')
    *_, message = client.predict(handle_file(str(bad)), "mine", api_name="/upload")
    assert "Upload refused" in message and "bad.json item:1: output: expected str, got int" in message
    assert "/tmp" not in message
    broken = tmp_path / "broken.json"
    broken.write_text('[{"instruction": ')
    *_, message = client.predict(handle_file(str(broken)), "mine", api_name="/upload")
    assert "malformed JSON" in message
    good = tmp_path / "model_outputs.json"
    good.write_text(json.dumps([{"instruction": f"Question {i}: how do I do task {i}?", "output": f"mine {i}"}
                                for i in range(N_QUERIES)]))  # fmt: skip
    models, inspectable, _file, message = client.predict(handle_file(str(good)), "mine", ["m1"], api_name="/upload")
    ticked = models["value"]
    assert "Added **upload:mine**" in message and ticked == ["m1", "upload:mine"]  # ticked in Models at once
    assert ["upload:mine"] * 2 in models["choices"] and ["upload:mine"] * 2 in inspectable["choices"]  # Inspect
    table, _, _, _, _ = client.predict(list(TOPICS), "", "", "", "base", ticked, N_QUERIES, api_name="/customize")
    ranked = {row[1]: row for row in table["data"]}  # the upload is ranked in this session, beside m1
    assert set(ranked) == {"base (baseline)", "m1", "upload:mine"} and ranked["upload:mine"][6] == N_QUERIES
    table, _, _, _, _ = client.predict(list(TOPICS), "", "", "", "base", ["m1"], N_QUERIES, api_name="/customize")
    assert {row[1] for row in table["data"]} == {"base (baseline)", "m1"}  # unticked: left out
    query, answer, _base, detail = client.predict("3: Question 3: how do I do task 3?", "upload:mine", "", "",
                                                  api_name="/inspect")  # fmt: skip
    assert query.startswith("Question 3") and answer == "mine 3" and "P(upload:mine preferred)" in detail


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (.ci/run installs it)")
@pytest.mark.slow
def test_browser_stop_keeps_a_partial_board_and_rank_right_after_stop_runs(slow_app_url):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(slow_app_url)
        page.get_by_role("tab", name="Customize").click()
        status = page.locator("#custom-status")
        page.locator("#criteria textarea").fill("Prefer lists.")
        page.locator("#rank").click()
        status.get_by_text("scoring...").wait_for(timeout=60_000)
        pressed = time.perf_counter()
        page.get_by_role("button", name="Stop").click()
        status.get_by_text("stopped at").wait_for(timeout=30_000)
        assert time.perf_counter() - pressed < 5  # one query takes 0.5 s here; a batch of them would take 8
        assert '"Prefer lists."' in status.inner_text() and "partial board" in status.inner_text()
        assert ".csv" in page.locator("#custom-files").inner_text()  # the partial board downloads
        page.locator("#criteria textarea").fill("Prefer code examples.")
        page.locator("#rank").click()
        status.get_by_text("scoring...").wait_for(timeout=60_000)
        page.get_by_role("button", name="Stop").click()
        page.locator("#criteria textarea").fill("Prefer short, concise answers.")
        page.locator("#rank").click()  # at once, while the stopped job finishes its query
        status.get_by_text('"Prefer short, concise answers."').wait_for(timeout=60_000)
        status.get_by_text("done").wait_for(timeout=60_000)
        assert '"Prefer short, concise answers."' in status.inner_text()  # the status names the board's criteria
        assert "m1" in page.locator("#custom-table").inner_text()
        browser.close()


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (.ci/run installs it)")
@pytest.mark.slow
def test_browser_runs_a_custom_leaderboard(app_url, tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(app_url)
        page.get_by_text("General preference: done").wait_for(timeout=60_000)
        page.get_by_role("tab", name="Customize").click()
        page.locator("#criteria textarea").fill("Prefer short, concise answers.")
        page.locator("#rank").click()
        page.locator("#custom-status").get_by_text("done").wait_for(timeout=60_000)
        table_text = page.locator("#custom-table").inner_text()
        assert "m1" in table_text and "base (baseline)" in table_text
        page.screenshot(path=str(tmp_path / "customize.png"), full_page=True)
        browser.close()
    assert (tmp_path / "customize.png").stat().st_size > 10_000


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (.ci/run installs it)")
@pytest.mark.slow
def test_browser_hostile_upload_names_render_as_text_everywhere(app_url, tmp_path):
    from playwright.sync_api import sync_playwright

    good = tmp_path / "model_outputs.json"
    good.write_text(json.dumps([{"instruction": f"Question {i}: how do I do task {i}?", "output": f"mine {i}"}
                                for i in range(N_QUERIES)]))  # fmt: skip
    names = ["<b>bold</b>", "<script>alert(1)</script>", "$\\undefinedcmd{x}$"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        dialogs = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(app_url)
        page.get_by_role("tab", name="Add a model").click()
        for name in names:
            page.locator("#upload-file input[type=file]").set_input_files(str(good))
            page.locator("#upload-file").get_by_text("model_outputs.json").first.wait_for(timeout=30_000)
            page.get_by_label("Model name (default: the file's generator)").fill(name)
            page.get_by_role("button", name="Add", exact=True).click()
            page.locator("#upload-status").get_by_text(f"upload:{name}").wait_for(timeout=60_000)
            assert page.locator("#upload-status b, #upload-status script, #upload-status .katex").count() == 0
        page.get_by_role("tab", name="Customize").click()
        page.locator("#criteria textarea").fill("Prefer short answers.")
        page.locator("#rank").click()
        page.locator("#custom-status").get_by_text("done").wait_for(timeout=60_000)
        table = page.locator("#custom-table")
        for name in names:  # each name is a table cell's text, never markup
            assert f"upload:{name}" in table.inner_text()
        assert table.locator("b, script, .katex").count() == 0 and not dialogs
        browser.close()


def test_a_visitor_may_add_at_most_three_models(app_url, tmp_path):
    from gradio_client import Client, handle_file

    client = Client(app_url, verbose=False)  # a new visitor: a new session, no uploads yet
    good = tmp_path / "model_outputs.json"
    good.write_text(json.dumps([{"instruction": f"Question {i}: how do I do task {i}?", "output": f"mine {i}"}
                                for i in range(N_QUERIES)]))  # fmt: skip
    for name in ("one", "two", "three"):
        assert "Added" in client.predict(handle_file(str(good)), name, api_name="/upload")[-1]
    message = client.predict(handle_file(str(good)), "four", api_name="/upload")[-1]
    assert "Upload refused" in message and "at most 3 uploaded models per visitor" in message
    assert "Added" in client.predict(handle_file(str(good)), "two", api_name="/upload")[-1]  # replacing one is fine


@pytest.fixture(scope="module")
def compositional_app_url(tmp_path_factory):
    """The app over the toy bench with the shipped compositional CRM: the one that takes votes."""
    crm = Path(__file__).resolve().parents[1] / "space" / "models" / "crm-compositional"
    yield from served(crm, tmp_path_factory.mktemp("cache-c") / "scores.sqlite")


def test_votes_refit_the_board_and_the_profile_reloads_to_the_same_board(compositional_app_url):
    from gradio_client import Client, handle_file

    client = Client(compositional_app_url, verbose=False)
    topics = ["Creative Writing & Literature", "Humor & Entertainment"]
    request = (topics, "", "Prefer short answers.", "", "base", ["m1", "m2", "m3"], N_QUERIES)
    first = client.predict(*request, api_name="/ask")
    assert "0 vote(s)" in first[7] and first[4].startswith("Question")  # a query and two answers to vote on
    for _ in range(3):  # the visitor keeps preferring answer B
        out = client.predict(*request, api_name="/vote_b")
    assert "3 vote(s)" in out[7] and "Custom (your votes):" in out[3]
    assert out[0]["data"] != first[0]["data"]  # the board moved with the votes
    assert "The votes moved:" in out[7] and "->" in out[7]  # how the weights moved, property names and numbers
    profile = json.loads(Path(out[8]).read_text())
    assert len(profile["votes"]) == 3 and profile["criteria"] == ["Prefer short answers."]
    other = Client(compositional_app_url, verbose=False)  # another visitor loads the downloaded profile
    criteria, _dislikes, _topics, message = other.predict(handle_file(out[8]), api_name="/load_profile")
    assert criteria == "Prefer short answers." and "3 vote(s)" in message
    assert out[9].startswith("?profile=")  # no browser page here: the link is its query string
    again = other.predict(*request, api_name="/ask")
    assert again[0]["data"] == out[0]["data"]  # the same board


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (.ci/run installs it)")
@pytest.mark.slow
def test_browser_votes_sees_the_weights_move_and_the_link_and_profile_reopen_the_board(compositional_app_url, tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(compositional_app_url)
        page.get_by_role("tab", name="Customize").click()
        page.locator("#criteria textarea").fill("Prefer short answers.")
        page.get_by_text("Help it learn your taste").click()
        page.locator("#taste-ask").click()
        page.locator("#taste-read").get_by_text("0 vote(s)").wait_for(timeout=60_000)
        for n in (1, 2, 3):
            page.locator("#vote-b").click()
            page.locator("#taste-read").get_by_text(f"{n} vote(s)").wait_for(timeout=60_000)
        assert "The votes moved:" in page.locator("#taste-read").inner_text()
        assert "Custom (your votes):" in page.locator("#custom-status").inner_text()
        assert "usl-profile" in page.locator("#profile-out").inner_text()  # offered for download
        page.locator("#custom-table .wrap.hide").wait_for(state="attached", timeout=60_000)
        board = settled_text(page.locator("#custom-table"))  # the last vote's board, not one still being replaced
        link = page.locator("#share-link textarea").input_value()
        assert link.startswith(compositional_app_url) and "?profile=" in link
        with page.expect_download() as download:
            page.locator("#profile-out a").first.click()
        saved = tmp_path / download.value.suggested_filename  # the upload box takes .json files only
        download.value.save_as(saved)

        def same_board_after(open_page) -> None:  # a fresh visitor's page shows the same board, with the 3 votes
            fresh = browser.new_page(viewport={"width": 1280, "height": 1000})
            open_page(fresh)
            fresh.locator("#taste-read").get_by_text("3 vote(s). The votes moved").wait_for(timeout=60_000)
            fresh.locator("#custom-table .wrap.hide").wait_for(state="attached", timeout=60_000)  # not "processing"
            assert settled_text(fresh.locator("#custom-table")) == board
            assert "Prefer short answers." in fresh.locator("#criteria textarea").input_value()
            fresh.close()

        same_board_after(lambda fresh: fresh.goto(link))  # the share link ranks by itself

        def reload_profile(fresh) -> None:
            fresh.goto(compositional_app_url)
            fresh.get_by_role("tab", name="Customize").click()
            fresh.get_by_text("Help it learn your taste").click()
            fresh.locator("#profile-in input[type=file]").set_input_files(saved)
            fresh.locator("#taste-read").get_by_text("Profile loaded").wait_for(timeout=60_000)
            fresh.locator("#taste-ask").click()

        same_board_after(reload_profile)
        broken = browser.new_page()
        broken.goto(link[:-12])  # a link cut short says so instead of failing silently
        broken.locator("#taste-read").get_by_text("Share link not opened").wait_for(timeout=60_000)
        browser.close()


def test_view_memo_keeps_the_latest_views_for_a_while_and_job_folders_are_pruned(tmp_path, monkeypatch):
    from usl_space import service as app

    memo = app.ViewMemo(size=2, max_age=60)
    memo.put(("a",), (1,))
    memo.put(("b",), (2,))
    assert memo.get(("a",)) == (1,)  # a is now the most recent
    memo.put(("c",), (3,))
    assert memo.get(("b",)) is None and memo.get(("a",)) == (1,) and memo.get(("c",)) == (3,)
    now = app.time.monotonic()
    monkeypatch.setattr(app.time, "monotonic", lambda: now + 61)
    assert memo.get(("a",)) is None  # too old: its files may be gone
    monkeypatch.undo()
    old = tmp_path / str(app.time.time_ns() - int(2 * 3600 * 1e9))
    old.mkdir()
    recent = app.job_folder(tmp_path)
    assert recent.is_dir() and not old.exists() and app.job_folder(tmp_path) != recent


def test_customize_controls_become_one_checked_request(tiny_qwen_crm):
    """The form's controls are one RankRequest (what the app memoizes by): cleaned criteria, the selected queries,
    the bench's own baseline kept as a row under another one, and what is wrong said to the visitor."""
    import gradio as gr
    from crm_core.loader import load_crm
    from usl_space.service import AppService
    from usl_space.tabs.customize import CustomizeTab

    bench = toy_bench()
    service = AppService(make_engine(bench, load_crm(tiny_qwen_crm), ScoreCache(":memory:"), toy_topics(bench)))
    svc = CustomizeTab(service, {})
    base, every = service.engine.baseline, service.topic_names
    asked = svc.form_request(every, "", " Be  brief. \n", "", base, ["m1"], 4)
    assert asked == svc.form_request(every, "", "Be brief.", None, None, ["m1"], 4)  # one board, one memo key
    assert (asked.criteria, asked.baseline, asked.query_ids, asked.models) == (("Be brief.",), None, None, ("m1",))
    other = svc.form_request(every[:1], "", "", "", "m2", ["m1"], None)
    assert other.baseline == "m2" and other.models == ("m1", base) and other.query_ids == tuple(range(N_QUERIES // 2))
    with pytest.raises(gr.Error, match="select at least one model"):
        svc.form_request(every, "", "", "", base, [], None)
    with pytest.raises(gr.Error, match="no topic is ticked"):
        svc.form_request([], "", "", "", base, ["m1"], None)
    with pytest.raises(gr.Error, match="at most 300 characters"):
        svc.form_request(every, "", "x" * 301, "", base, ["m1"], None)


class SlowSides:
    """The shipped compositional CRM, taking `seconds` longer per batch of responses it encodes, as a whole bench
    or a big upload does on a CPU: time to see the progress and press Stop."""

    def __init__(self, scorer, seconds: float):
        self.scorer, self.seconds = scorer, seconds

    def __getattr__(self, name):
        return getattr(self.scorer, name)

    def response_side(self, *args, **kwargs):
        time.sleep(self.seconds)
        return self.scorer.response_side(*args, **kwargs)


@pytest.fixture(scope="module")
def slow_sides_app_url(tmp_path_factory):
    """An app whose response side is not built yet and builds slowly; uploads are encoded two answers a step."""
    from crm_core.loader import load_crm
    from usl_space.app import build_app
    from usl_space.tabs import add_model

    crm = Path(__file__).resolve().parents[1] / "space" / "models" / "crm-compositional"
    bench = toy_bench()
    cache = ScoreCache(tmp_path_factory.mktemp("c") / "scores.sqlite")
    engine = make_engine(bench, SlowSides(load_crm(crm), 3.0), cache, toy_topics(bench))
    chunk, add_model.UPLOAD_CHUNK = add_model.UPLOAD_CHUNK, 2
    demo = build_app(engine)
    demo.queue(default_concurrency_limit=4)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield f"http://127.0.0.1:{port}/", engine
    demo.close()
    add_model.UPLOAD_CHUNK = chunk


@pytest.mark.slow
def test_a_visitor_is_told_what_the_app_waits_for_and_stop_ends_an_upload_within_a_step(slow_sides_app_url, tmp_path):
    from gradio_client import Client, handle_file

    url, engine = slow_sides_app_url
    client = Client(url, verbose=False)
    started = time.perf_counter()
    job = client.submit(list(TOPICS), "", "Prefer short answers.", "", "base", ["m1"], N_QUERIES,
                        api_name="/customize")  # fmt: skip
    final_status = job.result()[3]
    waited = time.perf_counter() - started
    statuses = [out[3] for out in job.outputs()]
    assert any(s.startswith("Waiting for the bench: building the bench's response side") and " of " in s
               and "so far" in s for s in statuses)  # fmt: skip
    assert "done" in final_status and engine.table_ready
    reported = float(re.search(r"models, ([0-9.]+) s", final_status).group(1))
    assert 3.0 <= reported <= waited  # the time since the visitor asked, the build's wait included
    good = tmp_path / "model_outputs.json"
    good.write_text(json.dumps([{"instruction": f"Question {i}: how do I do task {i}?", "output": f"mine {i}"}
                                for i in range(N_QUERIES)]))  # fmt: skip
    job = client.submit(handle_file(str(good)), "mine", ["m1"], api_name="/upload")
    deadline = time.monotonic() + 60
    while not any("encoding the answers of upload:mine" in str(out[-1]) for out in job.outputs()):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    asked = time.perf_counter()
    press_without_waiting(client, "/stop_upload")
    *_, message = job.result()
    assert "Upload stopped" in message and "nothing was added" in message
    assert time.perf_counter() - asked < 3.0 + 2.0  # heard before the next step of two answers (3 s each here)
    assert not engine._uploads


class _TolerantIds(set):
    def remove(self, item) -> None:
        self.discard(item)


def press_without_waiting(client, api_name: str) -> None:
    """Trigger an event of this client's session (a button press) without waiting for its result. gradio_client
    reads all of one session's jobs from one stream, and an event that completes before the client has noted its
    id kills that stream (gradio-app/gradio#10354: KeyError in stream_messages): a Stop pressed while the upload
    streams did so in about one CI run of five. The press goes straight to the queue, and the client forgets
    completions of events it did not start instead of failing on them."""
    import httpx

    client.pending_event_ids = _TolerantIds(client.pending_event_ids)
    body = {"data": [], "fn_index": client._infer_fn_index(api_name, None), "session_hash": client.session_hash}
    httpx.post(client.sse_data_url, json=body, headers=client.headers, timeout=10).raise_for_status()


def in_view(page, selector: str) -> bool:
    """Whether the element's top is on the screen (scrolled into view), not above or below the fold."""
    box = page.locator(selector).bounding_box()
    return box is not None and -2 <= box["y"] < page.viewport_size["height"]  # scrolled to its top: y is ~0


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (.ci/run installs it)")
@pytest.mark.slow
def test_browser_on_a_phone_key_columns_fit_unread_criteria_are_named_and_links_open_in_view(compositional_app_url,
                                                                                              tmp_path):  # fmt: skip
    from playwright.sync_api import sync_playwright
    from usl_space.taste import Profile

    phone = {"width": 390, "height": 844}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=phone)
        page.goto(compositional_app_url)
        page.get_by_text("General preference: done").wait_for(timeout=60_000)
        # the toy bench lacks the CRM's reference panel: the status names the bench's own panel it was judged against
        status = page.get_by_text("General preference: done").inner_text()
        named = re.search(r"own top (\d) models on a first board without criteria: (.+)$", status)
        assert (
            named
            and len(named[2].split(", ")) == int(named[1])
            and set(named[2].split(", ")) < {"base", "m1", "m2", "m3"}
        ), status
        assert page.evaluate("document.documentElement.scrollWidth") <= phone["width"]  # no sideways page scroll
        for header in ("Rank", "Model", "Win rate %", "95% CI %"):  # the key columns are on the screen
            box = page.locator("#leaderboard-table th").filter(has_text=header).first.bounding_box()
            assert box is not None and box["x"] + box["width"] <= phone["width"], header
        lines_of_rank = page.evaluate("""() => { const span = [...document.querySelectorAll('#leaderboard-table th')]
            .find(th => th.innerText.trim() === 'Rank').querySelector('.header');
            const range = document.createRange(); range.selectNodeContents(span);
            return range.getClientRects().length; }""")
        assert lines_of_rank == 1  # not "Ran k"
        page.screenshot(path=str(tmp_path / "phone.png"))
        page.get_by_role("tab", name="Customize").click()
        page.locator("#criteria textarea").fill("Prefer short answers.\nAnswer in French.")
        started = time.perf_counter()
        page.locator("#rank").click()
        page.locator("#custom-status").get_by_text("done").wait_for(timeout=60_000)
        ranked = time.perf_counter() - started
        status = page.locator("#custom-status").inner_text()
        assert "I could not read “Answer in French.” as anything I measure" in status  # said plainly, by name
        page.wait_for_timeout(1500)  # the smooth scroll
        assert in_view(page, "#custom-status")  # the board, not the controls above it, is on the screen
        page.locator("#criteria textarea").fill("x" * 301)  # too long: said in the status, the board stays
        page.locator("#rank").click()
        page.locator("#custom-status").get_by_text("Not ranked").wait_for(timeout=60_000)
        assert "at most 300 characters" in page.locator("#custom-status").inner_text()
        assert "base (baseline)" in page.locator("#custom-table").inner_text()  # not emptied under an "Error"
        link = f"{compositional_app_url}?profile={Profile(['Prefer short answers.']).link_token()}"
        fresh = browser.new_page(viewport=phone)
        started = time.perf_counter()
        fresh.goto(link)
        fresh.locator("#taste-read").get_by_text("0 vote(s)").wait_for(timeout=60_000)
        opened = time.perf_counter() - started
        assert opened < ranked + 10  # a link opens its board about as fast as Rank does (not 19-85 s)
        deadline = time.monotonic() + 20  # the board lands, then the page scrolls to it: on a busy machine, seconds
        while not (in_view(fresh, "#custom-status") and "Custom" in fresh.locator("#custom-status").inner_text()):
            assert time.monotonic() < deadline, "the shared board was not scrolled into view"
            fresh.wait_for_timeout(250)
        browser.close()
    assert (tmp_path / "phone.png").stat().st_size > 10_000


@pytest.fixture(scope="module")
def two_benches_url(tmp_path_factory):
    """The app serving two benches (the toy one, then a second without m3) with the shipped compositional CRM."""
    import polars as pl
    from crm_core.data import make_bench
    from crm_core.loader import load_crm
    from usl_space.app import build_app

    crm = Path(__file__).resolve().parents[1] / "space" / "models" / "crm-compositional"
    toy = toy_bench()
    second = make_bench("second", "test", "base", toy.queries, toy.responses.filter(pl.col("model") != "m3"))
    scorer, cache = load_crm(crm), ScoreCache(tmp_path_factory.mktemp("cache-2") / "scores.sqlite")
    demo = build_app([make_engine(b, scorer, cache, toy_topics(b)) for b in (toy, second)])
    demo.queue(default_concurrency_limit=2)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield f"http://127.0.0.1:{port}/"
    demo.close()


def test_each_bench_has_its_page_and_its_api_names(two_benches_url):
    from gradio_client import Client
    from usl_space.benches import switch_address
    from usl_space.taste import Profile

    client = Client(two_benches_url, verbose=False)
    topics = ["Creative Writing & Literature", "Humor & Entertainment"]
    first = client.predict(topics, "", "Keep it brief.", "", "base", ["m1", "m2", "m3"], N_QUERIES,
                           api_name="/customize")  # fmt: skip
    second = client.predict(topics, "", "Keep it brief.", "", "base", ["m1", "m2"], N_QUERIES,
                            api_name="/second_customize")  # fmt: skip
    assert "done" in first[3] and "done" in second[3]
    assert {row[1] for row in first[0]["data"]} > {row[1] for row in second[0]["data"]} == {"base (baseline)", "m1",
                                                                                            "m2"}  # fmt: skip
    from usl_space.benches import BenchPage

    pages = [BenchPage("toy: 12 prompts", "", ""), BenchPage("second: 12 prompts", "second", "second_")]
    address = switch_address(pages, "second: 12 prompts", "Keep it brief.\n\nNo emojis.", "", topics[:1])
    assert address.startswith("./second?profile=")
    carried = Profile.from_link_token(address.split("profile=", 1)[1])
    assert carried.criteria == ["Keep it brief.", "No emojis."] and carried.topics == topics[:1] and not carried.votes
    assert switch_address(pages, "no such bench", "x", "", []) == ""


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (.ci/run installs it)")
@pytest.mark.slow
def test_browser_bench_picker_opens_the_other_bench_with_the_criteria_and_ranks_it(two_benches_url):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(two_benches_url)
        page.get_by_role("tab", name="Customize").click()
        page.locator("#criteria textarea").fill("Keep it brief.")
        picker = page.locator("#bench-picker input")
        picker.click()
        page.get_by_role("option", name=re.compile(r"^second: ")).wait_for()
        # chosen as a visitor may, by typing and Enter: a click on the option failed under load in CI when the
        # opening list was still moving and left it outside the viewport
        picker.fill("")
        picker.press_sequentially("second")
        picker.press("Enter")
        page.wait_for_url(re.compile(r"/second\?profile="), timeout=30_000)
        page.locator("#custom-status").get_by_text("done").wait_for(timeout=60_000)  # the shared board, ranked
        assert page.locator("#criteria textarea").input_value() == "Keep it brief."
        assert page.locator("#bench-picker input").input_value().startswith("second: ")
        table_text = page.locator("#custom-table").inner_text()
        assert "m2" in table_text and "m3" not in table_text  # the second bench's own models
        browser.close()
