"""The web board (``zertz serve``) in a real browser: Playwright driving Debian's chromium headless.

Games by mouse and by keyboard against ``random`` to their end, undo, a refused move, a record
stepped through, the analysis, a watched game, two browsers with their own games, a page of
another site that tries to act on a game (refused), a stop by SIGTERM with connections open, and
a bounded load test of the API (no browser). Screenshots go to ``$ZERTZ_SCREENSHOTS`` (default
``target/screenshots`` at the repository root) for a person to look at.

Chromium is ``$ZERTZ_CHROMIUM``, else ``chromium`` on the PATH (``scripts/setup-browser.sh``
installs Debian's package).
"""

from __future__ import annotations

import http.server
import json
import os
import random
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import zertz

from conftest import BUILTIN_V1

playwright_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("ZERTZ_SCREENSHOTS", ROOT / "target" / "screenshots"))
# A game against random on 37 rings lasts a few dozen turns; this bounds a runaway loop.
MAX_TURNS = 400


def chromium_path() -> str:
    path = os.environ.get("ZERTZ_CHROMIUM") or shutil.which("chromium")
    if not path:
        pytest.fail(
            "no chromium: run scripts/setup-browser.sh (Debian's chromium package) "
            "or set ZERTZ_CHROMIUM"
        )
    return path


@pytest.fixture(scope="module")
def server(program: Path) -> Iterator[str]:
    """A ``zertz serve`` on a free loopback port; its URL."""
    proc = subprocess.Popen(
        [str(program), "serve", "--port", "0", "--seed", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "http://" not in line:
            proc.kill()
            _, err = proc.communicate(timeout=10)
            pytest.fail(f"zertz serve did not start: {line!r} {err!r}")
        url = line[line.index("http://") :].split()[0]
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    assert proc.returncode == 0, f"zertz serve ended with {proc.returncode} after SIGTERM"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, server: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1200, "height": 860})
    # Waits end when what they wait for happens; only what never does takes a minute, however
    # busy the machine (Playwright's own default: 30 s).
    context.set_default_timeout(60_000)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(server)
    idle(pg)
    yield pg
    context.close()
    assert errors == [], f"errors in the page: {errors}"


def idle(page: Any) -> None:
    """Waits until no request is on its way and the page shows a game."""
    page.wait_for_selector('[data-cell="d4"]')
    page.wait_for_function("() => !document.body.dataset.busy", timeout=60_000)


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def status(page: Any) -> str:
    return str(page.inner_text("#status"))


def over(page: Any) -> bool:
    return bool(page.evaluate("() => game !== null && game.over"))


def moves(page: Any) -> list[str]:
    return [str(t) for t in page.locator("#moves li").all_inner_texts()]


def new_game(page: Any, board: int = 37, colour: str = "P0", opponent: str = "random") -> None:
    page.select_option("#board", str(board))
    page.select_option("#colour", colour)
    page.fill("#opponent", opponent)
    page.click("#new-game")
    idle(page)
    assert moves(page) == [] or colour != "P0"


def click_any(page: Any, selector: str, rng: random.Random) -> bool:
    """Clicks one of the elements `selector` picks, at random; False when there is none."""
    items = page.locator(selector)
    n = items.count()
    if n == 0:
        return False
    items.nth(rng.randrange(n)).click()
    return True


def test_a_game_by_mouse_against_random_to_its_end(page: Any) -> None:
    rng = random.Random(1)
    new_game(page, board=37)
    first = True
    hops = 0
    for _ in range(MAX_TURNS):
        if over(page):
            break
        before = len(moves(page))
        if page.locator("#pass:not([hidden])").count():
            page.click("#pass")
        elif page.locator("#colours button").count():
            # A placement: a colour, a ring, then a ring to remove (red) if any can be.
            assert click_any(page, "#colours button", rng)
            assert click_any(page, ".cell.choice", rng)
            if first:
                shot(page, "mouse-placing")
                first = False
            if page.locator(".cell.remove-choice").count():
                assert click_any(page, ".cell.remove-choice", rng)
        else:
            # A capture hop: the jumping marble (chosen already in the middle of a chain), then
            # where it lands.
            if page.locator(".cell.selected").count() == 0:
                assert click_any(page, ".cell.choice", rng), "no legal choice highlighted"
                assert page.locator(".cell.selected").count() == 1
            assert click_any(page, ".cell.choice", rng)
            hops += 1
        idle(page)
        assert page.inner_text("#message") == ""
        assert over(page) or len(moves(page)) >= before
    assert over(page), "the game did not end"
    assert hops > 0, "no capture was played by mouse"
    text = status(page)
    assert "wins" in text or "draw" in text, text
    shot(page, "mouse-game-over")
    # The drawing agrees with the game: marbles on rings, removed rings marked.
    assert page.locator("[data-cell][data-removed]").count() > 0
    for cell in page.locator("[data-cell][data-marble]").all():
        assert cell.get_attribute("data-removed") is None
        assert cell.get_attribute("data-marble") in ("W", "G", "B")
        assert cell.get_attribute("data-cell") == cell.get_attribute("data-cell").lower()


