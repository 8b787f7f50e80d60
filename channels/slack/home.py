"""The App Home: the pending list of the user who opens it, republished when it changes.

Publishing is per user and costs a Web API call, so only users who opened their Home since the
bot started are refreshed (at most ``max_users``, the least recent forgotten first); opening
the Home always publishes a fresh list. What a person's last batch did is kept in the App's
database (``App.batch_lines``), so a restarted bot, or another instance, shows it too.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Final, Protocol

from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import Block
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.clock import Clock, SystemClock
from bot.core.enums import PauseAnswerer
from bot.store.batch_lines import BatchLines
from bot.store.memory_batch_lines import MemoryBatchLines
from channels.slack.approvers import ApproverDirectory
from channels.slack.batch_seal import BatchSealer
from channels.slack.catalog import Catalog
from channels.slack.grant_list import SlackGrants
from channels.slack.pending import PendingLists
from channels.slack.redaction import log
from channels.slack.render import MAX_VIEW_BLOCKS
from channels.slack.render_grants import home_grant_blocks
from channels.slack.render_pending import home_view
from channels.slack.tasks import BackgroundTasks
from channels.slack.webapi import api_error
from channels.slack.workspaces import WorkspaceConfigs

DEFAULT_MAX_USERS: Final = 1000
HOME: Final = "home"
"""The key of a person's Home republished (``BackgroundTasks.spawn_once``)."""
HOME_SPACING = timedelta(seconds=1)
"""A person's Home is republished at most about once a second while their questions keep
closing: each publish reads and renders their whole list, and a burst of 50 clicks made 29
publishes back to back, beside the acks and runs on the same loop (issue 32's ``slack_ack
--home``); Slack limits ``views.publish`` too. The first change is shown at once."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Answerable:
    """Who may answer a pause whose list changed: its kind of answerer, role and owner."""

    answered_by: PauseAnswerer
    role: str
    owner_id: str
    approvers: tuple[str, ...] = ()
    """Where a policy routed it: its route's approvers, instead of the role's."""


class HomeSection(Protocol):
    """More of the Home below the list (e.g. ``channels.slack.home_settings``): its blocks,
    as dicts checked by slack_sdk, for ``user`` in ``tenant_id``'s workspace."""

    async def blocks(self, *, tenant_id: str, user: str) -> list[dict[str, object]]: ...


