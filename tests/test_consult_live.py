"""Consult rules in a live room: a phone consults the model on a bonus part and sees its
answer, the room sees it too, nothing that players must not see reaches them, the moderator
records a choice for the team, and the record replays to the same scores (both backends)."""

from __future__ import annotations

import json

from backends import on_both_backends
from live import LiveServer, clients, moderator, player, two_teams, win_first_word
from sqlmodel import Session, select

from grace_arena.core.match import Match
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.record.db import make_engine
from grace_arena.record.store import MatchStore
from grace_arena.server.app import Settings


@on_both_backends
def test_a_team_consults_the_model_abstains_and_answers_alone_in_a_live_room(db_url):
    setup = two_teams(format="acf", reading_mode="screen", bonus_answer_time=60,
                      consult_model="tfidf")  # fmt: skip
    settings = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=setup)
    with LiveServer(settings) as server:
        config = server.room().match.config
        assert config.rules.consult is not None and config.consult.model == "tfidf"
        advice = config.consult.answers["b-lit-american-1"]
        mod = moderator(server)
        red, blue = player(server, "red", "Ann"), player(server, "blue", "Bo")
        with clients(mod, red, blue):
            win_first_word(mod, red, "Moby Dick")
            seen = red.state(lambda s: s["match"]["phase"] == "bonus")["bonus"]
            assert seen["consult"] and seen["consulted"] is None
            # only the team whose turn it is may consult
            blue.send(type="consult", part=1)
            assert "team 'red''s, not team 'blue''s" in blue.wait("error")["message"]
            red.send(type="consult", part=1, draft="hemingway")
            seen = red.state(lambda s: s["bonus"] and s["bonus"]["consulted"])["bonus"]
            assert seen["consulted"]["model"] == "tfidf"
            assert seen["consulted"]["guess"] == advice[0].guess
            assert seen["consulted"]["draft"] is None  # the moderator's alone
            # the other team's phone (and a projector) sees the model's answer too
            other = blue.state(lambda s: s["bonus"] and s["bonus"]["consulted"])["bonus"]
            assert other["consulted"]["guess"] == advice[0].guess
            shown = mod.state(lambda s: s["bonus"] and s["bonus"]["consulted"])["bonus"]
            assert shown["consulted"]["draft"] == "hemingway"
            red.send(type="answer", text="mark twain", part=1)
            mod.state(lambda s: s["bonus"] and s["bonus"]["answer"] == "mark twain")
            mod.send(type="rule", ruling="correct", part=1)
            state = mod.state(lambda s: s["bonus"] and s["bonus"]["part"] == 1)
            assert state["bonus"]["parts"][0]["choice"] == "consult"
            assert state["bonus"]["parts"][0]["points"] == 10
            # the moderator records an abstention for the team (read out loud)
            mod.send(type="abstain", part=2)
            state = mod.state(lambda s: s["bonus"] and s["bonus"]["part"] == 2)
            expected = 0 if advice[1].correct else 5
            assert state["bonus"]["parts"][1]["choice"] == "abstain"
            assert state["bonus"]["parts"][1]["points"] == expected
            # a player's abstention, and a part answered alone
            red.send(type="answer", text="cairo", part=3)
            mod.state(lambda s: s["bonus"] and s["bonus"]["answer"] == "cairo")
            mod.send(type="rule", ruling="correct", part=3)
            state = mod.state(lambda s: s["match"]["phase"] == "answered")
            assert state["bonus"]["parts"][2]["choice"] == "own"
            live = {t["id"]: t["score"] for t in state["teams"]}
            assert live == {"red": 10 + 10 + expected + 15, "blue": 0}
            # nothing a player must not see reached a phone: the verdict on the model's answer,
            # the team's draft, the judge's suggestions
            for phone in (red, blue):
                sent = json.dumps(phone.received)
                for secret in ("model_correct", "hemingway", "draft_suggestion"):
                    assert secret not in sent
            match_id = server.room().rm.id
    engine = make_engine(db_url)
    events = MatchStore(engine).events(match_id)
    engine.dispose()
    assert Match.replay(events).scores == live
    consulted = [e for e in events if e.type == "bonus_part_consulted"]
    assert len(consulted) == 1 and consulted[0].draft == "hemingway"
    assert consulted[0].model_correct == advice[0].correct
    assert [e.choice for e in events if e.type == "bonus_part_ruled"] == [
        "consult", "abstain", "own",
    ]  # fmt: skip


def test_a_model_not_precomputed_on_the_bonuses_is_named_when_a_match_is_made(tmp_path):
    """A model team in a bonus format, or a model to consult, needs the model's answers to
    every bonus part: a match without them is refused by name, not played with blank answers."""
    from grace_arena.core.packet import load_packet
    from grace_arena.model.precompute import ensure_precomputed
    from grace_arena.protocol import TeamSetup
    from grace_arena.record.models import ModelBonusPartRow, ModelStepRow

    db_url = f"sqlite:///{tmp_path / 'r.db'}"
    packet = load_packet(SAMPLE_PACKET_PATH)
    ensure_precomputed(db_url, packet)
    engine = make_engine(db_url)
    with Session(engine) as session:  # "other": tfidf's tossup steps, no bonus part
        for row in session.exec(select(ModelStepRow)).all():
            data = row.model_dump(exclude={"id"})
            session.add(ModelStepRow(**{**data, "model": "other"}))
        session.commit()
        assert session.exec(select(ModelBonusPartRow).where(ModelBonusPartRow.model == "other")
                            ).all() == []  # fmt: skip
    engine.dispose()
    settings = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s")
    with LiveServer(settings) as server:
        model = TeamSetup(id="bot", name="Bot", kind="model", model="other")
        for setup in (
            two_teams(format="acf", teams=[TeamSetup(id="red", name="Red"), model]),
            two_teams(format="acf", consult_model="other"),
        ):
            try:
                server.arena.match_config(setup)
            except LookupError as exc:
                assert "'other' has not been precomputed on the bonuses" in str(exc)
                assert "grace-arena precompute --packet ... --model other" in str(exc)
            else:
                raise AssertionError("a match without the model's bonus answers was made")
        # tossups only (GRACE's game): the model plays without bonus answers
        plain = two_teams(teams=[TeamSetup(id="red", name="Red"), model])
        assert server.arena.match_config(plain).team("bot").bonus_answers == {}
