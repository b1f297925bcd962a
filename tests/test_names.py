"""Well-formed text and names from clients, and the ranges of match settings: the rules of
``grace_arena.protocol``, on hostile inputs (no server; the server, the survey, the command line
and the set-up screen are tested where they use them)."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import ValidationError

from grace_arena.core.config import ScoringRules
from grace_arena.protocol import (
    PLAYER_NAME_MAX,
    AnswerMsg,
    JoinTeam,
    MatchSettings,
    MatchSetup,
    SurveyJoin,
    TeamSetup,
    ThrowOutMsg,
    name_pattern,
    parse_client,
    well_formed_name,
)


def refusal(make, **fields) -> str:
    """The message of the one error ``make(**fields)`` raises."""
    with pytest.raises(ValidationError) as raised:
        make(**fields)
    (error,) = raised.value.errors()
    return error["msg"]


#: Names kept as they are given.
WELL_FORMED = [
    "Ann",
    "Jos\u00e9",  # composed already
    "Nguy\u1ec5n V\u0103n",  # two marks on one letter
    "\u674e\u5c0f\u9f8d",  # Han
    "\u0645\u0631\u064a\u0645",  # Arabic: right to left without any control
    "\u0410\u043d\u043d\u0430 Ann \u30a2\u30f3",  # mixed scripts
    "\u0928\u092e\u0938\u094d\u200d\u0924\u0947",  # a joiner inside Devanagari
    "\u0645\u06cc\u200c\u0631\u0648\u0645",  # a non-joiner inside Persian
    "\U0001f989",  # an emoji alone
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # emoji joined by U+200D
    "\U0001f1eb\U0001f1f7 Team",  # a flag
    "1\ufe0f\u20e3",  # keycap: a variation selector and an enclosing mark
    "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",  # tags
    "Ann \u0301",  # a mark after a space is how an accent is shown alone
    "\u200e\u05e9\u05e8\u05d4 2",  # a left-to-right mark is no embedding
    "\u200bAnn",  # invisible characters beside visible ones are kept
    "x" * PLAYER_NAME_MAX,
]
#: Names kept otherwise than they are given.
TIDIED = [
    ("  Ann   Lee  ", "Ann Lee"),  # trimmed, one space between words
    ("Ann\u00a0Lee\u3000", "Ann Lee"),  # no-break and ideographic spaces are spaces
    ("Jose\u0301", "Jos\u00e9"),  # decomposed: kept composed (NFC)
    ("A\u030angstro\u0308m", "\u00c5ngstr\u00f6m"),
    ("\u0301Ann", "Ann"),  # a mark first has nothing to sit on
    (" \u0301 \u0301Ann", "Ann"),
    ("\uff21\uff4e\uff4e", "\uff21\uff4e\uff4e"),  # NFC, not NFKC: full-width letters stay
]


@pytest.mark.parametrize(("given", "kept"), [(name, name) for name in WELL_FORMED] + TIDIED)
def test_well_formed_names_are_kept_composed_and_trimmed(given, kept):
    assert JoinTeam(team="red", name=given).name == kept
    assert SurveyJoin(name=given).name == kept
    assert TeamSetup(id="t", name=given).name == kept
    assert well_formed_name(given, max_length=PLAYER_NAME_MAX) == kept


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("\ud800", "a lone surrogate (U+D800)"),
        ("Ann\udfff", "a lone surrogate (U+DFFF)"),
        ("A\x00nn", "NUL (U+0000)"),
        ("Ann\tLee", "a control character (U+0009)"),
        ("Ann\nLee", "a control character (U+000A)"),
        ("Ann\x1b[31m", "a control character (U+001B)"),
        ("Ann\x85Lee", "a control character (U+0085)"),
        ("Ann\n", "a control character (U+000A)"),  # not trimmed: refused, as anywhere
        ("Ann\u2028Lee", "a line or paragraph separator (U+2028)"),
        ("\u202eRed", "a bidirectional control (U+202E)"),
        ("Red\u202a", "a bidirectional control (U+202A)"),
        ("\u2066Red\u2069", "a bidirectional control (U+2066)"),
        ("\u2068Red", "a bidirectional control (U+2068)"),
        ("\u200b", "a visible character"),  # zero-width space
        ("\u200d", "a visible character"),  # zero-width joiner
        ("\ufeff", "a visible character"),  # byte order mark
        ("\u200b\u200c\u200d\u2060\u00ad", "a visible character"),
        ("\u0301", "a visible character"),  # a lone combining mark
        ("\u0301\u0302\u20dd", "a visible character"),
        ("\ufe0f", "a visible character"),  # a variation selector
        ("\U000e0041\U000e0042", "a visible character"),  # tags
        ("\u3164", "a visible character"),  # Hangul filler
        ("\u115f\u1160", "a visible character"),
        ("\u2800", "a visible character"),  # blank Braille pattern
        ("\u3000\u2003 \u200b", "a visible character"),  # ideographic space, em space
        ("   ", "a visible character"),
        ("", "at least 1 character"),
    ],
)
def test_malformed_names_are_refused_saying_what_is_wrong(given, said):
    assert said in refusal(JoinTeam, team="red", name=given)
    assert said in refusal(SurveyJoin, name=given)
    assert said in refusal(TeamSetup, id="t", name=given)
    if given:
        with pytest.raises(ValueError, match=re.escape(said)):
            well_formed_name(given, max_length=PLAYER_NAME_MAX)


def test_a_refused_name_over_the_wire_is_a_bad_message_that_says_why():
    with pytest.raises(ValidationError) as raised:
        parse_client('{"type": "join", "team": "red", "name": "\\u202eRed"}')
    (error,) = raised.value.errors()
    assert error["loc"] == ("join", "name") and "bidirectional control (U+202E)" in error["msg"]
    # JSON's escape of a lone surrogate is not even JSON to the websocket's parser
    for name in ("\\ud800", "A\\udc00b"):
        with pytest.raises(ValidationError, match=r"Invalid JSON: .*hex escape"):
            parse_client('{"type": "join", "team": "red", "name": "' + name + '"}')


def test_the_command_lines_names_have_the_fields_length():
    assert well_formed_name(" " + "x" * 40 + " ", max_length=40) == "x" * 40
    with pytest.raises(ValueError, match="at most 40 characters"):
        well_formed_name("x" * 41, max_length=40)


@pytest.mark.parametrize("text", ["\ud800", "Ok\udc80ay", "\udbff\udfff"])
def test_no_client_text_the_record_keeps_may_hold_a_lone_surrogate(text):
    assert "lone surrogate" in refusal(AnswerMsg, text=text)
    assert "lone surrogate" in refusal(ThrowOutMsg, reason=text)
    setup = {"packet_id": "p", "teams": [{"id": "t", "name": "T"}]}
    for field in ("title", "packet_id"):
        assert "lone surrogate" in refusal(MatchSetup, **{**setup, field: text})
    assert "lone surrogate" in refusal(MatchSetup, **setup, tossup_ids=[text])
    assert "lone surrogate" in refusal(JoinTeam, team=text, name="Ann")
    # a pair is one character, and well-formed
    assert AnswerMsg(text="\U0001f989").text == "\U0001f989"


def _accepted(text: str) -> bool:
    try:
        well_formed_name(text, max_length=10**6)
    except ValueError:
        return False
    return True


_PATTERN = re.compile(name_pattern())


@given(st.text(st.characters(codec=None, exclude_categories=("Cs",)), max_size=6))
@example("\u0301")
@example("\u0301a")
@example(" \u200b ")
@example("\U000e0fff")
@example("\U000e1000")
@example("\u2065")
def test_the_openapi_pattern_accepts_exactly_the_names_the_server_accepts(text):
    """The description says which names are refused, so that a client (schemathesis) generating
    names from it never gets a 422 for one it was told is fine, nor a 201 for one it was not.
    (Its strings hold no lone surrogates: the validator refuses them, above.)"""
    assert bool(_PATTERN.fullmatch(text)) == _accepted(text)


def test_the_pattern_and_the_validator_agree_on_every_character():
    """The pattern looks at the name as sent, the validator at its composed form (NFC): they
    agree because composing never makes a visible character invisible or refused."""
    differ = [
        hex(code)
        for code in range(sys.maxunicode + 1)
        if not 0xD800 <= code <= 0xDFFF
        and bool(_PATTERN.fullmatch(chr(code))) != _accepted(chr(code))
    ]
    assert differ == []


# ---------------------------------------------------------------------------------------------
# Match settings


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("correct_points", -1e20, "correct_points must be from 1 to 100 points, not -1e+20"),
        ("correct_points", 0, "correct_points must be from 1 to 100 points, not 0"),
        ("correct_points", 101, "correct_points must be from 1 to 100 points"),
        ("correct_points", 2**70, "correct_points must be from 1 to 100 points"),
        ("correct_points", "1000", "correct_points must be from 1 to 100 points, not 1000"),
        ("power_points", 0, "power_points must be from 1 to 100 points or none (no powers)"),
        ("power_points", 1e9, "power_points must be from 1 to 100 points"),
        ("neg_points", 5, "neg_points must be from -100 to 0 points, not 5"),
        ("neg_points", -101, "neg_points must be from -100 to 0 points"),
        ("answer_time", -5, "answer_time must be from 1 to 120 seconds or none (no limit), not -5"),
        ("answer_time", 0, "answer_time must be from 1 to 120 seconds"),
        ("answer_time", 0.5, "answer_time must be from 1 to 120 seconds"),
        ("answer_time", 1e308, "answer_time must be from 1 to 120 seconds"),
        ("buzz_window", 1e308, "buzz_window must be from 0 to 60 seconds, not 1e+308"),
        ("buzz_window", -1, "buzz_window must be from 0 to 60 seconds, not -1"),
        ("wpm", 29, "wpm must be from 30 to 1200 words a minute, not 29"),
        ("wpm", 10**6, "wpm must be from 30 to 1200 words a minute"),
    ],
)
def test_match_settings_out_of_range_are_refused_naming_the_field_and_range(field, value, said):
    setup = {"packet_id": "p", "teams": [{"id": "t", "name": "T"}]}
    assert said in refusal(MatchSetup, **setup, **{field: value})
    assert said in refusal(MatchSettings, **{field: value})


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"correct_points": 1, "power_points": 100, "neg_points": -100},
        {"correct_points": 4, "power_points": None, "neg_points": 0},  # Science Bowl-like
        {"correct_points": 100, "neg_points": 0},
        {"answer_time": None, "buzz_window": 0},
        {"answer_time": 1, "buzz_window": 60},
        {"answer_time": 120.0, "buzz_window": 0.3, "wpm": 30},
        {"wpm": 1200, "reading_mode": "screen"},
    ],
)
def test_match_settings_within_their_ranges_are_taken(settings):
    made = MatchSettings(**settings)
    assert made.model_dump(include=set(settings)) == settings


def test_the_openapi_description_states_the_ranges():
    schema = MatchSetup.model_json_schema()["properties"]
    assert (schema["correct_points"]["minimum"], schema["correct_points"]["maximum"]) == (1, 100)
    assert (schema["neg_points"]["minimum"], schema["neg_points"]["maximum"]) == (-100, 0)
    (timed, untimed) = schema["answer_time"]["anyOf"]
    assert (timed["minimum"], timed["maximum"], untimed) == (1, 120, {"type": "null"})
    assert (schema["buzz_window"]["minimum"], schema["buzz_window"]["maximum"]) == (0, 60)


def test_the_engine_replays_settings_outside_the_ranges():
    """The ranges guard what comes in, not what the record holds: rules made before them are
    still a match's rules."""
    rules = ScoringRules(correct_points=500, neg_points=-1000, answer_time=0.2, buzz_window=600)
    assert ScoringRules.model_validate(rules.model_dump()) == rules


