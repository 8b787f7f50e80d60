"""One question, every channel: the same question asked in Slack, on the web and in the
terminal reads the same, and a person is told the same sentence for the same refusal.

Each channel's office asks the same refund (``{"order_id": "7", "amount": 30}`` with a
``Sensitive`` e-mail) through its own role implementation; where a channel's words are its
own, the test would be a strict xfail naming the difference: the kit's texts and question
view (``channels.kit``) make them one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from tests.conformance.driver import Answer, ChannelDriver, Kind, Scenario
from tests.conformance.slack_driver import slack_driver
from tests.conformance.terminal_driver import terminal_driver
from tests.conformance.web_driver import web_driver

APPROVE = Answer(kind=Kind.APPROVE)
Drivers = dict[str, ChannelDriver]


@pytest.fixture
async def drivers(tmp_path: Path) -> AsyncIterator[Drivers]:
    async with AsyncExitStack() as stack:
        opened: Drivers = {}
        for name, make in (
            ("slack", slack_driver),
            ("web", web_driver),
            ("terminal", terminal_driver),
        ):
            folder = tmp_path / name
            folder.mkdir()
            opened[name] = await stack.enter_async_context(make(folder))
        yield opened


def assert_said_alike(said: dict[str, str]) -> None:
    """Slack tells a refusal as one ephemeral sentence: every other channel says it too (the
    web within its page)."""
    sentence = said.pop("slack").strip()
    assert sentence
    for channel, text in said.items():
        assert sentence in text, (channel, sentence, text)


async def test_a_question_reads_the_same_everywhere(drivers: Drivers) -> None:
    shown = {}
    for name, driver in drivers.items():
        asked = await driver.ask(Scenario.REFUND)
        shown[name] = await driver.shown(asked)

    assert len({tuple(sorted(s.fields.items())) for s in shown.values()}) == 1, {
        name: s.fields for name, s in shown.items()
    }
    assert len({s.title for s in shown.values()}) == 1, {n: s.title for n, s in shown.items()}


async def test_a_wrong_approver_is_told_the_same_sentence(drivers: Drivers) -> None:
    said = {}
    for name in ("slack", "web"):
        driver = drivers[name]
        asked = await driver.ask(Scenario.REFUND)
        said[name] = (await driver.answer(asked, APPROVE, by=driver.people.stranger)).text

    assert_said_alike(said)


async def test_someone_not_the_owner_is_told_the_same_sentence(drivers: Drivers) -> None:
    said = {}
    for name, driver in drivers.items():
        asked = await driver.ask(Scenario.OWNERS)
        said[name] = (await driver.answer(asked, APPROVE, by=driver.people.stranger)).text

    assert_said_alike(said)


async def test_the_requester_is_told_the_same_sentence_about_their_own_request(
    drivers: Drivers,
) -> None:
    said = {}
    for name in ("slack", "web"):
        driver = drivers[name]
        asked = await driver.ask(Scenario.OWN_REQUEST)
        said[name] = (await driver.answer(asked, APPROVE, by=asked.approver)).text

    assert_said_alike(said)


async def test_an_answer_not_taken_is_told_the_same_sentence(drivers: Drivers) -> None:
    said = {}
    for name, driver in drivers.items():
        asked = await driver.ask(Scenario.GRAPH, allowed=(Kind.APPROVE, Kind.REJECT))
        edit = Answer(kind=Kind.EDIT, arguments={"order_id": "7", "amount": "5"})
        said[name] = (await driver.answer(asked, edit, by=asked.approver)).text

    assert_said_alike(said)


async def test_an_empty_list_says_the_same_sentence(drivers: Drivers) -> None:
    slack, web = drivers["slack"], drivers["web"]

    said = {
        "slack": (await slack.waiting_for(slack.people.stranger)).text.splitlines()[0],
        "web": (await web.waiting_for(web.people.stranger)).text,
    }

    assert_said_alike(said)
