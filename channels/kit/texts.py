"""Every sentence a channel says to a person, once: refusals, closed questions, hints.

A channel adds its own markup (Slack's mrkdwn and emoji, the web's HTML) around these words,
never its own wording: a person reads the same sentence in Slack, on the web and in the
terminal. Sentences that depend on the question are functions of the kit's views.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

NOT_AN_APPROVER: Final = "You are not one of the approvers of this request."
NOT_THE_OWNER: Final = "Only the person who asked for this work can answer this request."
NOT_ESCALATED_YET: Final = (
    "This request has not been escalated to you: its approvers may still answer it. If nobody "
    "does in time, it comes to you and you may answer it then."
)
APPROVERS_NOT_CHECKED: Final = (
    "Whether you may answer this request could not be checked just now: your answer was not "
    "recorded. Please try again in a minute."
)
"""Who may answer hangs on a list the channel could not read for now (Slack's user groups in
an outage): nothing is recorded, neither refused nor taken."""
NO_LONGER_AVAILABLE: Final = "This request is no longer available."
NO_LONGER_NEEDED: Final = "This request is no longer needed."
SELF_APPROVAL: Final = (
    "You asked for this, so you cannot approve it: someone else must answer "
    "(this approval separates duties)."
)
NO_WORDS_TAKEN: Final = "This request cannot be answered in words: use the buttons."
SOME_VALUES: Final = "Some values need a change: see below."
WRITE_FIRST: Final = "Write your answer first."
NOT_TAKEN: Final = "Your answer was not taken."
NOTHING_WAITS: Final = "Nothing waits for you."
NOT_YET_DELIVERED: Final = "not yet delivered"
"""Beside a question its channel could not be given yet (an outage): it is asked again."""
NOTHING_DECIDED: Final = "You have not answered anything yet."
NO_ARGUMENTS: Final = "No arguments."

RESPOND_TITLE: Final = "Answer instead of the tool"
RESPOND_MEANS: Final = (
    "The tool does not run: the agent reads what you write here as the tool's result."
)
REPLY_TITLE: Final = "Answer in your own words"
REPLY_MEANS: Final = (
    "Write approve, or reject followed by a colon and your reason: it is read as your answer "
    "to the question above."
)


NOT_OFFERED_LEAD: Final = "This request does not take that answer"


def not_offered(taken: tuple[str, ...]) -> str:
    """What a person is told when they answer in a way the question does not take."""
    listed = ", ".join(taken) or "no answer here"
    return f"{NOT_OFFERED_LEAD} (it takes: {listed}). It still waits."


def already_answered(by: str | None) -> str:
    """A late answer's refusal: who answered first (a channel may write them as a mention)."""
    return (
        f"This request was already answered by {by}."
        if by
        else ("This request was already answered.")
    )


def not_by_the_requester(requester: str) -> str:
    """The line on a question whose role separates duties."""
    who = requester or "The requester"
    return f"{who} asked for this and cannot approve it: someone else must answer."


def not_understood(reason: str) -> str:
    """A free-text answer the role's interpreter could not read, and why."""
    return f"Not understood: {reason} The request still waits for your answer."


def tool_returned(result: str) -> str:
    """What the tool returned once it ran, on one line."""
    return f"The tool returned: “{' '.join(result.split())}”"


# Standing grants ("Approve and allow similar …", channels.kit.grants).
GRANT_BUTTON: Final = "Approve and allow similar…"
GRANT_TITLE: Final = "Approve and allow similar requests"
GRANT_MEANS: Final = (
    "This request is approved, and similar ones are approved at once from now on, within what "
    "you choose here, until it ends or someone revokes it."
)
GRANT_SCOPE_LABEL: Final = "Allow similar requests"
GRANT_HOURS_LABEL: Final = "For how long"
GRANT_SUBMIT: Final = "Approve and allow"
GRANT_SHORT_TITLE: Final = "Allow similar"  # where a title is short (Slack's modal: 24)
REVOKE: Final = "Revoke"
GRANT_SCOPE_UNKNOWN: Final = "Choose which similar requests to allow."
GRANT_HOURS_UNKNOWN: Final = "Choose for how long."
GRANT_BOUND_NOT_A_NUMBER: Final = "Write a number of at least 0, or leave it empty."
GRANTS_TITLE: Final = "Standing grants"
NO_GRANTS: Final = "No standing grants: every request is asked."
GRANT_NOT_OFFERED: Final = "This request offers no standing grant: approve or reject it."
GRANT_UNKNOWN: Final = "This grant is no longer there."
NOT_YOURS_TO_REVOKE: Final = "Only who gave this grant or an approver of its role may revoke it."


def grant_scope_label(kind: str, *, owner: str, agent: str) -> str:
    """One scope a question offers, for a person."""
    match kind:
        case "thread":
            return "for this thread"
        case "requester":
            return f"for requests of {owner}" if owner else "for this requester"
        case _:
            return f"for the agent {agent}"


def grant_bound_label(title: str) -> str:
    """The bound's input: ``Up to this Amount (empty: any)``."""
    return f"Up to this {title} (for the agent: this request's by default)"


def grant_hours_option(hours: int) -> str:
    return "for 1 hour" if hours == 1 else f"for {hours} hours"


def granted(line: str) -> str:
    """Said to who approved with a grant."""
    return f"Approved, and similar requests are allowed: {line}."


