"""The offline TF-IDF guesser and the exemplar retriever, trained on the shipped corpus."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import numpy as np
import pytest

from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.model.base import is_correct, packet_prefixes
from grace_arena.model.corpus import (
    DEFAULT_CORPUS_PATH,
    CorpusEntry,
    corpus_from_packet,
    load_corpus,
)
from grace_arena.model.tfidf import (
    DEFAULT_TEMPERATURE,
    ExemplarRetriever,
    TfidfGuesser,
    fit_temperature,
    softmax_confidence,
)

FIXTURES = Path(__file__).parent / "fixtures" / "model"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="module")
def corpus() -> list[CorpusEntry]:
    return load_corpus()


@pytest.fixture(scope="module")
def trajectories(corpus, sample):
    guesser = TfidfGuesser(corpus)
    prefixes = packet_prefixes(sample)
    guesses = guesser.guess_texts([p.text for p in prefixes])
    return [(p, g, is_correct(g.page, p.answer)[0]) for p, g in zip(prefixes, guesses, strict=True)]


def test_shipped_corpus_loads_with_pages(corpus):
    assert DEFAULT_CORPUS_PATH.exists()
    assert len(corpus) >= 100
    assert all(e.page and e.text for e in corpus)


def test_later_prefixes_are_more_often_right_and_more_confident(trajectories):
    by_step: dict[int, list] = {}
    for p, g, right in trajectories:
        by_step.setdefault(p.step, []).append((right, g.confidence))
    first, last = by_step[min(by_step)], by_step[max(by_step)]
    acc_first = np.mean([r for r, _ in first])
    acc_last = np.mean([r for r, _ in last])
    conf_first = np.mean([c for _, c in first])
    conf_last = np.mean([c for _, c in last])
    # Measured on the sample packet: 0 % right after the first clue, 100 % after the last;
    # mean confidence 0.33 -> 1.00.
    assert acc_last - acc_first >= 0.6, (acc_first, acc_last)
    assert acc_last >= 0.9
    assert conf_last - conf_first >= 0.4, (conf_first, conf_last)
    # Accuracy never drops by much from one clue to the next.
    accs = [np.mean([r for r, _ in by_step[s]]) for s in sorted(by_step)]
    assert all(b >= a - 0.1 for a, b in itertools.pairwise(accs))


def test_confidence_separates_right_from_wrong(trajectories):
    right = [g.confidence for _, g, r in trajectories if r]
    wrong = [g.confidence for _, g, r in trajectories if not r]
    assert np.mean(right) - np.mean(wrong) >= 0.3, (np.mean(right), np.mean(wrong))


def test_guessing_is_deterministic(corpus, sample):
    texts = [p.text for p in packet_prefixes(sample)]
    a = TfidfGuesser(corpus).guess_texts(texts)
    b = TfidfGuesser(list(corpus)).guess_texts(texts)
    assert a == b


def test_guess_interface_fills_the_logit_slot_only(corpus, sample):
    guesser = TfidfGuesser(corpus)
    prefix = packet_prefixes(sample)[-1]
    guess = asyncio.run(guesser.guess(prefix))
    assert guess.guess == "Esperanto"
    assert 0.5 < guess.confidence_logit <= 1.0
    assert guess.confidence_verbal is None and guess.sequence_prob is None
    assert guess.extra["confidence_source"] == "tfidf_softmax"
    assert guess.calls == 0


def test_softmax_confidence_formula():
    scores = np.array([[0.3, 0.1, 0.1], [0.2, 0.2, 0.2]])
    conf = softmax_confidence(scores, 0.1)
    expected = np.exp(3.0) / (np.exp(3.0) + 2 * np.exp(1.0))
    assert conf[0] == pytest.approx(expected)
    assert conf[1] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="temperature"):
        softmax_confidence(scores, 0.0)


def test_default_temperature_is_near_the_cross_validated_one(corpus):
    # The practice corpus grows; the default must stay close to its cross-validated optimum.
    best, losses = fit_temperature(corpus)
    assert losses[DEFAULT_TEMPERATURE] <= 1.1 * losses[best], losses
    assert losses[best] < losses[0.01] and losses[best] < losses[0.2]


def test_exemplars_never_include_the_question(corpus, sample):
    # The packet itself is in the exemplar corpus: without exclusion it would be found first.
    entries = corpus + corpus_from_packet(sample)
    retriever = ExemplarRetriever(entries)
    for prefix in packet_prefixes(sample)[5::6]:  # each tossup's whole text
        plain = retriever.retrieve(prefix.text, 3)
        assert plain[0].id == prefix.corpus_id  # the test would catch a leak
        found = retriever.retrieve(
            prefix.text, 3, question_text=prefix.question_text, exclude_ids=[prefix.corpus_id]
        )
        assert len(found) == 3
        assert all(e.id != prefix.corpus_id for e in found)
        assert all(e.text != prefix.question_text for e in found)


def test_exemplars_skip_a_copy_of_the_question_under_another_id(corpus, sample):
    tossup = sample.tossups[0]
    copy = CorpusEntry("someone-else-17", "Moby-Dick", tossup.text.replace("(*) ", ""))
    retriever = ExemplarRetriever([*corpus, copy])
    prefix = packet_prefixes(sample)[0]
    assert retriever.retrieve(prefix.text, 1)[0].id == "someone-else-17"
    found = retriever.retrieve(prefix.text, 5, question_text=prefix.question_text)
    assert "someone-else-17" not in {e.id for e in found}


def test_retrieve_many_matches_retrieve(corpus, sample):
    retriever = ExemplarRetriever(corpus)
    prefixes = packet_prefixes(sample)[:12]
    many = retriever.retrieve_many(
        [p.text for p in prefixes], 4, question_texts=[p.question_text for p in prefixes]
    )
    for p, got in zip(prefixes, many, strict=True):
        assert got == retriever.retrieve(p.text, 4, question_text=p.question_text)


def test_corpus_formats(tmp_path, sample):
    qanta = load_corpus(FIXTURES / "qanta_small.json.gz")
    assert [e.page for e in qanta] == ["Herman Melville", "Albert Einstein", "Danube"]
    assert qanta[0].id == "1"
    grace = load_corpus(FIXTURES / "grace_small.json")
    assert [e.page for e in grace] == ["Jupiter", "Crime and Punishment"]
    packet = load_corpus(SAMPLE_PACKET_PATH)
    assert len(packet) == len(sample.tossups) and packet[0].page == "Moby-Dick"
    bad = tmp_path / "bad.json"
    bad.write_text('{"nothing": 1}')
    with pytest.raises(ValueError, match="not a corpus"):
        load_corpus(bad)


def test_a_guesser_trained_on_a_user_corpus(sample):
    guesser = TfidfGuesser(load_corpus(FIXTURES / "qanta_small.json.gz"))
    [g] = guesser.guess_texts(["name this river that flows through Vienna"])
    assert g.page == "Danube"


@pytest.mark.skipif(
    not (SHARED / "qanta.buzzdev.json.gz").exists(), reason="shared QANTA sample absent"
)
def test_real_qanta_corpus():
    entries = load_corpus(SHARED / "qanta.buzzdev.json.gz")
    assert len(entries) > 1000 and all("_" not in e.page for e in entries[:50])
    guesser = TfidfGuesser(entries)
    [g] = guesser.guess_texts([entries[0].text])
    assert g.page == entries[0].page  # its own question is in its training data


@pytest.mark.skipif(
    not (SHARED / "grace_packet1_buzzpoints.json").exists(), reason="shared GRACE sample absent"
)
def test_real_grace_corpus():
    entries = load_corpus(SHARED / "grace_packet1_buzzpoints.json")
    assert len(entries) == 20 and entries[0].page == "Coltrane"


def test_retrieve_many_skips_each_questions_own_copies(corpus, sample):
    # Several questions in one batch, each with a copy in the corpus under another id: each
    # prefix skips its own question's copy and only that.
    prefixes = [p for p in packet_prefixes(sample) if p.step == 0][:4]
    copies = [
        CorpusEntry(f"copy-{i}", f"page-{i}", tossup.text.replace("(*) ", ""))
        for i, tossup in enumerate(sample.tossups[:4])
    ]
    retriever = ExemplarRetriever([*corpus, *copies])
    assert [retriever.retrieve(p.text, 1)[0].id for p in prefixes] == [c.id for c in copies]
    many = retriever.retrieve_many(
        [p.text for p in prefixes] + [sample.tossups[0].text],
        len(corpus),
        question_texts=[p.question_text for p in prefixes] + [None],
    )
    for i, found in enumerate(many[:4]):
        ids = {e.id for e in found}
        assert f"copy-{i}" not in ids
        assert {c.id for c in copies} - {f"copy-{i}"} <= ids  # the others' copies stay
    assert many[4][0].id == "copy-0"  # no question given: nothing skipped
