"""The channel conformance suite: what every channel does, tested from outside.

A channel proves itself by running this suite with its driver (``tests.conformance.driver``):

    class TestMyChannel(ChannelConformance):
        driver_type = MyDriver  # its capabilities decide what is skipped, before it is built
        differences = {}  # test name -> why this channel fails it today (strict xfail)

        @pytest.fixture
        async def driver(self, tmp_path) -> AsyncIterator[ChannelDriver]: ...

A test marked ``requires(Capability.X)`` is skipped, with the driver's reason, where the
driver does not declare X (as langgraph's checkpoint conformance skips a saver's missing
capabilities). A test named in ``differences`` is an expected failure (strict: once the
channel passes it, the mark must go).
"""

from __future__ import annotations

import importlib
import re

import pytest

from tests.conformance.behind import REQUEST, SECRET
from tests.conformance.driver import (
    Answer,
    Capability,
    ChannelDriver,
    Kind,
    Scenario,
)

OFFERED_BY_DEFAULT = frozenset({Kind.APPROVE, Kind.EDIT, Kind.REJECT})
RESPONSE = "Order 7 was refunded yesterday; nothing to do."


def kit_sentence(name: str) -> str | None:
    """The kit's sentence ``name`` (``channels.kit.texts``), once the kit says it for every
    channel; None until then (each channel's own words are checked more loosely)."""
    try:
        texts = importlib.import_module("channels.kit.texts")
    except ModuleNotFoundError:
        return None
    sentence = getattr(texts, name, None)
    return sentence if isinstance(sentence, str) else None


def assert_says(told: str, sentence: str, *, or_else: str) -> None:
    """``told`` holds the kit's ``sentence`` (once there is a kit), else matches ``or_else``."""
    expected = kit_sentence(sentence)
    if expected is not None:
        assert expected in told, (expected, told)
    else:
        assert told.strip() and re.search(or_else, told, re.IGNORECASE), told


def requires(*capabilities: Capability) -> pytest.MarkDecorator:
    """Run the test only for drivers that declare every one of ``capabilities``."""
    return pytest.mark.requires(*capabilities)


APPROVE = Answer(kind=Kind.APPROVE)


