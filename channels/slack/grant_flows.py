"""Standing grants from Slack: "Approve and allow similar…" (a button opening the grant modal;
its submission approves the call and records the grant) and the App Home's list of grants with
a Revoke button each (the Home republished after).

What is offered, how a form is read and how a grant is given are the kit's
(``channels.kit.grants``); who may answer, grant and revoke is Slack's own rule (approvers and
user groups), the same as for any answer.
"""

from __future__ import annotations

import functools

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app import App
from bot.core.errors import UnknownGrantError
from channels.kit.grants import (
    SCOPE_FIELD,
    GrantProblems,
    approve_and_grant,
    grant_line,
    grant_offer,
    grant_request,
)
from channels.kit.texts import (
    GRANT_UNKNOWN,
    NO_LONGER_AVAILABLE,
    NOT_YOURS_TO_REVOKE,
    grant_refused,
    grant_revoked,
    granted,
)
from channels.slack.answering import Answerer, Answering, ModalAnswer
from channels.slack.authorization import Authorizer
from channels.slack.feedback import Feedback
from channels.slack.flows import TAMPERED
from channels.slack.gateway import SlackGateway
from channels.slack.grant_list import SlackGrants
from channels.slack.home import HomeTabs
from channels.slack.redaction import log
from channels.slack.render import escape
from channels.slack.render_edit import StateValues
from channels.slack.render_grants import grant_fields, grant_modal
from channels.slack.signing import MetadataSigner, ModalMetadata
from channels.slack.webapi import TRANSPORT_ERRORS, failure_of


class GrantFlows:
    def __init__(
        self,
        *,
        app: App,
        client: AsyncWebClient,
        gateway: SlackGateway,
        answering: Answering,
        authorizer: Authorizer,
        feedback: Feedback,
        grants: SlackGrants,
        home: HomeTabs,
        signer: MetadataSigner,
    ) -> None:
        self._app = app
        self._client = client
        self._gateway = gateway
        self._answering = answering
        self._authorizer = authorizer
        self._feedback = feedback
        self._grants = grants
        self._home = home
        self._signer = signer

    # ---------------------------------------------------------------- approve and allow

    async def open_modal(self, pause_id: str, who: Answerer, trigger_id: str) -> None:
        """Open the grant modal of a waiting question ``who`` may answer (else they are told
        why, as for any answer's modal)."""
        pause = await self._answering.waiting_pause(pause_id, who)
        if pause is None:
            return
        view = self._gateway.approval_view(pause)
        offer = grant_offer(pause, view.grant_scopes, tool_input=pause.tool_input)
        if offer is None:
            return
        sealed = self._signer.seal(
            ModalMetadata(
                kind="grant",
                pause_id=pause_id,
                user=who.user,
                channel=who.audience.channel,
                thread_ts=who.audience.thread_ts,
                response_url=who.audience.response_url,
            )
        )
        modal = grant_modal(offer, title=view.title, private_metadata=sealed)
        try:
            await self._client.views_open(trigger_id=trigger_id, view=modal)
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            log.warning("slack: the grant modal did not open: %s", failure_of(error))

    def open_metadata(self, sealed: str, *, user: str) -> ModalMetadata | None:
        metadata = self._signer.open(sealed, kind="grant", user=user)
        if metadata is None:
            log.warning("slack: a grant modal from user %s came back altered: refused", user)
        return metadata

    async def record(
        self, metadata: ModalMetadata | None, who: Answerer, values: StateValues
    ) -> ModalAnswer:
        """Before the ack: read the modal (a bad value keeps it open with that field's error),
        approve the call and record the grant; after it, tell the person and move the run on."""
        if metadata is None:
            return ModalAnswer(errors={SCOPE_FIELD: TAMPERED})
        pause = await self._app.find_pause(metadata.pause_id, tenant_id=who.tenant_id)
        if pause is None:
            return ModalAnswer(after=functools.partial(self._tell, who, NO_LONGER_AVAILABLE))
        scopes = self._gateway.grant_scopes(pause.role, pause.route)
        offer = grant_offer(pause, scopes, tool_input=pause.tool_input)
        if offer is None:
            return ModalAnswer(errors={SCOPE_FIELD: TAMPERED})
        request = grant_request(offer, pause, grant_fields(values))
        if isinstance(request, GrantProblems):
            return ModalAnswer(errors=dict(request.errors))
        granting = await approve_and_grant(
            self._app,
            pause,
            request,
            by=who.user,
            may_answer=self._authorizer.rule_for(user=who.user, team=who.team),
        )
        after = self._answering.after(granting.outcome, who)
        if granting.grant is not None:
            said = granted(grant_line(granting.grant))
        elif granting.refused is not None:
            said = grant_refused(granting.refused)
        else:
            return ModalAnswer(after=after)  # not answered: the answer's own words say why

        async def then() -> None:
            await self._tell(who, said)
            if granting.grant is not None:
                self._home.refresh_user(who.tenant_id, who.user)  # its list of grants
            await after()

        return ModalAnswer(after=then)

    async def _tell(self, who: Answerer, text: str) -> None:
        await self._feedback.tell(who.audience, escape(text, 1500))

    # ---------------------------------------------------------------- the Home's list

    async def revoke(self, grant_id: str, who: Answerer) -> str:
        """Revoke a grant from the Home; what ``who`` is told (an ephemeral word is not
        possible there: the Home is republished with the list as it now is)."""
        grants = await self._app.list_grants(tenant_id=who.tenant_id, include_inactive=True)
        grant = next((g for g in grants if g.grant_id == grant_id), None)
        if grant is None:
            return GRANT_UNKNOWN
        if not await self._grants.may_revoke(grant, who.user):
            log.warning("slack: user %s may not revoke a grant: refused", who.user)
            return NOT_YOURS_TO_REVOKE
        try:
            revoked = await self._app.revoke_grant(grant_id, tenant_id=who.tenant_id, by=who.user)
        except UnknownGrantError:
            return GRANT_UNKNOWN
        return grant_revoked(grant_line(revoked))
