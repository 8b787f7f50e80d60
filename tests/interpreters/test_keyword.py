"""The keyword interpreter against a table of replies, plus properties over any text."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bot.core.dtos import ToolCallApprovalAsk, ToolCallApprovalDecision
from bot.core.reply import ReplyInput, ReplyInterpretation
from interpreters import KeywordReplyInterpreter
from interpreters.keyword import (
    APPROVALS_UNDERSTOOD,
    HOW_TO_ANSWER,
    REJECTION_WITH_REASON,
    REJECTIONS_UNDERSTOOD,
    how_to_answer,
)

ASK = ToolCallApprovalAsk(
    tool="refund-card-tool", arguments={"amount": 100, "customer": "c-17"}, call_id="c1"
)


@dataclass(frozen=True, slots=True)
class Expect:
    """``approved`` None means not understood."""

    approved: bool | None
    reason: str | None = None


APPROVE = Expect(approved=True)
REJECT = Expect(approved=False)
UNCLEAR = Expect(approved=None)


def approve(reason: str) -> Expect:
    return Expect(approved=True, reason=reason)


def reject(reason: str) -> Expect:
    return Expect(approved=False, reason=reason)


# (category, reply, expected). Every category but "plain" is a tricky one.
CASES: list[tuple[str, str, Expect]] = [
    # plain verdicts
    ("plain", "approve", APPROVE),
    ("plain", "approved", APPROVE),
    ("plain", "yes", APPROVE),
    ("plain", "yep", APPROVE),
    ("plain", "ok", APPROVE),
    ("plain", "okay", APPROVE),
    ("plain", "lgtm", APPROVE),
    ("plain", "go ahead", APPROVE),
    ("plain", "sounds good", APPROVE),
    ("plain", "ship it", APPROVE),
    ("plain", "looks good to me", APPROVE),
    ("plain", "yes please", APPROVE),
    ("plain", "I approve", APPROVE),
    ("plain", "approve this", APPROVE),
    ("plain", "go ahead with the refund", APPROVE),
    ("plain", "no objections", APPROVE),
    ("plain", "reject", REJECT),
    ("plain", "rejected", REJECT),
    ("plain", "no", REJECT),
    ("plain", "nope", REJECT),
    ("plain", "deny", REJECT),
    ("plain", "denied", REJECT),
    ("plain", "decline", REJECT),
    ("plain", "declined", REJECT),
    ("plain", "disallow", REJECT),
    ("plain", "disapprove", REJECT),
    ("plain", "no way", REJECT),
    ("plain", "stop", REJECT),
    ("plain", "nah", REJECT),
    ("plain", "no thanks", REJECT),
    ("plain", "reject this one", REJECT),
    # casing and punctuation
    ("casing", "APPROVED", APPROVE),
    ("casing", "Yes", APPROVE),
    ("casing", "LGTM", APPROVE),
    ("casing", "NO WAY", REJECT),
    ("casing", "DO NOT APPROVE", REJECT),
    ("punctuation", "Approved!", APPROVE),
    ("punctuation", "yes!!!", APPROVE),
    ("punctuation", "ok.", APPROVE),
    ("punctuation", "*approved*", APPROVE),
    ("punctuation", '"approve"', APPROVE),
    ("punctuation", "no.", REJECT),
    ("punctuation", "Nope!", REJECT),
    ("punctuation", "- approve", APPROVE),
    ("punctuation", "reject!", REJECT),
    # emoji and Slack shortcodes
    ("emoji", "👍", APPROVE),
    ("emoji", "👍🏽", APPROVE),
    ("emoji", "✅", APPROVE),
    ("emoji", "✔️", APPROVE),
    ("emoji", "approved ✅", APPROVE),
    ("emoji", "lgtm 🚀", APPROVE),
    ("emoji", "👎", REJECT),
    ("emoji", "❌", REJECT),
    ("emoji", "🚫", REJECT),
    ("emoji", "👍👎", UNCLEAR),
    ("emoji", "✅ reject", UNCLEAR),
    ("emoji", "🤔", UNCLEAR),
    ("emoji", "approved 🤷", UNCLEAR),
    ("emoji", "👀", UNCLEAR),
    ("shortcode", ":+1:", APPROVE),
    ("shortcode", ":thumbsup:", APPROVE),
    ("shortcode", ":white_check_mark:", APPROVE),
    ("shortcode", ":+1::skin-tone-3:", APPROVE),
    ("shortcode", ":-1:", REJECT),
    ("shortcode", ":thumbsdown:", REJECT),
    ("shortcode", ":x:", REJECT),
    ("shortcode", ":x: - wrong customer", reject("wrong customer")),
    ("shortcode", ":thinking_face:", UNCLEAR),
    ("shortcode", ":+1: :-1:", UNCLEAR),
    # words that contain verdict words are no verdicts
    ("substring", "yesterday", UNCLEAR),
    ("substring", "know", UNCLEAR),
    ("substring", "token", UNCLEAR),
    ("substring", "okra", UNCLEAR),
    ("substring", "nobody", UNCLEAR),
    ("substring", "notable", UNCLEAR),
    ("substring", "approval", UNCLEAR),
    ("substring", "stopwatch", UNCLEAR),
    ("substring", "snow", UNCLEAR),
    ("substring", "yes-man", UNCLEAR),
    # negation
    ("negation", "not approved", REJECT),
    ("negation", "I don't approve", REJECT),
    ("negation", "I do not approve of this", REJECT),
    ("negation", "do not proceed", REJECT),
    ("negation", "don't go ahead", REJECT),
    ("negation", "never", REJECT),
    ("negation", "never approve this", REJECT),
    ("negation", "please don't", REJECT),
    ("negation", "Don't!", REJECT),
    ("negation", "not ok", REJECT),
    ("negation", "I can't approve this", REJECT),
    ("negation", "I won't approve that", REJECT),
    ("negation", "I don't think we should approve this", REJECT),
    ("negation", "no, not approved", REJECT),
    ("negation", "I don't think so", REJECT),
    ("negation", "absolutely not", REJECT),
    ("negation", "of course not", REJECT),
    ("negation", "not approved: amount too high", reject("amount too high")),
    ("negation", "can't approve this, amount too high", reject("amount too high")),
    ("negation", "not rejected", UNCLEAR),
    ("negation", "not not approved", UNCLEAR),
    ("negation", "I don't disapprove", UNCLEAR),
    ("negation", "don't stop", UNCLEAR),
    ("negation", "never say no", UNCLEAR),
    ("negation", "not", UNCLEAR),
    ("negation", "not good", UNCLEAR),
    ("negation", "I would never", UNCLEAR),
    ("negation", "approve it, not reject", UNCLEAR),
    ("negation", "approve: not the full amount", UNCLEAR),
    # idioms
    ("idiom", "no problem, go ahead", APPROVE),
    ("idiom", "no worries, approved", APPROVE),
    ("idiom", "not a problem, go ahead", APPROVE),
    ("idiom", "don't worry, approved", APPROVE),
    ("idiom", "of course", APPROVE),
    ("idiom", "fine by me", APPROVE),
    ("idiom", "hell no", REJECT),
    ("idiom", "no problem", UNCLEAR),
    ("idiom", "no worries", UNCLEAR),
    ("idiom", "no doubt", UNCLEAR),
    ("idiom", "no idea", UNCLEAR),
    ("idiom", "not sure", UNCLEAR),
    ("idiom", "not at all", UNCLEAR),
    ("idiom", "never mind", UNCLEAR),
    ("idiom", "oh no", UNCLEAR),
    ("idiom", "no, go ahead", UNCLEAR),
    ("idiom", "no, it's fine", UNCLEAR),
    ("idiom", "yeah nah", UNCLEAR),
    ("idiom", "no issues, approved", APPROVE),
    ("idiom", "no reason to reject", UNCLEAR),
    ("idiom", "no need to reject", UNCLEAR),
    ("idiom", "I don't have a problem with it", UNCLEAR),
    ("idiom", "can't say no", UNCLEAR),
    ("idiom", "not my call", UNCLEAR),
    # reasons
    ("reason", "reject: amount too high", reject("amount too high")),
    ("reason", "no - wrong customer", reject("wrong customer")),
    ("reason", "REJECTED: Duplicate payment", reject("Duplicate payment")),
    ("reason", "reject because amount too high", reject("amount too high")),
    ("reason", "no because the receipt is missing", reject("the receipt is missing")),
    ("reason", "Rejected, wrong customer", reject("wrong customer")),
    ("reason", "Declined. Already refunded.", reject("Already refunded.")),
    ("reason", "deny — looks like fraud", reject("looks like fraud")),
    ("reason", "reject this one: wrong customer", reject("wrong customer")),
    ("reason", "reject\nwrong customer", reject("wrong customer")),
    ("reason", "reject:", REJECT),
    ("reason", "no - thanks", REJECT),
    ("reason", "approve: customer is a VIP", approve("customer is a VIP")),
    ("reason", "approved - verified with finance", approve("verified with finance")),
    ("reason", "approved, thanks", APPROVE),
    ("reason", "approved: thanks!", APPROVE),
    ("reason", "thanks, approved", APPROVE),
    ("reason", "nope, wrong customer", UNCLEAR),
    ("reason", "no. wrong customer", UNCLEAR),
    ("reason", "no wrong customer", UNCLEAR),
    ("reason", "approve, customer is a VIP", UNCLEAR),
    ("reason", "reject: the customer said yes by mistake", UNCLEAR),
    # questions
    ("question", "approve?", UNCLEAR),
    ("question", "should I approve this?", UNCLEAR),
    ("question", "should I approve this", UNCLEAR),
    ("question", "is this ok", UNCLEAR),
    ("question", "can you approve", UNCLEAR),
    ("question", "why not", UNCLEAR),
    ("question", "reject?", UNCLEAR),
    ("question", "yes or no?", UNCLEAR),
    ("question", "no - why would we refund twice?", UNCLEAR),
    # conditions
    ("condition", "approve if the amount is under 100", UNCLEAR),
    ("condition", "ok once finance agrees", UNCLEAR),
    ("condition", "yes unless the customer complains", UNCLEAR),
    ("condition", "approved as long as it's under budget", UNCLEAR),
    ("condition", "ok, provided the receipt is attached", UNCLEAR),
    ("condition", "no unless finance signs off", UNCLEAR),
    ("condition", "reject: approve if under 100", UNCLEAR),
    # partial answers and change requests
    ("partial", "ok, but only half", UNCLEAR),
    ("partial", "approve but change the amount to 50", UNCLEAR),
    ("partial", "approve half", UNCLEAR),
    ("partial", "approve 50", UNCLEAR),
    ("partial", "yes, 50 is enough", UNCLEAR),
    ("partial", "approve the lower amount", UNCLEAR),
    ("partial", "approve for the other card", UNCLEAR),
    ("partial", "approve up to the limit", UNCLEAR),
    ("partial", "no, only half", UNCLEAR),
    ("partial", "approve, make it smaller", UNCLEAR),
    # contradictions and take-backs
    ("contradiction", "yes and no", UNCLEAR),
    ("contradiction", "yes/no", UNCLEAR),
    ("contradiction", "approve... actually reject", UNCLEAR),
    ("contradiction", "approve. no wait, reject", UNCLEAR),
    ("contradiction", "approve; reject", UNCLEAR),
    ("contradiction", "~approved~ rejected", UNCLEAR),
    ("contradiction", "~approved~", UNCLEAR),
    ("contradiction", "ok, reject it", UNCLEAR),
    ("contradiction", "approve: amount is wrong", UNCLEAR),
    ("contradiction", "on second thought, approve", UNCLEAR),
    ("contradiction", "approve the rejection", UNCLEAR),
    ("contradiction", "yes, deny it", UNCLEAR),
    # doubt and deferral
    ("doubt", "maybe", UNCLEAR),
    ("doubt", "probably fine", UNCLEAR),
    ("doubt", "wait", UNCLEAR),
    ("doubt", "hold on, let me check", UNCLEAR),
    ("doubt", "not yet", UNCLEAR),
    ("doubt", "I think so", UNCLEAR),
    ("doubt", "ok, I'll look at it later", UNCLEAR),
    # empty and unrelated
    ("empty", "", UNCLEAR),
    ("empty", "   ", UNCLEAR),
    ("empty", "...", UNCLEAR),
    ("empty", "?!", UNCLEAR),
    ("unrelated", "what is this?", UNCLEAR),
    ("unrelated", "hello", UNCLEAR),
    ("unrelated", "thanks", UNCLEAR),
    ("unrelated", "lol", UNCLEAR),
    ("unrelated", "the customer called me", UNCLEAR),
    # a verdict about something else
    ("elsewhere", "yes I saw it", UNCLEAR),
    ("elsewhere", "yes, I saw it", UNCLEAR),
    ("elsewhere", "no, I'm busy", UNCLEAR),
    ("elsewhere", "no I haven't seen it", UNCLEAR),
    ("elsewhere", "yes to the email", UNCLEAR),
    ("elsewhere", "my answer is no", UNCLEAR),
    # Slack message shapes
    ("slack", "<@U024BE7LH> approved", APPROVE),
    ("slack", "approved :)", APPROVE),
    ("slack", "no :(", REJECT),
    ("slack", "approve\nthanks", APPROVE),
]

INTERPRETER = KeywordReplyInterpreter()


def interpret(reply: str) -> ReplyInterpretation[ToolCallApprovalDecision]:
    return INTERPRETER.interpret(ReplyInput(ask=ASK, reply=reply))


def verdict(result: ReplyInterpretation[ToolCallApprovalDecision]) -> bool | None:
    """True / False for an approval / rejection, None when not understood."""
    if not result.is_understood:
        return None
    assert isinstance(result.value, ToolCallApprovalDecision)
    return result.value.approved


@pytest.mark.parametrize(
    ("reply", "expected"),
    [pytest.param(reply, expected, id=f"{kind}:{reply!r}") for kind, reply, expected in CASES],
)
def test_reads_the_reply_exactly_as_expected(reply: str, expected: Expect) -> None:
    result = interpret(reply)

    if expected.approved is None:
        assert not result.is_understood, result.value
        assert result.value is None
        assert result.reason is not None
        assert result.reason.endswith(HOW_TO_ANSWER)
    else:
        assert result.is_understood, result.reason
        assert result.value == ToolCallApprovalDecision(
            approved=expected.approved, reason=expected.reason
        )


@pytest.mark.parametrize(
    ("reply", "approved"),
    [*((reply, True) for reply in APPROVALS_UNDERSTOOD),
     *((reply, False) for reply in REJECTIONS_UNDERSTOOD)],
)  # fmt: skip
def test_the_replies_shown_to_people_read_as_said(reply: str, approved: bool) -> None:
    assert interpret(reply).value == ToolCallApprovalDecision(approved=approved)


def test_the_reason_shown_to_people_reads_as_said() -> None:
    assert interpret(REJECTION_WITH_REASON).value == ToolCallApprovalDecision(
        approved=False, reason="wrong customer"
    )


def test_the_table_is_large_and_mostly_tricky() -> None:
    replies = [reply for _, reply, _ in CASES]
    understood = sum(expected.approved is not None for _, _, expected in CASES)
    tricky = sum(category != "plain" for category, _, _ in CASES)
    share = understood / len(CASES)
    print(f"{len(CASES)} replies, {understood} understood ({share:.0%}), {tricky} tricky")

    assert len(set(replies)) == len(replies), "a reply is in the table twice"
    assert len(CASES) >= 120
    assert tricky >= len(CASES) / 2
    assert 0.3 < share < 0.7


def test_no_reply_in_the_table_is_misread() -> None:
    misread = [
        reply
        for _, reply, expected in CASES
        if expected.approved is not None and verdict(interpret(reply)) is (not expected.approved)
    ]
    guessed = [
        reply
        for _, reply, expected in CASES
        if expected.approved is None and verdict(interpret(reply)) is not None
    ]

    assert misread == []
    assert guessed == []


def test_never_sets_override_arguments() -> None:
    for _, reply, _ in CASES:
        result = interpret(reply)
        assert result.value is None or result.value.override_arguments is None


def test_a_long_reason_is_cut_to_what_a_decision_allows() -> None:
    result = interpret("reject: " + "x" * 5000)

    assert result.value is not None
    assert result.value.reason == "x" * 3000


def test_is_registered_as_a_code_reply_interpreter() -> None:
    spec = KeywordReplyInterpreter.__countersign_spec__  # type: ignore[attr-defined]

    assert spec.name == "keyword-reply-interpreter"
    assert spec.decided_by == "CODE"


# ---------------------------------------------------------------- properties

VOCABULARY = sorted(
    {word for _, reply, _ in CASES for word in reply.split()}
    | {"not", "never", "don't", "no", "?", ",", ":", "-", "because", "but", "if"}
)
WORDY = st.lists(st.sampled_from(VOCABULARY), max_size=8).map(" ".join)
TEXT = st.one_of(st.text(), WORDY)
REJECTIONS = [reply for _, reply, expected in CASES if expected.approved is False]
NEGATIONS = st.sampled_from([" not", " never", " don't", " not?", "?", " no?", " not not"])
QUICK = settings(database=None, suppress_health_check=[HealthCheck.too_slow])


@QUICK
@given(TEXT)
def test_any_text_is_a_decision_or_not_understood(reply: str) -> None:
    result = interpret(reply)

    if result.is_understood:
        assert isinstance(result.value, ToolCallApprovalDecision)
        assert result.value.override_arguments is None
        assert result.reason is None
    else:
        assert result.value is None
        assert result.reason is not None
        assert result.reason.endswith(how_to_answer(result.language))  # in the language read


@QUICK
@given(st.sampled_from(REJECTIONS), st.lists(NEGATIONS, min_size=1, max_size=3))
def test_appended_negations_never_turn_a_rejection_into_an_approval(
    rejection: str, suffixes: list[str]
) -> None:
    reply = rejection
    for suffix in suffixes:
        reply += suffix
        assert verdict(interpret(reply)) is not True, reply


@QUICK
@given(st.sampled_from(REJECTIONS), st.sampled_from(["not ", "never ", "don't ", "no "]))
def test_a_leading_negation_never_turns_a_rejection_into_an_approval(
    rejection: str, prefix: str
) -> None:
    assert verdict(interpret(prefix + rejection)) is not True


@QUICK
@given(st.one_of(WORDY, st.tuples(st.sampled_from(REJECTIONS), WORDY).map(" ".join)),
       st.lists(NEGATIONS, min_size=1, max_size=3))  # fmt: skip
def test_negating_any_rejection_never_approves(reply: str, suffixes: list[str]) -> None:
    assume(verdict(interpret(reply)) is False)
    for suffix in suffixes:
        reply += suffix
        assert verdict(interpret(reply)) is not True, reply


@QUICK
@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_casing_never_changes_the_verdict(reply: str) -> None:
    assert verdict(interpret(reply.upper())) == verdict(interpret(reply.lower()))