class ChannelConformance:
    """The suite; a channel's test class inherits it and gives the ``driver`` fixture."""

    # ---------------------------------------------------------------- ask

    async def test_ask_shows_the_question_and_its_fields(self, driver: ChannelDriver) -> None:
        asked = await driver.ask(Scenario.REFUND)

        shown = await driver.shown(asked)

        assert shown.title.strip() and shown.title in shown.text
        assert "7" in shown.fields.values()
        assert any(value.startswith("30") for value in shown.fields.values()), shown.fields
        assert asked.pause_id not in driver.everything_said()
        assert driver.runs() == []

    async def test_the_title_says_what_the_tool_does_not_its_id(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.REFUND)

        shown = await driver.shown(asked)

        assert asked.tool not in shown.title
        assert "refund" in shown.title.lower()

    async def test_the_question_says_who_asked_and_what_they_asked(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.REFUND)

        shown = await driver.shown(asked)

        assert driver.people.requester in shown.text
        assert REQUEST in shown.text

    async def test_the_fields_are_titled_for_people(self, driver: ChannelDriver) -> None:
        asked = await driver.ask(Scenario.REFUND)

        shown = await driver.shown(asked)

        assert {"Order ID", "Amount"} <= set(shown.fields), shown.fields

    async def test_a_value_shown_can_be_typed_back(self, driver: ChannelDriver) -> None:
        asked = await driver.ask(Scenario.REFUND)
        [amount] = [
            v for k, v in (await driver.shown(asked)).fields.items() if "amount" in k.lower()
        ]

        told = await driver.answer(
            asked,
            Answer(kind=Kind.EDIT, arguments={"order_id": "7", "amount": amount}),
            by=asked.approver,
        )

        assert told.taken, (amount, told.text)
        assert [run["amount"] for run in driver.runs()] == [30.0]

    async def test_a_large_amount_shown_can_be_typed_back(self, driver: ChannelDriver) -> None:
        asked = await driver.ask(Scenario.LARGE_REFUND)
        [amount] = [
            v for k, v in (await driver.shown(asked)).fields.items() if "amount" in k.lower()
        ]

        told = await driver.answer(
            asked,
            Answer(kind=Kind.EDIT, arguments={"order_id": "7", "amount": amount}),
            by=asked.approver,
        )

        assert told.taken, (amount, told.text)
        assert [run["amount"] for run in driver.runs()] == [1234.5]

    async def test_the_question_offers_approve_edit_and_reject(self, driver: ChannelDriver) -> None:
        asked = await driver.ask(Scenario.REFUND)

        shown = await driver.shown(asked)

        assert shown.offered == OFFERED_BY_DEFAULT

    # ---------------------------------------------------------------- answer by each kind

    async def test_approve_runs_the_tool_once_with_what_was_asked(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.REFUND)

        told = await driver.answer(asked, APPROVE, by=asked.approver)
        again = await driver.answer(asked, APPROVE, by=asked.approver)

        assert told.taken
        assert not again.taken
        assert [(run["order_id"], run["amount"]) for run in driver.runs()] == [("7", 30.0)]

    async def test_edit_runs_the_tool_with_the_changed_arguments(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.REFUND)

        told = await driver.answer(
            asked,
            Answer(kind=Kind.EDIT, arguments={"order_id": "7", "amount": "20"}),
            by=asked.approver,
        )

        assert told.taken, told.text
        assert [run["amount"] for run in driver.runs()] == [20.0]
        audit = await driver.audit(asked)
        assert '"amount": 20.0' in audit  # ran_with: what was approved

    async def test_after_an_edit_the_question_shows_what_ran(self, driver: ChannelDriver) -> None:
        asked = await driver.ask(Scenario.REFUND)

        await driver.answer(
            asked,
            Answer(kind=Kind.EDIT, arguments={"order_id": "7", "amount": "20"}),
            by=asked.approver,
        )

        after = await driver.shown(asked)
        assert re.search(r"\b20(\.0+)?\b", after.text), after.text

    async def test_reject_with_a_reason_gives_the_agent_the_reason_and_runs_nothing(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.REFUND)

        told = await driver.answer(
            asked, Answer(kind=Kind.REJECT, reason="amount too high"), by=asked.approver
        )

        assert told.taken, told.text
        assert driver.runs() == []
        assert any("amount too high" in read for read in driver.agent_read()), driver.agent_read()

    async def test_a_rejected_question_says_so_with_its_reason(self, driver: ChannelDriver) -> None:
        asked = await driver.ask(Scenario.REFUND)

        await driver.answer(
            asked, Answer(kind=Kind.REJECT, reason="amount too high"), by=asked.approver
        )

        after = await driver.shown(asked)
        assert after.offered == frozenset()
        assert "rejected" in after.text.lower() and "amount too high" in after.text

    async def test_reject_without_the_reason_the_role_requires_is_refused_and_waits(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.REFUND)

        told = await driver.answer(asked, Answer(kind=Kind.REJECT), by=asked.approver)

        assert not told.taken
        assert "reason" in told.text.lower()
        assert (await driver.answer(asked, APPROVE, by=asked.approver)).taken

    async def test_an_answer_in_place_of_the_tool_is_refused_where_the_asker_reads_none(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.REFUND)  # our own tool's question takes no response

        told = await driver.answer(
            asked, Answer(kind=Kind.RESPOND, response=RESPONSE), by=asked.approver
        )

        assert not told.taken
        assert told.text.strip()
        assert (await driver.answer(asked, APPROVE, by=asked.approver)).taken
        assert len(driver.runs()) == 1

    @requires(Capability.RESPOND)
    async def test_respond_is_offered_where_the_asker_takes_it(self, driver: ChannelDriver) -> None:
        asked = await driver.ask(Scenario.GRAPH, allowed=(Kind.APPROVE, Kind.RESPOND))

        assert (await driver.shown(asked)).offered == {Kind.APPROVE, Kind.RESPOND}

    @requires(Capability.RESPOND)
    async def test_respond_replaces_the_tools_result(self, driver: ChannelDriver) -> None:
        asked = await driver.ask(Scenario.GRAPH, allowed=(Kind.APPROVE, Kind.RESPOND))

        told = await driver.answer(
            asked, Answer(kind=Kind.RESPOND, response=RESPONSE), by=asked.approver
        )

        assert told.taken, told.text
        assert driver.runs() == []
        assert driver.agent_read() == [RESPONSE]

    @requires(Capability.LIMITED_OFFERS)
    async def test_a_kind_the_question_does_not_take_is_not_offered(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.GRAPH, allowed=(Kind.APPROVE, Kind.REJECT))

        assert (await driver.shown(asked)).offered == {Kind.APPROVE, Kind.REJECT}

    @requires(Capability.LIMITED_OFFERS)
    async def test_a_kind_the_question_does_not_take_is_refused_if_forced(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.GRAPH, allowed=(Kind.APPROVE, Kind.REJECT))

        for forced in (
            Answer(kind=Kind.EDIT, arguments={"order_id": "7", "amount": "5"}),
            Answer(kind=Kind.RESPOND, response=RESPONSE),
        ):
            told = await driver.answer(asked, forced, by=asked.approver)
            assert not told.taken, forced
            assert told.text.strip()

        assert driver.runs() == []
        assert (await driver.answer(asked, APPROVE, by=asked.approver)).taken
        assert [(run["order_id"], run["amount"]) for run in driver.runs()] == [("7", 40.0)]

    async def test_a_graphs_approval_runs_its_tool_once(self, driver: ChannelDriver) -> None:
        asked = await driver.ask(Scenario.GRAPH)

        assert (await driver.answer(asked, APPROVE, by=asked.approver)).taken

        assert [(run["order_id"], run["amount"]) for run in driver.runs()] == [("7", 40.0)]
        assert driver.agent_read() == ["refunded 40.00 on order 7"]

    # ---------------------------------------------------------------- in words

    async def test_words_are_read_by_the_roles_interpreter(self, driver: ChannelDriver) -> None:
        asked = await driver.ask(Scenario.REFUND)

        told = await driver.reply(asked, "reject: wrong customer", by=asked.approver)

        assert told.taken, told.text
        assert driver.runs() == []
        assert any("wrong customer" in read for read in driver.agent_read()), driver.agent_read()

    async def test_words_that_give_no_answer_say_why_and_the_question_waits(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.REFUND)

        told = await driver.reply(asked, "maybe, ask me tomorrow?", by=asked.approver)

        assert not told.taken
        assert "question" in told.text.lower(), told.text  # why: the words read as a question
        assert driver.runs() == []
        assert (await driver.reply(asked, "approve", by=asked.approver)).taken
        assert len(driver.runs()) == 1

    async def test_words_to_a_question_that_reads_none_are_refused(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.TIMED)  # its role has no reply interpreter

        told = await driver.reply(asked, "approve", by=asked.approver)

        assert not told.taken
        assert told.text.strip()
        assert driver.runs() == []
        assert (await driver.answer(asked, APPROVE, by=asked.approver)).taken

    async def test_words_to_a_question_that_reads_none_are_told_it_takes_no_words(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.TIMED)

        told = await driver.reply(asked, "approve", by=asked.approver)

        assert re.search(r"in words|it takes", told.text, re.IGNORECASE), told.text

    # ---------------------------------------------------------------- who may answer

    async def test_a_wrong_answerer_is_refused_and_the_question_waits(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.REFUND)

        told = await driver.answer(asked, APPROVE, by=driver.people.stranger)

        assert not told.taken
        assert told.text.strip()
        assert driver.runs() == []
        assert (await driver.answer(asked, APPROVE, by=asked.approver)).taken
        assert len(driver.runs()) == 1

    async def test_a_wrong_answerer_is_told_who_may_answer(self, driver: ChannelDriver) -> None:
        asked = await driver.ask(Scenario.REFUND)

        told = await driver.answer(asked, APPROVE, by=driver.people.stranger)

        if Capability.APPROVERS in driver.capabilities:
            assert_says(told.text, "NOT_AN_APPROVER", or_else=r"not one of the approvers")
        else:
            assert_says(told.text, "NOT_THE_OWNER", or_else=r"who asked")

    async def test_only_the_owner_answers_a_thread_owners_question(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.OWNERS)
        assert asked.approver == driver.people.requester

        told = await driver.answer(asked, APPROVE, by=driver.people.stranger)

        assert not told.taken
        assert (await driver.answer(asked, APPROVE, by=driver.people.requester)).taken
        assert len(driver.runs()) == 1

    async def test_someone_not_the_owner_is_told_only_who_asked_may_answer(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.OWNERS)

        told = await driver.answer(asked, APPROVE, by=driver.people.stranger)

        assert_says(told.text, "NOT_THE_OWNER", or_else=r"who asked")

    @requires(Capability.APPROVERS, Capability.SEPARATION_OF_DUTIES)
    async def test_the_requester_cannot_approve_their_own_request(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.OWN_REQUEST)

        told = await driver.answer(asked, APPROVE, by=asked.approver)

        assert not told.taken
        assert_says(told.text, "SELF_APPROVAL", or_else=r"cannot approve")
        assert driver.runs() == []
        second = driver.people.second_approver
        assert second is not None
        assert (await driver.answer(asked, APPROVE, by=second)).taken
        assert len(driver.runs()) == 1

    # ---------------------------------------------------------------- after the end

    async def test_an_answered_question_says_how_it_ended_and_offers_nothing(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.REFUND)
        before = await driver.shown(asked)

        await driver.answer(asked, APPROVE, by=asked.approver)

        after = await driver.shown(asked)
        assert after.offered == frozenset()
        assert after.text != before.text
        assert "approved" in after.text.lower()

    async def test_a_second_answer_is_told_the_question_was_answered(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.REFUND)
        await driver.answer(asked, APPROVE, by=asked.approver)

        late = await driver.answer(asked, Answer(kind=Kind.REJECT, reason="no"), by=asked.approver)

        assert not late.taken
        assert re.search(r"already answered|approved by", late.text, re.IGNORECASE), late.text
        assert len(driver.runs()) == 1

    @requires(Capability.WITHDRAW)
    async def test_a_withdrawn_question_says_so_offers_nothing_and_takes_no_answer(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.REFUND)

        await driver.withdraw(asked)

        shown = await driver.shown(asked)
        assert shown.offered == frozenset()
        assert re.search(r"no longer needed|no answer is needed", shown.text, re.I), shown.text
        assert not (await driver.answer(asked, APPROVE, by=asked.approver)).taken
        assert driver.runs() == []

    @requires(Capability.WITHDRAW)
    async def test_a_cancelled_question_says_it_was_cancelled(self, driver: ChannelDriver) -> None:
        """Withdrawn (no longer needed) and cancelled (the work was stopped) read differently."""
        asked = await driver.ask(Scenario.REFUND)

        await driver.cancel(asked)

        shown = await driver.shown(asked)
        assert shown.offered == frozenset()
        assert "cancelled" in shown.text.lower(), shown.text
        assert not (await driver.answer(asked, APPROVE, by=asked.approver)).taken
        assert driver.runs() == []

    # ---------------------------------------------------------------- time

    @requires(Capability.EXPIRE)
    async def test_a_timed_question_says_when_it_expires_with_its_time_zone(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.TIMED)

        shown = await driver.shown(asked)

        assert "expire" in shown.text.lower(), shown.text
        # a time zone, or Slack's date token (shown in the reader's own zone)
        assert re.search(r"\bUTC\b|[+-]\d\d:?\d\d\b|<!date\^", shown.text), shown.text

    @requires(Capability.EXPIRE)
    async def test_an_expired_question_says_so_and_takes_no_answer(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.TIMED)

        await driver.advance(asked, 25)

        shown = await driver.shown(asked)
        assert shown.offered == frozenset()
        assert "expired" in shown.text.lower(), shown.text
        told = await driver.answer(asked, APPROVE, by=asked.approver)
        assert not told.taken
        assert driver.runs() == []

    @requires(Capability.EXPIRE)
    async def test_an_answer_to_an_expired_question_is_told_it_expired(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.TIMED)
        await driver.advance(asked, 25)

        told = await driver.answer(asked, APPROVE, by=asked.approver)

        assert not told.taken
        assert "expired" in told.text.lower() or "in time" in told.text.lower(), told.text

    @requires(Capability.REMIND)
    async def test_a_waiting_question_is_reminded_at_its_times(self, driver: ChannelDriver) -> None:
        asked = await driver.ask(Scenario.TIMED)

        first = await driver.advance(asked, 1)
        none_yet = await driver.advance(asked, 1)
        second = await driver.advance(asked, 1)

        assert len(first) >= 1 and len(second) >= 1, (first, second)
        assert none_yet == []
        assert (await driver.answer(asked, APPROVE, by=asked.approver)).taken
        assert await driver.advance(asked, 4) == []  # answered: no more reminders

    @requires(Capability.REMIND)
    async def test_a_reminder_says_when_the_question_expires(self, driver: ChannelDriver) -> None:
        asked = await driver.ask(Scenario.TIMED)

        [reminder] = await driver.advance(asked, 1)

        assert "expire" in reminder.lower(), reminder
        assert re.search(r"\bUTC\b|<!date\^", reminder), reminder

    @requires(Capability.REMIND)
    async def test_a_reminder_names_the_request_not_the_tools_id(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.TIMED)

        [reminder] = await driver.advance(asked, 1)

        assert asked.tool not in reminder, reminder

    @requires(Capability.ESCALATE)
    async def test_an_escalated_question_may_be_answered_by_its_escalation_approver(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.TIMED)
        escalated_to = driver.people.escalated_to
        assert escalated_to is not None

        early = await driver.answer(asked, APPROVE, by=escalated_to)
        assert not early.taken
        assert early.text.strip()
        await driver.advance(asked, 3)
        said = await driver.advance(asked, 1)  # 4 h: escalated

        assert said, "the escalation is said to someone"
        assert (await driver.answer(asked, APPROVE, by=escalated_to)).taken
        assert len(driver.runs()) == 1

    @requires(Capability.ESCALATE)
    async def test_the_escalation_approver_is_told_it_is_not_escalated_yet(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.TIMED)
        escalated_to = driver.people.escalated_to
        assert escalated_to is not None

        early = await driver.answer(asked, APPROVE, by=escalated_to)

        assert not early.taken
        assert_says(early.text, "NOT_ESCALATED_YET", or_else=r"not been escalated|not escalated")

    # ---------------------------------------------------------------- what waits

    @requires(Capability.WAITING_LIST)
    async def test_what_waits_for_a_person_lists_their_questions_only(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.REFUND)

        mine = await driver.waiting_for(asked.approver)
        nobodys = await driver.waiting_for(driver.people.stranger)

        assert mine.count == 1, mine.text
        assert "refund" in mine.text.lower()
        assert SECRET not in mine.text
        assert nobodys.count == 0, nobodys.text

    @requires(Capability.WAITING_LIST)
    async def test_an_answered_question_waits_no_more(self, driver: ChannelDriver) -> None:
        asked = await driver.ask(Scenario.REFUND)
        await driver.answer(asked, APPROVE, by=asked.approver)

        waiting = await driver.waiting_for(asked.approver)

        assert waiting.count == 0, waiting.text
        assert_says(waiting.text, "NOTHING_WAITS", or_else=r"nothing (is )?wait")

    # ---------------------------------------------------------------- masking

    async def test_a_sensitive_value_is_shown_nowhere_but_reaches_the_tool(
        self, driver: ChannelDriver
    ) -> None:
        asked = await driver.ask(Scenario.REFUND)
        shown = await driver.shown(asked)
        assert SECRET not in shown.text

        await driver.answer(
            asked,
            Answer(kind=Kind.EDIT, arguments={"order_id": "7", "amount": "25"}),
            by=asked.approver,
        )

        assert [run["email"] for run in driver.runs()] == [SECRET]
        assert SECRET not in (await driver.shown(asked)).text
        assert SECRET not in driver.everything_said()
        assert SECRET not in await driver.audit(asked)

    async def test_an_attached_agents_sensitive_value_is_shown_nowhere(
        self, driver: ChannelDriver
    ) -> None:
        """Its middleware's own description repeats the call's arguments: masked too."""
        asked = await driver.ask(Scenario.GRAPH_WITH_SECRET)
        assert SECRET not in (await driver.shown(asked)).text

        assert (await driver.answer(asked, APPROVE, by=asked.approver)).taken

        assert [(run["order_id"], run["amount"]) for run in driver.runs()] == [("7", 40)]
        assert SECRET not in (await driver.shown(asked)).text
        assert SECRET not in driver.everything_said()
        assert SECRET not in await driver.audit(asked)
