"""Standing delegations from the App Home: the person's own ("End now") and those to them, a
modal to start one, and the delegate told in a direct message when one starts or ends early.

The delegator is always the person who clicks or submits (never a value from the form), and
only a delegation's delegator may end it: an "End now" sent by anyone else with its id is
refused, nothing changed. The delegate's message is owed through the outbox
(``DELEGATION_NOTICE``, keyed by the delegation and the change), so a Slack outage delays it
and never loses it; it is said for every delegation started through the App
(``App.on_delegation``): from the Home, the web inbox, or any caller of ``App.delegate``.

Said once: the runtime records a change told only after it is owed here, so a process that
dies in between has it told again (``DelegationChange.again``); such a notice, like any entry
tried before, first looks for its mark in the delegate's direct messages since the change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app import App
from bot.core.delegations import Delegation, DelegationChange
from bot.core.errors import CountersignError
from bot.store.outbox import OutboxEntry
from channels.kit.delegations import (
    DELEGATE_FIELD,
    UNTIL_FIELD,
    delegated_roles,
    delegation_lines,
    ending_refused,
    new_delegation_problems,
    roles_said,
)
from channels.kit.texts import (
    DELEGATION_ENDED,
    DELEGATION_GONE,
    DELEGATION_NOT_YOURS,
    delegation_ended,
    delegation_started,
)
from channels.slack.approvers import ApproverDirectory
from channels.slack.home import HomeTabs
from channels.slack.nudge_marks import find_marked
from channels.slack.outbox import SlackOutbox, key_of, said_mark
from channels.slack.redaction import log
from channels.slack.render import escape, mention, slack_date
from channels.slack.render_delegations import (
    DELEGATION_BLOCKS,
    delegation_blocks,
    delegation_modal,
)
from channels.slack.webapi import api_error, is_transient
from channels.slack.workspaces import WorkspaceConfigs

StateValues = Mapping[str, Mapping[str, Mapping[str, object]]]

DEFAULT_LENGTH: Final = timedelta(days=7)
"""The end the modal offers first: a week from now."""
DELEGATION_NOTICE: Final = "delegation_notice"
"""The outbox kind of the delegate's direct message."""
LOOK_BACK: Final = timedelta(minutes=5)
"""A notice told again looks for its mark this long before its change (clocks differ)."""


