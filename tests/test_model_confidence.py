"""Answer-span logprob extraction and verbalized-confidence parsing."""

from __future__ import annotations

import math

import pytest

from grace_arena.model.confidence import (
    answer_span,
    clean_answer,
    logit_confidences,
    parse_verbal,
    parse_verbal_answer,
    span_confidence,
)

L = math.log


def test_span_skips_label_quotes_and_trailing_period():
    tokens = [
        ("The", L(0.99)),
        (" answer", L(0.99)),
        (" is", L(0.99)),
        (":", L(0.99)),
        (' "', L(0.5)),
        ("Moby", L(0.8)),
        ("-", L(0.9)),
        ("Dick", L(0.6)),
        ('".', L(0.7)),
        ("\n", L(0.2)),
        ("Probability", L(0.1)),
        (":", L(0.1)),
        (" 0.9", L(0.1)),
    ]
    answer, logprobs = answer_span(tokens)
    assert answer == "Moby-Dick"
    assert logprobs == pytest.approx([L(0.8), L(0.9), L(0.6)])
    conf = span_confidence(tokens)
    assert conf.n_tokens == 3
    assert conf.mean_prob == pytest.approx((0.8 + 0.9 + 0.6) / 3)
    assert conf.geo_mean_prob == pytest.approx((0.8 * 0.9 * 0.6) ** (1 / 3))
    assert conf.sequence_prob == pytest.approx(0.8 * 0.9 * 0.6)


def test_span_of_a_plain_answer_with_leading_space_token():
    tokens = [(" Friedrich", L(0.5)), (" Nietzsche", L(0.25)), ("<|eot|>", 0.0)]
    # A special end token glued to the answer is part of the line: keep it out by stripping.
    answer, logprobs = answer_span(tokens[:2])
    assert answer == "Friedrich Nietzsche"
    assert logprobs == pytest.approx([L(0.5), L(0.25)])


def test_span_with_markdown_bold_label():
    tokens = [("**", -0.1), ("Answer", -0.1), (":**", -0.1), (" Jupiter", L(0.7)), ("\n", -1.0)]
    answer, logprobs = answer_span(tokens)
    assert answer == "Jupiter" and logprobs == pytest.approx([L(0.7)])


def test_empty_reply_has_no_confidence():
    assert answer_span([]) == ("", [])
    assert span_confidence([("\n", -0.1)]).mean_prob is None
    assert logit_confidences([]) is None


def test_logit_confidences_by_hand():
    mean, geo, seq = logit_confidences([L(0.5), L(0.5), L(1.0)])
    assert mean == pytest.approx(2 / 3)
    assert geo == pytest.approx(0.25 ** (1 / 3))
    assert seq == pytest.approx(0.25)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The answer is: Moby-Dick\nProbability: 0.85", 0.85),
        ("The answer is: Moby-Dick\nProbability: 85%", 0.85),
        ("The answer is: Paris\nProbability: 0,7", 0.7),
        ("The answer is: Paris\nProbability: .6", 0.6),
        ("**The answer is:** Jupiter\n**Probability:** 0.95", 0.95),
        ("The answer is: **Jupiter**\nProbability: **0.4**", 0.4),
        ("The answer is: Odin\nProbability: 1", 1.0),
        ("The answer is: Odin\nProbability: 1.0", 1.0),
        ("The answer is: Odin\nProbability: 0", 0.0),
        ("The answer is: Carmen\nProbability: 90 percent", 0.9),
        ("The answer is: Carmen\nConfidence: 75", 0.75),
        ("The answer is: Carmen\nProbability: 0.3\nActually, Probability: 0.6", 0.6),
        ("Answer: Benzene (probability 0.8)", 0.8),
        ("I'd say Keynes, with about 70% probability.", 0.7),
        ("The answer is: World War II\nProbability: 0.55", 0.55),
        ("The answer is: 1984\nProbability: 0.9", 0.9),
        ("The answer is: Apollo 11\n0.65", 0.65),
        ("The answer is: Passover\nProbability: 17/20", 0.85),
        ("Guess: Esperanto\nLikelihood of being correct: 0,95.", 0.95),
        ("- The answer is: Las Meninas\n- Probability: `0.5`", 0.5),
        ("The answer is: David\nProbability: 9/10 (90%)", 0.9),
        ("The answer is: pi\nP = 0.99", 0.99),
        # Failures are missing, never 0 or 0.5.
        ("The answer is: Moby-Dick", None),
        ("The answer is: Moby-Dick\nProbability: high", None),
        ("The answer is: Moby-Dick\nProbability: N/A", None),
        ("I don't know.", None),
        ("", None),
        ("The answer is: Moby-Dick\nProbability: 250%", None),
        ("The answer is: Symphony No. 9", None),
    ],
)
def test_parse_verbal(text, expected):
    got = parse_verbal(text)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The answer is: Moby-Dick\nProbability: 0.85", "Moby-Dick"),
        ("**The answer is:** *Jupiter*\n**Probability:** 0.95", "Jupiter"),
        ("Mitochondria.\nProbability: 0.4", "Mitochondria"),
        ("Probability: 0.4", None),
        ("", None),
    ],
)
def test_parse_verbal_answer(text, expected):
    assert parse_verbal_answer(text) == expected


def test_clean_answer():
    assert clean_answer(' "Things Fall Apart."') == "Things Fall Apart"
    assert clean_answer("\n\nThe answer is: Odin\nmore") == "Odin"
    assert clean_answer("Final answer: Carmen") == "Carmen"
    assert clean_answer("The answer is Carmen.") == "Carmen"
    assert clean_answer("The Guess Who") == "The Guess Who"
