"""Confidences from a model's output: token log-probabilities and stated probabilities.

Logit confidence (GRACE appendix D.4) is computed over the **answer span only**: the tokens that
spell the answer, not a leading ``The answer is:`` label, surrounding quotes or markdown, a
trailing full stop, or anything after the first line. With ``l_1..l_n`` the log-probabilities
of those tokens:

- ``confidence_logit`` = (1/n) Σ exp(l_i)  (arithmetic mean of token probabilities; GRACE's)
- ``confidence_logit_geo`` = exp((1/n) Σ l_i)  (geometric mean)
- ``sequence_prob`` = exp(Σ l_i)  (probability of the whole answer)

Verbalized confidence (:func:`parse_verbal`) reads the probability the model stated. It accepts
``0.85``, ``.85``, ``0,85`` (decimal comma), ``85%``, ``85 percent``, ``85`` after a label
(read as a percentage), ``17/20``, and markdown around labels and numbers. A number counts when it
follows a label (probability, confidence, likelihood, chance, certainty), or carries a percent
sign, or stands alone on a line; among those the **last** one wins (models often restate or
correct themselves). Anything else is a failure and gives ``None``, never 0 or 0.5.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "SpanConfidence",
    "answer_span",
    "clean_answer",
    "logit_confidences",
    "parse_verbal",
    "span_confidence",
]

# "The answer is:", "**Answer:**", "Final guess -", "The answer is" (a colon or "is" required,
# so that an answer such as "The Guess Who" keeps its words).
_LABEL = re.compile(
    r"\s*(?:[*_#>`\-]+\s*)*(?:final\s+)?(?:the\s+)?(?:answer|guess)"
    r"(?:\s*(?:is\s*)?[*_]*\s*[:\-]|\s+is\b)\s*[*_]*\s*",
    re.IGNORECASE,
)
_EDGE = " \t\"'`*_“”‘’«»"
_TRAILING = " \t\"'`*_“”‘’«».,;:!"


def clean_answer(text: str) -> str:
    """The answer in a model's reply: first non-empty line, without label, quotes or markdown.

    >>> clean_answer('**The answer is:** "Moby-Dick".\\nProbability: 0.9')
    'Moby-Dick'
    """
    start, end = _span(text)
    return text[start:end]


def _span(text: str) -> tuple[int, int]:
    """Character span of the answer in ``text`` (see :func:`clean_answer`)."""
    pos = 0
    for line in text.splitlines(keepends=True):
        if line.strip().strip(_TRAILING):
            break
        pos += len(line)
    line_end = text.find("\n", pos)
    line_end = len(text) if line_end < 0 else line_end
    m = _LABEL.match(text, pos, line_end)
    start = m.end() if m and m.end() < line_end else pos
    while start < line_end and text[start] in _EDGE:
        start += 1
    end = line_end
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    return start, end


def answer_span(tokens: Sequence[tuple[str, float]]) -> tuple[str, list[float]]:
    """The answer text and the log-probabilities of the tokens that overlap it.

    ``tokens`` are ``(token, logprob)`` pairs as the provider returned them, in order; their
    concatenation is the reply.
    """
    text = "".join(t for t, _ in tokens)
    start, end = _span(text)
    if start >= end:
        return "", []
    picked: list[float] = []
    pos = 0
    for token, logprob in tokens:
        t_start, t_end = pos, pos + len(token)
        pos = t_end
        if t_end > start and t_start < end and token.strip():
            picked.append(float(logprob))
    return text[start:end], picked


def logit_confidences(logprobs: Sequence[float]) -> tuple[float, float, float] | None:
    """``(arithmetic mean of exp(l), geometric mean, sequence probability)``; None if empty.

    >>> [round(x, 4) for x in logit_confidences([math.log(0.5), math.log(1.0)])]
    [0.75, 0.7071, 0.5]
    """
    if not logprobs:
        return None
    values = [min(float(lp), 0.0) for lp in logprobs]  # a logprob is never above 0
    if any(math.isnan(v) for v in values):
        return None
    mean = sum(math.exp(v) for v in values) / len(values)
    total = sum(values)
    return mean, math.exp(total / len(values)), math.exp(total)


@dataclass(frozen=True, slots=True)
class SpanConfidence:
    answer: str
    n_tokens: int
    mean_prob: float | None
    geo_mean_prob: float | None
    sequence_prob: float | None


def span_confidence(tokens: Sequence[tuple[str, float]]) -> SpanConfidence:
    """:func:`answer_span` followed by :func:`logit_confidences`."""
    answer, logprobs = answer_span(tokens)
    conf = logit_confidences(logprobs)
    if conf is None:
        return SpanConfidence(answer, 0, None, None, None)
    return SpanConfidence(answer, len(logprobs), *conf)


_NUMBER = (
    r"(?P<num>\d+(?:[.,]\d+)?|[.,]\d+)"
    r"(?:\s*/\s*(?P<den>\d+))?"
    r"(?P<pct>\s*(?:%|percent\b|per\s*cent\b))?"
)
_KEYWORD = r"(?:probability|confidence|likelihood|chance|certainty|prob\.?|p)"
_LABELLED = re.compile(rf"\b{_KEYWORD}\b[^\d\n.,]{{0,40}}?{_NUMBER}", re.IGNORECASE)
_PERCENT = re.compile(rf"(?<![\w.,]){_NUMBER}", re.IGNORECASE)
_ALONE = re.compile(
    rf"^\s*[*_`(\[]*\s*{_NUMBER}\s*[*_`)\]]*\s*\.?\s*$", re.IGNORECASE | re.MULTILINE
)


def _value(m: re.Match[str], *, labelled: bool) -> float | None:
    num = float(m.group("num").replace(",", "."))
    if m.group("den"):
        den = float(m.group("den"))
        return num / den if den > 0 and num <= den else None
    if m.group("pct"):
        value = num / 100.0
    elif num > 1.0 and labelled and num <= 100.0:
        value = num / 100.0  # "Probability: 85" means 85 %
    else:
        value = num
    return value if 0.0 <= value <= 1.0 else None


def parse_verbal(text: str | None) -> float | None:
    """The probability stated in ``text`` (see the module docstring), or None.

    >>> parse_verbal("The answer is: Paris\\nProbability: 0,8")
    0.8
    >>> parse_verbal("I am fairly sure.") is None
    True
    """
    if not text:
        return None
    found: list[tuple[int, float]] = []
    for m in _LABELLED.finditer(text):
        value = _value(m, labelled=True)
        if value is not None:
            found.append((m.start("num"), value))
    for m in _PERCENT.finditer(text):
        if m.group("pct"):
            value = _value(m, labelled=False)
            if value is not None:
                found.append((m.start("num"), value))
    for m in _ALONE.finditer(text):
        value = _value(m, labelled=False)
        if value is not None:
            found.append((m.start("num"), value))
    if not found:
        return None
    return max(found)[1]


def parse_verbal_answer(text: str | None) -> str | None:
    """The guess in a verbalized-confidence reply: the ``The answer is:`` line, else the first
    line that is not the probability line."""
    if not text:
        return None
    lines = [ln for ln in text.splitlines() if ln.strip().strip(_TRAILING)]
    for ln in lines:
        if re.search(r"answer\s*(?:is)?\s*[*_]*\s*:", ln, re.IGNORECASE):
            answer = clean_answer(ln)
            return answer or None
    for ln in lines:
        if not re.match(rf"\W*{_KEYWORD}\b", ln.strip(), re.IGNORECASE):
            answer = clean_answer(ln)
            return answer or None
    return None