def grant_refused(reason: str) -> str:
    """Said when the approval was taken but the grant was not."""
    return f"Approved, but similar requests are not allowed: {reason}"


def more_grants(count: int) -> str:
    """Grants past those a list shows."""
    return f"{count} more: python -m bot grants list"


def grant_revoked(line: str) -> str:
    return f"Revoked: {line}. The next similar request is asked."


# Several approvals of one question (a role's ``required_approvals``): ``channels.kit.approvals``.
ALREADY_APPROVED: Final = (
    "You approved this already: it needs another approver too (the request still waits)."
)
PROPOSAL_CHANGED: Final = (
    "Another approver changed the request while you answered: look at it again and approve "
    "what is shown now (the request still waits)."
)
PROPOSAL_MAY_HAVE_CHANGED: Final = (
    "The request may have changed since this message was shown: look at it again and "
    "approve what is shown now (the request still waits)."
)
"""Said to an approval from a surface that did not say which proposal it showed (a message
posted before answers carried it), of a question whose proposal an edit replaced."""


def approvals_needed(required: int) -> str:
    """The line on a question nobody approved yet that needs several approvals."""
    return f"Needs {required} approvals, each by a different person."


def approvals_so_far(approvers: str, counted: int, required: int) -> str:
    """Who approved the standing proposal, and how many of the approvals needed that is."""
    return f"Approved by {approvers} · {counted} of {required} needed"


def people(names: Sequence[str]) -> str:
    """Several people in one sentence: "ann", "ann and bob", "ann, bob and cid"."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def approvals_given(counted: int, required: int) -> str:
    """How many approvals a closed question that needed several was given ("2 of 2"), after
    who gave them ("Approved by ann and bob · 2 of 2")."""
    return f"{counted} of {required}"


def edited_by(who: str) -> str:
    """Who changed the proposal the approvals are of (the ones before were voided)."""
    return f"Changed by {who}: earlier approvals no longer count"


def approval_counted(still_needed: int) -> str:
    """What an approver is told once their approval is counted and more are needed."""
    more = "1 more approval" if still_needed == 1 else f"{still_needed} more approvals"
    return f"Your approval is counted: {more} needed before it goes ahead."


def handed_on(by: str, to: str) -> str:
    """A question an approver handed to someone (Reassign): they may answer it too."""
    return f"Handed to {to} by {by}: they may answer it too"


def handed_to_you_by(by: str) -> str:
    """Why a question reassigned to a person is on their list."""
    return f"Handed to you by {by}"


def answering_for(delegator: str, until: str) -> str:
    """Why a question a standing delegation covers is on its delegate's list."""
    return f"You answer for {delegator} until {until}"


def you_hand_to(delegate: str, until: str) -> str:
    """A person's own standing delegation, as their Home or inbox lists it."""
    return f"You hand your questions to {delegate} until {until}"


def hands_to_you(delegator: str, until: str) -> str:
    """A standing delegation to a person, as their Home or inbox lists it."""
    return f"{delegator} hands their questions to you until {until}"


def delegation_started(delegator: str, roles: str, until: str) -> str:
    """What a delegate is told when a standing delegation to them starts."""
    return f"{delegator} hands you their questions for {roles} until {until}: you may answer them."


def delegation_ended(delegator: str) -> str:
    """What a delegate is told when a standing delegation to them is ended early."""
    return f"{delegator} ended their delegation to you: their questions are theirs again."


def delegation_made(delegate: str, until: str) -> str:
    """What a person who started a delegation is told."""
    return f"Handed on: {delegate} may answer your questions until {until}."


NO_ROLES: Final = "no role yet"
"""A delegation's roles, when its delegator approves none (yet)."""
DELEGATION_ENDED: Final = "Ended: your questions are yours again."
DELEGATION_NOT_YOURS: Final = (
    "Only the person who hands their questions on may end that: nothing changed."
)
DELEGATION_GONE: Final = "That delegation has ended already."
DELEGATE_MISSING: Final = "Choose the person to hand your questions to."
DELEGATE_YOURSELF: Final = "Choose someone else: you answer your own questions already."
DELEGATE_UNKNOWN: Final = "No such person here: choose someone who may sign in."
DELEGATION_END_MISSING: Final = "Choose when it ends."
DELEGATION_END_PAST: Final = "Choose an end after now: that moment has passed."
DELEGATION_END_UNREADABLE: Final = "Give the end as a date and time, e.g. 2026-03-09T18:00."


def handed_to_you(by: str, title: str) -> str:
    """What the person a question was handed to is told (with where to answer it)."""
    return f"{by} handed you a question to answer: {title}"


# Several questions answered at once (a batch): ``channels.kit.batches``.
BATCH_APPROVED: Final = "Approved."
BATCH_REJECTED: Final = "Rejected."
BATCH_NONE_SELECTED: Final = "Select at least one question, then approve or reject them."
BATCH_NOT_YOURS: Final = (
    "One of the selected questions is not one you were asked: nothing was answered."
)
BATCH_REASON_REQUIRED: Final = "Give the reason each selected question is rejected with."


def batch_skipped(how: str) -> str:
    """An item of a batch that was answered before the batch reached it."""
    return f"Already answered elsewhere, skipped: {how}"


def batch_refused(why: str) -> str:
    """An item of a batch this person may not answer so (nothing was recorded for it)."""
    return f"Refused: {why}"
