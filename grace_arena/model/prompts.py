"""The guesser prompts, verbatim from GRACE appendices E.1 (guess) and D.4 (verbalized confidence).

Exemplars are ``(question, answer)`` pairs retrieved with TF-IDF; they never carry a
probability, so the model is not nudged towards particular numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["GUESS_INSTRUCTIONS", "VERBAL_INSTRUCTIONS", "guess_messages", "verbal_messages"]

GUESS_INSTRUCTIONS = (
    "Given the following information, provide the title of the Wikipedia page that best answers "
    "the last question fragment. If unsure, provide your best guess. The answer should be concise."
)

VERBAL_INSTRUCTIONS = (
    "Given the following information, provide the title of the Wikipedia page that would best "
    "answer the last question fragment. If you are not sure, just give your best guess. If you "
    "don't know, answer None. The answer should be as short as possible. While you give the "
    "guess, please also provide the probability that it is correct (0.0 to 1.0).\n"
    "Give ONLY the guess and probability, no other words or explanation. For example:\n\n"
    "The answer is: <most likely guess, as short as possible; not a complete sentence, just the "
    "guess!>\n"
    "Probability: <the probability between 0.0 and 1.0 that your guess is correct, without any "
    "extra commentary whatsoever; just the probability!>"
)


def _exemplar_block(exemplars: Sequence[tuple[str, str]]) -> str:
    return "".join(f"Question: {q}\nThe answer is: {a}\n\n" for q, a in exemplars)


def guess_messages(clues: str, exemplars: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    """Appendix E.1: instructions, the exemplars, then the clues and an open ``The answer is:``."""
    content = (
        f"{GUESS_INSTRUCTIONS}\n\n{_exemplar_block(exemplars)}Question: {clues}\nThe answer is:"
    )
    return [{"role": "user", "content": content}]


def verbal_messages(clues: str, exemplars: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    """Appendix D.4: E.1's layout with Tian et al.'s instructions to state a probability."""
    content = f"{VERBAL_INSTRUCTIONS}\n\n{_exemplar_block(exemplars)}Question: {clues}"
    return [{"role": "user", "content": content}]
