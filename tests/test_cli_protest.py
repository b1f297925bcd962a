"""``grace-arena protest``: the TD lists the open protests with what upholding each would do,
resolves them, and corrects a ruling of any cycle, against the record; a protest of a match a
live server serves is resolved through that server (its TD route, with the TD's token), a
correction of it is refused in one line and the match left as it was."""

from __future__ import annotations

from backends import on_both_backends
from live import clients, free_port, moderator, player, win_first_word
from protests_child import play
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core import protests
from grace_arena.core.match import Match
from grace_arena.record import lease
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.store import MatchStore

runner = CliRunner()


def grace(*args: str):
    return runner.invoke(app, ["protest", *args])


def test_the_td_lists_resolves_and_corrects_from_the_command_line(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'club.db'}"
    upgrade(url)
    engine = make_engine(url)
    store = MatchStore(engine)
    match_id = play(store)
    m = str(match_id)
    listed = grace("list", "--db", url)
    assert listed.exit_code == 0, listed.output
    lines = [line for line in listed.output.splitlines() if line.startswith("match")]
    assert len(lines) == 2
    assert 'by Red on tossup 3 (t2) (answer given: "Carver"): on the line. Open; upheld, the ' \
           "score would be Red 50, Blue 40 (now Red 35, Blue 40): it would change the result " \
           "(Red ahead, not Blue ahead)." in lines[0]  # fmt: skip
    red, blue = (p.seq for p in protests.protests(store.open(match_id).match.state))
    missing = grace("resolve", m, str(red), "--db", url)
    assert missing.exit_code == 1 and "say --upheld or --denied" in missing.output
    done = grace("resolve", m, str(red), "--upheld", "--by", "Dana", "--reason", "on the line",
                 "--db", url)  # fmt: skip
    assert done.exit_code == 0, done.output
    assert ("Upheld by Dana: on the line; the score went from Red 35, Blue 40 to Red 50, Blue 40: "
            "it changed the result (Red ahead, not Blue ahead)." in done.output)  # fmt: skip
    assert "score: Red 35, Blue 40 → Red 50, Blue 40" in done.output
    again = grace("resolve", m, str(red), "--denied", "--db", url)
    assert again.exit_code == 1 and "already resolved: upheld by Dana" in again.output
    assert grace("resolve", m, str(blue), "--denied", "--db", url).exit_code == 0
    assert "no open protests" in grace("list", "--db", url).output
    assert len(grace("list", "--all", "--match", m, "--db", url).output.splitlines()) == 3
    # the cycles with their numbers, then a correction by number
    cycles = grace("cycles", m, "--db", url).output
    assert "tossup 3 (t2)" in cycles and "Red-1 (Red) correct +10 (corrects" in cycles
    seq = next(r.seq for r in protests.cycles(store.open(match_id).match.state)[1].rulings
               if r.part == 2)  # fmt: skip
    fixed = grace("correct", m, str(seq), "--ruling", "incorrect", "--reason", "misheard",
                  "--db", url)  # fmt: skip
    assert fixed.exit_code == 0, fixed.output
    assert "score: Red 50, Blue 40 → Red 50, Blue 30" in fixed.output
    bad = grace("correct", m, str(seq), "--ruling", "prompt", "--db", url)
    assert bad.exit_code == 1 and "correct or incorrect" in bad.output
    assert store.open(match_id).match.scores == {"red": 50, "blue": 30}
    # a match another process serves is not written
    gone = f"http://127.0.0.1:{free_port()}"  # (nothing listens there)
    other = lease.Holder.this_process(gone)
    lease.acquire(engine, match_id, other)
    seq_before = store.open(match_id).seq
    held = grace("correct", m, str(seq), "--ruling", "correct", "--db", url)
    assert held.exit_code == 1 and "is served by process" in held.output
    assert "on the moderator's screen (C)" in held.output
    # a protest of it goes through that server, which does not answer: said, nothing written
    silent = runner.invoke(app, ["protest", "resolve", m, str(red), "--denied", "--db", url],
                           env={"GRACE_ARENA_TD_TOKEN": "t"})  # fmt: skip
    assert silent.exit_code == 1 and f"which does not answer at {gone}" in silent.output
    assert store.open(match_id).seq == seq_before
    engine.dispose()


