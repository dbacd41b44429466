"""memlab.retrieval.textquery.query_kind: the one rule of a query's kind (identifier, question,
keywords), with examples and Hypothesis properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.config.vocab import QUERY_KINDS
from memlab.retrieval.textquery import QUESTION_WORDS, identifier_terms, query_kind


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("a828e60", "identifier"),
        ("which host runs gw-prod-7?", "identifier"),  # an identifier wins over the question
        ("/etc/nginx/conf.d/ratelimit.conf", "identifier"),
        ("STRIPE_WEBHOOK_SECRET rotation", "identifier"),
        ("what did Ana decide about the backups", "question"),
        ("Did we deploy on Friday", "question"),
        ("backups moved?", "question"),
        ("备份在哪里？", "question"),
        ("¿dónde están las copias", "question"),
        ("backup retention policy", "keywords"),
        ("whatever happened", "keywords"),  # "whatever" is no question word
        ("", "keywords"),
        ("   ", "keywords"),
        ("release 16 notes", "keywords"),  # a plain number is no identifier
    ],
)
def test_examples(query: str, kind: str) -> None:
    assert query_kind(query) == kind


words = st.lists(st.sampled_from(["backup", "policy", "gateway", "the", "laptop", "moved"]))


@settings(max_examples=200)
@given(st.text(max_size=60))
def test_kind_is_allowed_and_blind_to_outer_whitespace(query: str) -> None:
    kind = query_kind(query)
    assert kind in QUERY_KINDS
    assert query_kind(f"  {query}\t\n") == kind
    if identifier_terms(query):
        assert kind == "identifier"


@settings(max_examples=200)
@given(words)
def test_plain_words_are_keywords_until_asked(ws: list[str]) -> None:
    text = " ".join(ws)
    assert query_kind(text) == "keywords"
    assert query_kind(text + "?") == "question"
    assert query_kind(f"{sorted(QUESTION_WORDS)[len(ws) % len(QUESTION_WORDS)]} {text}") == (
        "question"
    )
    assert query_kind(f"{text} LED-{len(ws) + 100}?") == "identifier"