def legal_text(page: Any, rng: random.Random) -> str:
    """A legal single action of the person to move, in notation, from the page's game."""
    legal = page.evaluate("() => game.legal")
    if legal["hops"]:
        return str(rng.choice(legal["hops"])["text"])
    if legal["pass"]:
        return "pass"
    colour = rng.choice(legal["colours"])
    at = rng.choice(sorted(legal["place"]))
    removes = legal["place"][at]
    return f"{colour}{at},{rng.choice(removes)}" if removes else f"{colour}{at}"


def type_move(page: Any, text: str) -> None:
    page.fill("#move", text)
    page.press("#move", "Enter")
    idle(page)


def test_a_game_by_keyboard_against_random_to_its_end(page: Any) -> None:
    rng = random.Random(2)
    new_game(page, board=61, colour="P1")
    # The bot moved first.
    assert len(moves(page)) == 1
    assert page.locator("[data-cell][data-marble]").count() == 1
    for _ in range(MAX_TURNS):
        if over(page):
            break
        text = legal_text(page, rng)
        type_move(page, text)
        assert page.inner_text("#message") == "", text
        assert page.input_value("#move") == ""
    assert over(page)
    assert "wins" in status(page) or "draw" in status(page)
    shot(page, "keyboard-game-over")


def test_the_page_takes_its_boards_players_and_limits_from_the_server(page: Any) -> None:
    """The page's HTML names no board, player or limit: it builds them from ``/api/info``, so
    they are the server's."""
    idle(page)
    boards = page.eval_on_selector_all("#board option", "os => os.map(o => Number(o.value))")
    assert boards == list(zertz.BOARDS)
    assert page.input_value("#board") == str(zertz.BOARDS[0])
    info = page.evaluate("() => fetch('/api/info').then(r => r.json())")
    suggested = page.eval_on_selector_all("#players option", "os => os.map(o => o.value)")
    assert suggested == info["players"] + info["suggested"]
    assert page.get_attribute("#simulations", "max") == str(info["max_page_simulations"])


def test_a_bad_move_is_refused_with_a_message(page: Any) -> None:
    new_game(page)
    type_move(page, "Wz9,a1")
    message = page.inner_text("#message")
    assert "z9" in message, message
    assert page.input_value("#move") == "Wz9,a1"  # kept, to be corrected
    type_move(page, "Wd4,d4")
    assert "illegal" in page.inner_text("#message").lower()
    assert moves(page) == []
    shot(page, "bad-move")
    # A good move clears the message.
    type_move(page, "Wd4,a1")
    assert page.inner_text("#message") == ""
    assert moves(page)[0] == "Wd4,a1"


def test_undo_takes_back_the_move_and_the_reply(page: Any) -> None:
    new_game(page, board=48)
    type_move(page, "Bd4,a1")
    assert len(moves(page)) == 2
    assert page.get_attribute('[data-cell="d4"]', "data-marble") == "B"
    assert page.get_attribute('[data-cell="a1"]', "data-removed") is not None
    page.click("#undo")
    idle(page)
    assert moves(page) == []
    assert page.get_attribute('[data-cell="d4"]', "data-marble") is None
    assert page.get_attribute('[data-cell="a1"]', "data-removed") is None
    assert page.is_disabled("#undo")
    assert status(page).startswith("P0 to move")


def test_resign_ends_the_game(page: Any) -> None:
    new_game(page)
    page.click("#resign")
    idle(page)
    assert status(page) == "P1 wins: P0 resigned"
    assert page.locator("#colours button").count() == 0


