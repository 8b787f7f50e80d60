"""The conformance suite for the terminal channel (``tests.conformance.terminal_driver``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import ClassVar

import pytest

from tests.conformance.driver import ChannelDriver
from tests.conformance.suite import ChannelConformance
from tests.conformance.terminal_driver import TerminalDriver, terminal_driver


class TestTerminalChannel(ChannelConformance):
    driver_type = TerminalDriver
    differences: ClassVar[Mapping[str, str]] = {
        "test_the_title_says_what_the_tool_does_not_its_id": (
            "the terminal's question is headed by the tool's id ('? refund-card-tool wants to "
            "run with ...'), not by what it does (Slack and the web: 'Refunds a card')"
        ),
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
        "test_respond_replaces_the_tools_result": (
            "the terminal does not offer an answer in place of the tool (respond), though the "
            "runtime takes one"
        ),
        "test_a_kind_the_question_does_not_take_is_not_offered_and_refused_if_forced": (
            "the terminal does not say which answers an attached agent's question takes "
            "(allowed_decisions); a forced one is refused by the runtime"
        ),
        "test_a_wrong_answerer_is_refused_told_who_may_and_the_question_waits": (
            "the terminal has no sentence for someone who is not the owner: the runtime's error "
            "is what is said ('[pause.not-thread-owner] only the owner of thread <thread id> may "
            "answer this pause'), with a thread id"
        ),
        "test_an_answer_to_an_expired_question_is_told_it_expired": (
            "an answer to an expired question is told the runtime's '[run.not-paused] the "
            "question is no longer needed (it was withdrawn or cancelled)', not that it expired"
        ),
        "test_words_to_a_question_that_reads_none_are_refused": (
            "words to a question whose role reads none are told the runtime's 'the role "
            "payout-approval-channel has no reply interpreter: answer with a decision' (a role's "
            "name, for a developer), not that it cannot be answered in words"
        ),
        "test_a_timed_question_says_when_it_expires_with_its_time_zone": (
            "the terminal's question line does not say when it expires (its reminders do)"
        ),
        "test_only_the_owner_answers_a_thread_owners_question": (
            "the terminal has no sentence for someone who is not the owner: the runtime's error "
            "is what is said ('[pause.not-thread-owner] only the owner of thread <thread id> may "
            "answer this pause'), with a thread id"
        ),
        "test_an_answered_question_says_how_it_ended_and_offers_nothing": (
            "the terminal writes nothing once a question is answered (no outcome line)"
        ),
        "test_reject_with_a_reason_gives_the_agent_the_reason_and_runs_nothing": (
            "the terminal writes nothing once a question is rejected (no outcome line with the "
            "reason)"
        ),
        "test_after_an_edit_the_question_shows_what_ran": (
            "the terminal writes nothing once a question is approved with changes (not what ran)"
        ),
    }

    @pytest.fixture
    async def driver(self, tmp_path: Path) -> AsyncIterator[ChannelDriver]:
        async with terminal_driver(tmp_path) as driver:
            yield driver
