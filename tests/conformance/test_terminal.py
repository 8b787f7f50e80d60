"""The conformance suite for the terminal channel (``tests.conformance.terminal_driver``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import ClassVar

import pytest

from tests.conformance.driver import ChannelDriver
from tests.conformance.suite import ChannelConformance
from tests.conformance.terminal_driver import TerminalDriver, terminal_driver

NOT_THE_OWNER = (
    "the terminal has no sentence for someone who is not the owner: the runtime's error is what "
    "is said ('[pause.not-thread-owner] only the owner of thread <thread id> may answer this "
    "pause'), with a thread id"
)


class TestTerminalChannel(ChannelConformance):
    driver_type = TerminalDriver
    differences: ClassVar[Mapping[str, str]] = {
        "test_the_question_says_who_asked_and_what_they_asked": (
            "the terminal's question line names neither the requester nor the request"
        ),
        "test_the_fields_are_titled_for_people": (
            "the terminal prints the arguments as raw JSON keys (order_id), not titled "
            "(Order ID) as Slack and the web do"
        ),
        "test_the_question_offers_approve_edit_and_reject": (
            "the terminal's question line does not say which answers it takes"
        ),
        "test_respond_is_offered_where_the_asker_takes_it": (
            "the terminal does not offer an answer in place of the tool (respond), though the "
            "runtime takes one"
        ),
        "test_a_kind_the_question_does_not_take_is_not_offered": (
            "the terminal does not say which answers an attached agent's question takes "
            "(allowed_decisions); a forced one is refused by the runtime"
        ),
        "test_a_timed_question_says_when_it_expires_with_its_time_zone": (
            "the terminal's question line does not say when it expires (its reminders do)"
        ),
        "test_an_answered_question_says_how_it_ended_and_offers_nothing": (
            "the terminal writes nothing once a question is answered (no outcome line)"
        ),
        "test_a_rejected_question_says_so_with_its_reason": (
            "the terminal writes nothing once a question is rejected (no outcome line with the "
            "reason)"
        ),
        "test_after_an_edit_the_question_shows_what_ran": (
            "the terminal writes nothing once a question is approved with changes (not what ran)"
        ),
        "test_a_wrong_answerer_is_told_who_may_answer": NOT_THE_OWNER,
        "test_someone_not_the_owner_is_told_only_who_asked_may_answer": NOT_THE_OWNER,
        "test_words_to_a_question_that_reads_none_are_told_it_takes_no_words": (
            "words to a question whose role reads none are told the runtime's 'the role "
            "payout-approval-channel has no reply interpreter: answer with a decision' (a role's "
            "name, for a developer), not that it cannot be answered in words"
        ),
        "test_a_reminder_names_the_request_not_the_tools_id": (
            "the terminal's reminder names the tool's id ('! pay-out-tool still waits ...'); "
            "Slack's and the web's name what it does ('Pays a payee out')"
        ),
        "test_an_answer_to_an_expired_question_is_told_it_expired": (
            "an answer to an expired question is told the runtime's '[run.not-paused] the "
            "question is no longer needed (it was withdrawn or cancelled)', not that it expired"
        ),
    }

    @pytest.fixture
    async def driver(self, tmp_path: Path) -> AsyncIterator[ChannelDriver]:
        async with terminal_driver(tmp_path) as driver:
            yield driver