def test_a_record_is_stepped_through(page: Any, program: Path, tmp_path: Path) -> None:
    out = tmp_path / "games.jsonl"
    subprocess.run(
        [
            *(str(program), "match", "--player", "greedy", "--player", "random"),
            *("--games", "2", "--threads", "1", "--out", str(out)),
        ],
        check=True,
        capture_output=True,
    )
    records = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    second = records[1]
    page.set_input_files("#record-file", str(out))
    page.wait_for_function("() => mode === 'record'")
    assert page.inner_text("#record-games") == "of 2"
    # The second game of the file.
    page.fill("#record-game", "2")
    page.press("#record-game", "Enter")
    page.wait_for_function(
        f"() => record && record.game === 1 && record.moves.length === {len(second['moves'])}"
    )
    assert moves(page) == second["moves"]
    assert page.locator("[data-cell][data-marble]").count() == 0
    page.click("#record-next")
    first = second["moves"][0]
    assert status(page).startswith(f"Record: turn 1 of {len(second['moves'])}")
    if first[0] in "WGB":
        at = first[1:].split(",")[0]
        assert page.get_attribute(f'[data-cell="{at}"]', "data-marble") == first[0]
    assert page.locator("#moves li.current").inner_text() == first
    page.click("#record-last")
    assert page.locator("#moves li.current").inner_text() == second["moves"][-1]
    winner = second["winner"]
    assert (f"{winner} wins" if winner else "no winner") in status(page)
    shot(page, "record-last")
    page.click("#record-prev")
    assert status(page).startswith(f"Record: turn {len(second['moves']) - 1} of")
    page.click("#record-first")
    assert page.locator("[data-cell][data-marble]").count() == 0
    # A file that is not a record.
    bad = tmp_path / "bad.sgf"
    bad.write_text("(;GM[1]")
    page.set_input_files("#record-file", str(bad))
    page.wait_for_function("() => document.querySelector('#message').textContent !== ''")
    assert "SGF" in page.inner_text("#message")
    page.click("#record-close")
    assert page.evaluate("() => mode") == "play"


def test_the_analysis_is_shown_in_a_table_and_on_the_board(page: Any) -> None:
    new_game(page)
    page.fill("#simulations", "300")
    page.click("#analyze")
    page.wait_for_selector("#analysis tbody tr")
    rows = page.locator("#analysis tbody tr")
    assert 1 <= rows.count() <= 12
    cells = rows.nth(0).locator("td").all_inner_texts()
    assert cells[0][0] in "WGB" and int(cells[1]) > 0
    assert "after 300 simulations" in page.inner_text("#analysis-value")
    assert page.locator(".overlay text").count() >= 1
    shot(page, "analysis")


def test_a_game_between_two_bots_is_watched_live(page: Any) -> None:
    page.select_option("#colour", "watch")
    page.fill("#opponent", "greedy")
    page.fill("#opponent-b", "random")
    page.click("#new-game")
    page.wait_for_function("() => document.querySelectorAll('#moves li').length >= 3")
    shot(page, "watching")
    page.wait_for_function("() => game.over", timeout=120_000)
    text = status(page)
    assert "wins" in text or "draw" in text, text
    assert page.evaluate("() => game.players") == ["greedy", "random"]


def test_two_browsers_have_their_own_games(browser: Any, server: str) -> None:
    contexts = [browser.new_context() for _ in range(2)]
    try:
        pages = [c.new_page() for c in contexts]
        for p in pages:
            p.goto(server)
            idle(p)
        type_move(pages[0], "Wd4,a1")
        type_move(pages[1], "Ge5,g1")
        assert moves(pages[0])[0] == "Wd4,a1"
        assert moves(pages[1])[0] == "Ge5,g1"
        assert pages[0].get_attribute('[data-cell="e5"]', "data-marble") in (None, "W", "G", "B")
        ids = [p.evaluate("() => game.id") for p in pages]
        assert ids[0] != ids[1]
    finally:
        for c in contexts:
            c.close()


# ------------------------------------------------------------------------- other sites


