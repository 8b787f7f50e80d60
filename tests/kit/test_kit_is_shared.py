"""What the channels share lives once, in the kit: its sentences, its offers, its outcomes."""

from __future__ import annotations

import importlib

import pytest

from channels.kit import offers, outcomes, texts


@pytest.mark.parametrize(
    ("module", "name", "home"),
    [
        ("channels.slack.feedback", "NOT_AN_APPROVER", texts),
        ("channels.slack.feedback", "NOT_THE_OWNER", texts),
        ("channels.slack.render", "Offered", offers),
        ("channels.web.offers", "Offered", offers),
        ("channels.web.offers", "offered", offers),
        ("channels.slack.outcomes", "outcome_of", outcomes),
        ("channels.slack.render_message", "Approved", outcomes),
    ],
)
def test_a_channel_names_the_kits_own_object(module: str, name: str, home: object) -> None:
    assert getattr(importlib.import_module(module), name) is getattr(home, name)


def test_the_web_keeps_no_refusal_words_of_its_own() -> None:
    web_catalog = importlib.import_module("channels.web.catalog")
    assert not hasattr(web_catalog, "NOT_AN_APPROVER")
    assert not hasattr(web_catalog, "NOT_THE_OWNER")
