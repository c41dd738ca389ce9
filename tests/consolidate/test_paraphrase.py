"""The duplicate matcher on the hand-labelled sets: the goal on the set it was tuned on, and
the figures on the second set it was never tuned on (reported, not tuned to pass)."""

from __future__ import annotations

from fixtures import paraphrase_eval as ev
from fixtures import paraphrases, paraphrases_blind
from journal_mem.consolidate.paraphrase import Text, clusters, similarity


def found(module: object) -> ev.Score:
    lessons, _ = ev.lessons(module)  # type: ignore[arg-type]
    return ev.score(module, clusters([Text(t, b) for _, _, t, b in lessons]))  # type: ignore[arg-type]


def test_the_tuning_set_reaches_the_goal() -> None:
    score = found(paraphrases)
    assert len(paraphrases.CLUSTERS) >= 40 and len(paraphrases.DISTRACTORS) >= 30
    assert len(paraphrases.SINGLETONS) >= 20
    assert score.recall >= 0.9 and score.precision >= 0.9, score.line("set 1")


def test_the_blind_set_is_measured_and_finds_most_easy_clusters() -> None:
    score = found(paraphrases_blind)
    assert len(paraphrases_blind.CLUSTERS) >= 40, "the second set is as large as the first"
    easy_whole, easy = score.whole_by["easy"]
    assert easy_whole >= easy // 2, score.line("set 2")  # a floor, not the goal: see the docs


def test_numbers_that_differ_split_two_lessons() -> None:
    same = similarity(Text("The API runs Python 3.11 in production", ""),
                      Text("Production API containers run Python 3.11", ""))
    other = similarity(Text("The API runs Python 3.11 in production", ""),
                       Text("The API runs Python 3.12 in production", ""))
    assert same > 0.36 > other


def test_synonyms_and_stems_meet() -> None:
    assert similarity(Text("Ack each queue message before processing", ""),
                      Text("Acknowledge queue messages before you process them", "")) > 0.5


def test_evidence_names_what_a_cluster_shares_in_its_own_words() -> None:
    from journal_mem.consolidate.paraphrase import Text, document_counts, evidence

    lessons = [Text("Retries share one budget of three per request", "Every client call."),
               Text("A request gets three retries in all, shared by its calls", ""),
               Text("The retry budget is per request", "three attempts, then fail"),
               Text("Deploys need a green build", "")]
    words = evidence(lessons, [0, 1, 2], document_counts(lessons))
    assert set(words[:3]) == {"retries", "three", "request"}, words  # in every member
    assert "deploys" not in words and evidence(lessons, [2, 3]) == []