def test_a_page_of_another_site_cannot_act_on_a_game(browser: Any, server: str) -> None:
    """A page served from another port (another origin) knows a game's id and sends the requests
    a page may send anywhere without asking: a form-like text/plain POST and a JSON one. The
    server refuses both; the game is as it was."""
    url = server.rstrip("/")
    game = post(f"{url}/api/games", {})
    resign = f"{url}/api/games/{game['id']}/resign"
    evil = (
        "<!doctype html><script>"
        f"fetch('{resign}', {{method: 'POST', mode: 'no-cors', body: '{{}}',"
        " headers: {'content-type': 'text/plain'}}).then(() => document.title += 'sent1');"
        f"fetch('{resign}', {{method: 'POST', body: '{{}}',"
        " headers: {'content-type': 'application/json'}}).catch(() => document.title += 'sent2');"
        "</script>"
    )

    class Evil(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = evil.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    context = browser.new_context()
    try:
        pg = context.new_page()
        pg.goto(f"http://127.0.0.1:{other.server_address[1]}/")
        pg.wait_for_function(
            "() => document.title.includes('sent1') && document.title.includes('sent2')"
        )
    finally:
        context.close()
        other.shutdown()
    with urllib.request.urlopen(f"{url}/api/games/{game['id']}", timeout=30) as resp:
        assert json.loads(resp.read())["over"] is False


def test_sigterm_stops_the_server_with_connections_open(program: Path) -> None:
    proc, url = start_server(program)
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    idle_connection = socket.create_connection((host, int(port)))
    half_sent = socket.create_connection((host, int(port)))
    half_sent.sendall(
        f"POST /api/games HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        "Content-Length: 100\r\n\r\n{".encode()
    )
    time.sleep(0.5)
    started = time.monotonic()
    proc.terminate()
    try:
        proc.wait(timeout=60)
    finally:
        idle_connection.close()
        half_sent.close()
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.returncode
    # Within three times its grace of 5 s, and the exit (later on a busy machine); a server that
    # waited for the half-sent body would take its 30 s.
    assert took < 25, f"zertz serve took {took:.1f} s to stop"


# ------------------------------------------------------------- offered networks and programs


def start_server(program: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [str(program), "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "http://" not in line:
        proc.kill()
        pytest.fail(f"zertz serve did not start: {line!r} {proc.communicate(timeout=10)[1]!r}")
    return proc, line[line.index("http://") :].split()[0].rstrip("/")


def post_error(url: str, body: dict[str, Any]) -> tuple[int, str]:
    """The status and message of a request that must fail."""
    with pytest.raises(urllib.error.HTTPError) as caught:
        post(url, body)
    err = caught.value
    return err.code, str(json.loads(err.read())["error"])


def test_a_network_and_a_program_offered_on_the_command_line(program: Path, tmp_path: Path) -> None:
    import torch

    from zertz.exported import export
    from zertz.nn import NetConfig, ZertzNet

    torch.manual_seed(0)
    model = export(
        ZertzNet(NetConfig.preset("tiny"), boards=[37, 61]).eval(),
        tmp_path / "net.safetensors",
        boards=[37, 61],
    )
    nn = f"nn:{model}:16"
    cmd = f"cmd:{program} engine --player greedy"
    proc, url = start_server(program, "--player", nn, "--player", cmd, "--device", "cpu")
    try:
        info = json.loads(urllib.request.urlopen(f"{url}/api/info", timeout=30).read())
        assert info["players"] == [nn, cmd] and info["default_opponent"] == nn
        # The network plays 37 and 61 rings, not 48.
        game = post(f"{url}/api/games", {"board": 61, "colour": "P1"})
        assert game["players"] == [nn, "you"] and game["bot_to_move"]
        game = post(f"{url}/api/games/{game['id']}/bot")
        assert len(game["moves"]) == 1 and not game["bot_to_move"]
        code, message = post_error(f"{url}/api/games", {"board": 48, "opponent": nn})
        assert code == 400 and "not 48" in message, message
        # A game of 48 rings that names no opponent: the first offered player that plays it.
        game48 = post(f"{url}/api/games", {"board": 48, "colour": "P1"})
        assert game48["players"] == [cmd, "you"], game48
        # Its analysis: priors from the network (not uniform), values in -1..1.
        analysis = post(f"{url}/api/analyze", {"position": game["position"], "simulations": 32})
        priors = [m["prior"] for m in analysis["moves"]]
        assert len(set(priors)) > 1 and abs(sum(priors) - 1) < 0.05
        assert -1 <= analysis["value"] <= 1
        # The program, a process per game, plays its turns over the engine protocol.
        game = post(f"{url}/api/games", {"board": 37, "opponent": cmd, "colour": "P1"})
        game = post(f"{url}/api/games/{game['id']}/bot")
        assert len(game["moves"]) == 1
        # What the command line did not offer is refused.
        for other in (f"nn:{model}:17", f"cmd:{program} engine", "nn:/etc/passwd"):
            code, message = post_error(f"{url}/api/games", {"opponent": other})
            assert code == 400 and "not offered" in message, message
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_a_library_agent_exported_to_the_engine_plays_a_game_in_the_browser(
    browser: Any, program: Path, tmp_path: Path
) -> None:
    """A MaskablePPO agent on the project's network (zertz.sb3.BoardPolicy), trained a little and
    exported as a network file, is offered by ``zertz serve`` and plays a person (the keyboard)
    to the end of a game on the web board."""
    import torch
    from sb3_contrib import MaskablePPO

    import zertz.sb3

    torch.set_num_threads(1)
    env = zertz.sb3.VecEnv(4, board=37, opponent="random", seed=0)
    model = MaskablePPO(zertz.sb3.BoardPolicy, env, n_steps=16, batch_size=32, seed=0)
    model.learn(32)
    assert isinstance(model.policy, zertz.sb3.BoardPolicy)
    agent = model.policy.export(tmp_path / "agent.safetensors")
    spec = f"nn:{agent}:1"
    proc, url = start_server(program, "--player", spec, "--device", "cpu", "--seed", "1")
    context = browser.new_context(viewport={"width": 1200, "height": 860})
    context.set_default_timeout(60_000)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        idle(page)
        new_game(page, board=37, colour="P1", opponent=spec)
        # The agent moved first.
        assert len(moves(page)) == 1
        rng = random.Random(3)
        for _ in range(MAX_TURNS):
            if over(page):
                break
            type_move(page, legal_text(page, rng))
            assert page.inner_text("#message") == ""
        assert over(page)
        assert "wins" in status(page) or "draw" in status(page)
        shot(page, "agent-game-over")
        assert errors == [], f"errors in the page: {errors}"
    finally:
        context.close()
        proc.terminate()
        proc.wait(timeout=20)


def test_serve_refuses_bad_arguments(program: Path, tmp_path: Path) -> None:
    missing = tmp_path / "missing.safetensors"
    for args, needle in [
        (["--player", f"nn:{missing}"], "missing.safetensors"),
        # A program (the TorchScript an older zertz exported) is not a network file.
        (["--player", f"nn:{BUILTIN_V1}"], "convert-network"),
        (["--player", "alphazero"], "unknown player"),
        (["--host", "203.0.113.1"], "cannot listen"),
    ]:
        done = subprocess.run(
            [str(program), "serve", "--port", "0", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, (args, done.stderr)
        assert needle in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1


# ----------------------------------------------------------------------------------- load test


def post(url: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    data = json.dumps(body or {}).encode()
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        result: dict[str, Any] = json.loads(resp.read())
        return result


def play_random_games(url: str, seconds: float, seed: int, counts: dict[str, int]) -> None:
    """One client: games against random on random boards, random legal moves, until the time is
    up and it has finished a game (however slowly a busy machine plays them)."""
    rng = random.Random(seed)
    end = time.monotonic() + seconds

    def go_on() -> bool:
        return time.monotonic() < end or counts["games"] == 0

    while go_on():
        board = rng.choice([37, 40, 43, 44, 48, 61])
        blitz = rng.random() < 0.5
        game = post(f"{url}/api/games", {"board": board, "blitz": blitz, "opponent": "random"})
        gid = game["id"]
        while not game["over"] and go_on():
            if game["bot_to_move"]:
                game = post(f"{url}/api/games/{gid}/bot")
                continue
            legal = game["legal"]
            if legal["hops"]:
                text = rng.choice(legal["hops"])["text"]
            elif legal["pass"]:
                text = "pass"
            else:
                at = rng.choice(sorted(legal["place"]))
                removes = legal["place"][at]
                colour = rng.choice(legal["colours"])
                text = f"{colour}{at},{rng.choice(removes)}" if removes else f"{colour}{at}"
            game = post(f"{url}/api/games/{gid}/play", {"move": text})
            counts["moves"] += 1
        counts["games"] += game["over"]


def test_fifty_clients_play_random_games_for_thirty_seconds(server: str) -> None:
    clients, seconds = 50, 30.0
    counts = [{"games": 0, "moves": 0} for _ in range(clients)]
    errors: list[str] = []

    def client(i: int) -> None:
        try:
            play_random_games(server.rstrip("/"), seconds, i, counts[i])
        except (urllib.error.URLError, OSError, KeyError, ValueError) as e:
            errors.append(f"client {i}: {e!r}")

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    # Each client ends its game after the time: only a game that never ends takes minutes more.
    for t in threads:
        t.join(timeout=seconds + 300)
    assert not any(t.is_alive() for t in threads), "a client hung"
    assert errors == []
    games = sum(c["games"] for c in counts)
    played = sum(c["moves"] for c in counts)
    print(f"load: {clients} clients, {seconds:.0f} s: {games} games, {played} moves")
    assert games >= clients and played > 10 * clients
    # The server still answers.
    assert post(f"{server.rstrip('/')}/api/games", {})["moves"] == []