class SlackDelegations:
    """The Home's delegations section (a ``HomeSection``), and what its buttons and modal do."""

    def __init__(
        self,
        *,
        app: App,
        client: AsyncWebClient,
        outbox: SlackOutbox,
        directory: ApproverDirectory,
        workspaces: WorkspaceConfigs,
    ) -> None:
        self._app = app
        self._client = client
        self._outbox = outbox
        self._directory = directory
        self._workspaces = workspaces
        self._homes: HomeTabs | None = None
        app.on_delegation(self.tell_delegate)
        outbox.deliver_kind(DELEGATION_NOTICE, self._deliver)

    def refresh_homes(self, homes: HomeTabs) -> None:
        """Republish the Homes a delegation's start or end changes (those of its delegator and
        delegate who opened theirs), whatever started or ended it: a click, the web inbox, the
        command line told by the sweep."""
        self._homes = homes

    async def blocks(self, *, tenant_id: str, user: str) -> list[dict[str, object]]:
        """The section of ``user``'s Home: their delegations, and the button to start one."""
        delegations = await self._app.list_delegations(tenant_id=tenant_id)
        return delegation_blocks(delegation_lines(delegations, user, self._app.clock.now()))

    async def end(self, delegation_id: str, *, tenant_id: str, user: str) -> str:
        """End ``user``'s own delegation now; what they are told."""
        found = await self._find(tenant_id, delegation_id)
        if ending_refused(found, user):
            log.warning("slack: refused ending a delegation that is not user %s's", user)
            return DELEGATION_GONE if found is None else DELEGATION_NOT_YOURS
        ended = await self._app.end_delegation(delegation_id, tenant_id=tenant_id, by=user)
        return DELEGATION_ENDED if ended else DELEGATION_GONE

    async def open_modal(self, trigger_id: str) -> None:
        """The modal that starts a delegation (``trigger_id`` lives 3 s)."""
        view = delegation_modal(initial_end=self._app.clock.now() + DEFAULT_LENGTH)
        try:
            await self._client.views_open(trigger_id=trigger_id, view=view)
        except SlackApiError as error:
            log.warning("slack: the delegation modal did not open: %s", api_error(error))

    async def start(
        self, values: StateValues, *, tenant_id: str, user: str
    ) -> dict[str, str] | Delegation:
        """Before the ack: start ``user``'s delegation as the modal says; the modal's errors
        by block (it stays open, nothing made) or the delegation."""
        delegate = _text(values, DELEGATE_FIELD, "selected_user")
        ends_at = _moment(values)
        now = self._app.clock.now()
        problems = new_delegation_problems(
            delegator=user, delegate=delegate, ends_at=ends_at, now=now
        )
        if problems or delegate is None or ends_at is None:
            return {DELEGATION_BLOCKS[field]: said for field, said in problems.items()}
        try:
            return await self._app.delegate(
                tenant_id=tenant_id,
                delegator=user,
                delegate=delegate,
                ends_in=ends_at - now,
                by=user,
            )
        except CountersignError as error:
            return {DELEGATION_BLOCKS[DELEGATE_FIELD]: escape(error.message, 150)}

    async def tell_delegate(self, change: DelegationChange) -> None:
        """Owe the delegate a direct message: a delegation to them started, or ended early;
        and refresh both people's Homes, which list it."""
        delegation = change.delegation
        if self._homes is not None:
            for person in (delegation.delegator, delegation.delegate):
                self._homes.refresh_user(delegation.tenant_id, person)
        delegator = mention(delegation.delegator)
        if change.kind == "started":
            roles = await self._roles_of(delegation)
            text = delegation_started(delegator, roles, slack_date(delegation.ends_at))
        else:
            text = delegation_ended(delegator)
        key = key_of("delegation", delegation.delegation_id, change.kind)
        since = delegation.created_at if change.kind == "started" else delegation.ended_at
        payload = {
            "delegate": delegation.delegate,
            "text": text,
            "mark": said_mark(key),
            "since": ((since or self._app.clock.now()) - LOOK_BACK).isoformat(),
        }
        await self._outbox.owe(
            key,
            DELEGATION_NOTICE,
            payload,
            tenant_id=delegation.tenant_id,
            look_first=change.again,  # told by a process that died: it may be there
        )

    async def _deliver(self, entry: OutboxEntry) -> None:
        """Post the notice to the delegate (raises what Slack failed with), unless an entry
        tried before finds it posted already."""
        p = entry.payload
        delegate, mark = str(p["delegate"]), dict(p["mark"])
        if entry.attempts > 1 and await self._posted(delegate, mark, p):
            return
        await self._client.chat_postMessage(channel=delegate, text=str(p["text"]), metadata=mark)

    async def _posted(self, delegate: str, mark: dict[str, Any], p: Mapping[str, Any]) -> bool:
        """Whether the notice marked ``mark`` is in the delegate's direct messages. Slack away
        raises (looked for again later); a lookup Slack refuses for good (a scope missing) is
        logged and the notice posted: twice rather than never."""
        try:
            opened = await self._client.conversations_open(users=delegate)
            channel = str((opened.get("channel") or {}).get("id") or delegate)
            since = datetime.fromisoformat(str(p["since"]))
            found = await find_marked(self._client, mark, channel=channel, since=since, strict=True)
        except SlackApiError as error:
            if is_transient(error):
                raise
            log.warning("slack: a delegation notice was not looked for: %s", api_error(error))
            return False
        return found is not None

    async def _roles_of(self, delegation: Delegation) -> str:
        implementations = await self._workspaces.answered_by_channel(delegation.tenant_id)

        async def among(approvers: Sequence[str]) -> bool:
            return await self._directory.may_answer(delegation.delegator, approvers)

        return roles_said(await delegated_roles(implementations, among))

    async def _find(self, tenant_id: str, delegation_id: str) -> Delegation | None:
        delegations = await self._app.list_delegations(tenant_id=tenant_id)
        return next((d for d in delegations if d.delegation_id == delegation_id), None)


def _text(values: StateValues, field: str, key: str) -> str | None:
    value = values.get(DELEGATION_BLOCKS[field], {}).get(field, {}).get(key)
    return value if isinstance(value, str) and value else None


def _moment(values: StateValues) -> datetime | None:
    """The end the modal's date and time picker holds (Slack sends a Unix time)."""
    value = values.get(DELEGATION_BLOCKS[UNTIL_FIELD], {}).get(UNTIL_FIELD, {})
    seconds = value.get("selected_date_time")
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        return None
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