@on_both_backends
def test_the_td_resolves_a_protest_of_a_served_match_through_its_server(server, db_url, tmp_path):
    """A match a server still serves: the command goes through that server's TD route (its
    address from the match's lease in the record, the TD's token it printed), so the server
    stays the match's one writer; without the token, or with a wrong one, nothing changes and
    the command says what to do."""
    mod = moderator(server)
    red, blue = player(server, "red", "Ruth"), player(server, "blue", "Bo")
    room = server.room()
    match_id = room.rm.id
    with clients(mod, red, blue):
        win_first_word(mod, red, "Carver")
        st = mod.state(lambda s: s["match"]["phase"] == "answered")
        red_before = next(t["score"] for t in st["teams"] if t["id"] == "red")
        mod.send(type="protest", team="blue", tossup="1", reason="the answer was incomplete")
        st = mod.state(lambda s: s["officiating"]["protests"])
        number = st["officiating"]["protests"][0]["number"]
        args = ("resolve", str(match_id), str(number), "--upheld", "--by", "Dana",
                "--reason", "incomplete", "--db", db_url)  # fmt: skip
        seq_before = len(server.arena.store.events(match_id))
        # no token: refused in words (who serves it, what to give), nothing written
        bare = runner.invoke(app, ["protest", *args], env={"GRACE_ARENA_TD_TOKEN": ""})
        assert bare.exit_code == 1, bare.output
        assert f"match {match_id} is served by process" in bare.output
        assert "GRACE_ARENA_TD_TOKEN" in bare.output
        # a wrong token (the moderator's is not the TD's): the server refuses it
        wrong = server.run(server.events.match_moderator_token(match_id))
        refused = runner.invoke(app, ["protest", *args], env={"GRACE_ARENA_TD_TOKEN": wrong})
        assert refused.exit_code == 1 and "refused the TD's token" in refused.output
        assert len(server.arena.store.events(match_id)) == seq_before
        # the TD's token, from a file: resolved by the server, which every screen follows
        token_file = tmp_path / "td-token"
        token_file.write_text(server.events.tokens.td() + "\n")
        done = runner.invoke(app, ["protest", *args, "--td-token-file", str(token_file)],
                             env={"GRACE_ARENA_TD_TOKEN": ""})  # fmt: skip
        assert done.exit_code == 0, done.output
        assert f"match {match_id} is served at {server.http_url}" in done.output
        assert "Upheld by Dana: incomplete; the score went from " in done.output
        st = mod.state(lambda s: s["officiating"]["protests"][0]["status"] == "upheld")
        red_now = next(t["score"] for t in st["teams"] if t["id"] == "red")
        assert red_now < red_before
        assert f"score: Red {red_before}, Blue 0 → Red {red_now}, Blue 0" in done.output
        blue.state(lambda s: next(t["score"] for t in s["teams"] if t["id"] == "red") == red_now)
        # the server is still the match's one writer: its lease, its live match = the record
        assert server.room(match_id) is room
        assert Match.replay(server.arena.store.events(match_id)).state == room.match.state
        again = runner.invoke(
            app, ["protest", *args], env={"GRACE_ARENA_TD_TOKEN": server.events.tokens.td()}
        )
        assert again.exit_code == 1 and "already resolved: upheld by Dana" in again.output


def test_the_tds_token_is_not_sent_on_where_a_redirect_points(tmp_path) -> None:
    """The server the match's lease names answers with a redirect: the command does not
    follow it (the TD's token would go to another address), says so, and writes nothing."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[tuple[str, str | None]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            seen.append((self.path, self.headers.get("Authorization")))
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{self.server.server_port}/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST

        def log_message(self, *args):
            pass

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    try:
        url = f"sqlite:///{tmp_path / 'club.db'}"
        upgrade(url)
        engine = make_engine(url)
        store = MatchStore(engine)
        match_id = play(store)
        red = next(p.seq for p in protests.protests(store.open(match_id).match.state))
        holder = lease.Holder.this_process(f"http://127.0.0.1:{http.server_port}")
        lease.acquire(engine, match_id, holder)
        seq_before = store.open(match_id).seq
        args = ["protest", "resolve", str(match_id), str(red), "--denied", "--db", url]
        result = runner.invoke(app, args, env={"GRACE_ARENA_TD_TOKEN": "secret"})
        assert (
            result.exit_code == 1
            and "redirect" in result.output
            and "not followed" in (result.output)
        )
        assert [path for path, _ in seen] == [f"/api/matches/{match_id}/protests/{red}"]
        assert store.open(match_id).seq == seq_before
        engine.dispose()
    finally:
        http.shutdown()