def test_other_validators_read_the_descriptions_patterns_as_the_server_does():
    """schemathesis checks the server with jsonschema-rs, which drops a pattern it cannot
    compile (one naming surrogates, say): generated names would then be refused."""
    import jsonschema_rs

    for model in (SurveyJoin, MatchSetup):
        jsonschema_rs.validator_for(model.model_json_schema())  # compiles
    survey = jsonschema_rs.validator_for(SurveyJoin.model_json_schema())
    for name in WELL_FORMED + [sent for sent, _ in TIDIED]:
        assert survey.is_valid({"name": name}), name
    for name in ("\u200b", "\u202eRed", "Ann\tLee", "\u0301", "\U000e0041", "   ", "A\x00"):
        assert not survey.is_valid({"name": name}), name


@pytest.mark.parametrize(
    "look_alike",
    [
        "Alice\u200b", "Al\u200bice", "Al\u2060ice", "A\u00adlice", "Al\u034fice",
        "Alice\ufe0f", "Alice\u3164", "Alice\u2800", "Ali\u180ece", "\uff21lice", " ALICE ",
        "Ali\u180fce", "Al\u17b4ice", "Alice\u2065", "Alice\ufff0", "Alice\U000e0080",
        "Alice\U00016fe4",
    ],
)  # fmt: skip
def test_a_name_with_characters_that_show_nothing_is_the_same_player(look_alike):
    """Names that look the same on every screen are one player of a team: twelve players all
    shown as "Alice" were twelve players (and, joined as "Alice", a way to pass for her)."""
    from grace_arena.record.store import player_name_key

    assert player_name_key(look_alike) == player_name_key("Alice") == "alice"