class HomeTabs:
    def __init__(
        self,
        *,
        client: AsyncWebClient,
        lists: PendingLists,
        catalog: Catalog,
        directory: ApproverDirectory,
        tasks: BackgroundTasks,
        max_users: int = DEFAULT_MAX_USERS,
        workspaces: WorkspaceConfigs | None = None,
        sections: Sequence[HomeSection] = (),
        grants: SlackGrants | None = None,
        sealer: BatchSealer | None = None,
        lines: BatchLines | None = None,
        clock: Clock | None = None,
        spacing: timedelta = HOME_SPACING,
    ) -> None:
        self._client = client
        self._spacing = spacing
        self._lists = lists
        self._catalog = catalog
        self._directory = directory
        self._tasks = tasks
        self._max_users = max_users
        self._workspaces = workspaces or WorkspaceConfigs(catalog)
        self._sections = tuple(sections)
        self._grants = grants
        self._sealer = sealer
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._lines: BatchLines = lines or MemoryBatchLines()  # a user's last batch, until the next
        self._clock: Clock = clock or SystemClock()

    async def publish(
        self,
        *,
        tenant_id: str,
        user: str,
        page: int = 1,
        notice: str | None = None,
    ) -> None:
        """Publish ``user``'s list (``views.publish``) and remember them for refreshes; below
        it the standing grants they may revoke, after ``notice`` (what their last revocation
        did); above it what their last batch did (``keep_said``). With a sealer, the list's
        questions can be picked for a batch (``render_batch_items``)."""
        self._remember(tenant_id, user)
        said = await self._last_said(tenant_id, user)
        items = await self._lists.for_user(tenant_id=tenant_id, user=user)
        extra: list[Block] = []
        if self._grants is not None:
            grants = await self._grants.for_user(tenant_id=tenant_id, user=user)
            extra = home_grant_blocks(grants, notice=notice)
        seal = (
            None
            if self._sealer is None
            else functools.partial(self._sealer.seal, user=user, tenant_id=tenant_id)
        )
        view = home_view(items, page=page, extra=extra, seal=seal, said=said)
        for section in self._sections:
            blocks, more = (
                _listed(view["blocks"]),
                await section.blocks(tenant_id=tenant_id, user=user),
            )
            if len(blocks) + len(more) <= MAX_VIEW_BLOCKS:  # else Slack refuses the whole Home
                view["blocks"] = [*blocks, *more]
            else:
                log.warning(
                    "slack: a section of the Home was left out: over %d blocks", MAX_VIEW_BLOCKS
                )
        try:
            await self._client.views_publish(user_id=user, view=view)
        except SlackApiError as error:
            log.warning(
                "slack: the Home of user %s was not published: %s",
                user,
                api_error(error),
            )

    async def keep_said(self, *, tenant_id: str, user: str, said: str) -> None:
        """What ``user``'s last batch did (one line per question), shown above their list by
        every publish from now on (their own and the refreshes its answers cause, after a
        restart too) until their next batch. A database away loses these lines only (logged):
        the batch's answers are recorded on their own."""
        self._remember(tenant_id, user)
        try:
            await self._lines.keep(tenant_id, user, said, at=self._clock.now())
        except Exception as error:  # the lines are a courtesy: never fail the batch for them
            log.warning("slack: a batch's lines were not kept: %s", type(error).__name__)

    async def _last_said(self, tenant_id: str, user: str) -> str | None:
        try:
            return await self._lines.last(tenant_id, user)
        except Exception as error:  # the Home is published without them
            log.warning("slack: a batch's lines could not be read: %s", type(error).__name__)
            return None

    def refresh(self, tenant_id: str, pauses: Iterable[Answerable]) -> None:
        """Republish, in the background, the Homes of those who may answer ``pauses``: work
        that can wait (after the runs that clicks continue), each Home once however many of
        its questions closed meanwhile (``BackgroundTasks.spawn_once``)."""
        if any(tenant == tenant_id for tenant, _ in self._seen):
            self._tasks.spawn(
                self._refresh(tenant_id, list(pauses)), name="slack home refresh", later=True
            )

    async def _refresh(self, tenant_id: str, pauses: list[Answerable]) -> None:
        users: set[str] = set()
        for pause in pauses:
            if pause.answered_by is PauseAnswerer.THREAD_OWNER:
                users.add(pause.owner_id)
                continue
            if pause.approvers:
                users |= await self._directory.expand(pause.approvers)
                continue
            channel = await self._workspaces.of_role(tenant_id, pause.role)
            if channel is not None:
                users |= await self._directory.expand(channel.config.approvers)
        for user in sorted(users):
            self.refresh_user(tenant_id, user)

    def refresh_user(self, tenant_id: str, user: str) -> None:
        """Republish, in the background, ``user``'s Home if they opened it (their grants
        changed, a question they may answer closed): once for every change asked meanwhile."""
        if (tenant_id, user) in self._seen:
            self._tasks.spawn_once(
                (HOME, tenant_id, user),
                functools.partial(self.publish, tenant_id=tenant_id, user=user),
                name="slack home",
                spacing=self._spacing,
            )

    def _remember(self, tenant_id: str, user: str) -> None:
        key = (tenant_id, user)
        self._seen[key] = None
        self._seen.move_to_end(key)
        while len(self._seen) > self._max_users:
            self._seen.popitem(last=False)


def _listed(blocks: object) -> list[object]:
    return list(blocks) if isinstance(blocks, list) else []
