"""A Slack Web API stub on loopback: records every call, answers like Slack, scripts 429s.

``POST /api/<method>`` answers the Web API methods the bot uses; ``POST /hooks/<n>`` is a
``response_url``; ``GET /link`` is a Socket Mode WebSocket (``apps.connections.open`` points
at it). Every call is recorded with its payload (JSON or form) and headers.

An outage (:meth:`SlackStub.fail_all`) fails every Web API call of the methods it names (all by
default) until :meth:`SlackStub.restore`: ``500``, ``429`` with ``Retry-After``, ``refused``
(nothing listens on the port) or ``hang`` (the call is carried out, as Slack may, and its answer
withheld until the outage ends). A ``response_url`` fails only when ``"response_url"`` is named.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import WSMsgType, web
from aiohttp.test_utils import TestServer

from bot.core.clock import Clock

TEAM = "T0TEAM"
BOT_USER = "U0BOT"
BOT_ID = "B0BOT"

SESSION_STATUSES = frozenset({"processing", "active", "suspended", "closed"})
"""What Slack's ``agents.sessions.setStatus`` takes (docs.slack.dev)."""


@dataclass
class Call:
    method: str
    payload: dict[str, Any]
    headers: Mapping[str, str]
    path: str = ""
    """Where it was sent (a ``response_url`` is told apart by its path)."""

    def blocks(self) -> list[dict[str, Any]]:
        blocks = self.payload.get("blocks")
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        return list(blocks or [])

    def view(self) -> dict[str, Any]:
        view = self.payload.get("view")
        return json.loads(view) if isinstance(view, str) else dict(view or {})


@dataclass
class Scripted:
    status: int
    retry_after: int = 0
    times: int = 1


OUTAGE_KINDS = ("500", "429", "refused", "hang", "reset")


@dataclass
class Outage:
    kind: str
    methods: frozenset[str] = frozenset()
    """The methods it fails; none named: every Web API method."""
    retry_after: int = 1
    channels: frozenset[str] = frozenset()
    """The conversations it fails (``payload["channel"]``); none named: every one."""

    def fails(self, method: str, channel: str | None = None) -> bool:
        if self.methods and method not in self.methods:
            return False
        return not self.channels or channel in self.channels


@dataclass(frozen=True)
class Workspace:
    """A workspace the app is installed in by OAuth (``oauth.v2.access``)."""

    team_id: str
    enterprise_id: str | None = None
    installer: str = "U0INSTALLER"
    expires_in: int = 43200
    """Seconds a rotating token lives (under Bolt's 2 hours: refreshed on every request)."""
    org_wide: bool = False


@dataclass
class SlackStub:
    """The recorded calls and the answers; start it with :meth:`start`."""

    calls: list[Call] = field(default_factory=list)
    groups: dict[str, list[str]] = field(default_factory=dict)
    failures: dict[str, Scripted] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    channel_errors: dict[str, str] = field(default_factory=dict)
    """An error answered to any Web API call about this channel (``payload["channel"]``)."""
    socket_envelopes: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    socket_acks: list[dict[str, Any]] = field(default_factory=list)
    clock: Clock | None = None
    """When set, each post is stamped with its time (``posted_at``: the synthetic ``ts`` is not
    one) and ``conversations.history``'s ``oldest`` is judged by it, as Slack judges its ts."""
    posted: list[dict[str, Any]] = field(default_factory=list)
    """Every message posted (``chat.postMessage``), as ``conversations.history`` and
    ``conversations.replies`` answer them: channel, ts, thread_ts, text, metadata."""
    post_blocks: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    """The blocks of each message posted, by the ``(channel, ts)`` Slack answered: which
    message a post made, even where an outage failed posts (``posted`` and the calls, paired
    in order, shift after a post that failed)."""
    outage: Outage | None = None
    failed: list[str] = field(default_factory=list)
    """Each call an outage failed, by method (``refused`` ones never reach the stub)."""
    workspaces: dict[str, Workspace] = field(default_factory=dict)
    """Installs by OAuth: a code → the workspace ``oauth.v2.access`` installs it in."""
    tokens: dict[str, Workspace] = field(default_factory=dict)
    """Every bot token the stub issued, with its workspace (``auth.test`` answers by it)."""
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    """What ``users.info`` says of a user beside its id (``is_admin``, ``is_owner``)."""
    _server: TestServer | None = None
    _port: int | None = None
    _restored: asyncio.Event = field(default_factory=asyncio.Event)
    _ts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _hooks: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _issued_tokens: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)
        app.router.add_post("/hooks/{hook}", self._hook)
        app.router.add_get("/link", self._socket)
        self._server = TestServer(app, host="127.0.0.1", port=self._port)
        await self._server.start_server()
        self._port = self._server.port

    async def fail_all(
        self,
        kind: str,
        *methods: str,
        retry_after: int = 1,
        channels: tuple[str, ...] = (),
    ) -> None:
        """Fail the Web API calls (of ``methods``; none: all of them; about ``channels`` only,
        when named) until ``restore``. ``reset``: the connection is dropped unanswered."""
        assert kind in OUTAGE_KINDS, kind
        assert not channels or kind in ("reset", "500", "429"), "a port refuses every channel"
        self._restored.clear()
        self.outage = Outage(
            kind=kind,
            methods=frozenset(methods),
            retry_after=retry_after,
            channels=frozenset(channels),
        )
        if kind == "refused" and self._server is not None:
            await self._server.close()  # the port stops listening: connections are refused
            self._server = None
        elif kind != "refused" and self._server is None:
            await self.start()  # listening again, to fail otherwise

    async def restore(self) -> None:
        """End the outage: answer again (a refused port listens again, hung calls answer)."""
        self.outage = None
        self._restored.set()
        if self._server is None:
            await self.start()

    async def close(self) -> None:
        if self._server is not None:
            await self._server.close()

    @property
    def root(self) -> str:
        if self._server is None:  # refusing connections: the address it listens at again
            assert self._port is not None
            return f"http://127.0.0.1:{self._port}"
        return str(self._server.make_url("")).rstrip("/")

    @property
    def api_url(self) -> str:
        return f"{self.root}/api/"

    def response_url(self) -> str:
        return f"{self.root}/hooks/{next(self._hooks)}"

    # ---------------------------------------------------------------- scripting

    def fail_next(
        self, method: str, *, status: int = 429, retry_after: int = 0, times: int = 1
    ) -> None:
        self.failures[method] = Scripted(status=status, retry_after=retry_after, times=times)

    # ---------------------------------------------------------------- reading

    def of(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def methods(self) -> list[str]:
        return [c.method for c in self.calls if c.method != "auth.test"]

    async def wait_for(self, method: str, count: int = 1, timeout: float = 10.0) -> list[Call]:
        async def enough() -> None:
            async with self._changed:
                await self._changed.wait_for(lambda: len(self.of(method)) >= count)

        await asyncio.wait_for(enough(), timeout)
        return self.of(method)

    def texts(self) -> list[str]:
        """Every text the bot sent: fallback texts, blocks and views, as JSON."""
        return [json.dumps(c.payload, ensure_ascii=False) for c in self.calls]

    # ---------------------------------------------------------------- handlers

    async def _record(self, method: str, request: web.Request) -> dict[str, Any]:
        raw = await request.text()
        if request.method == "GET":
            payload: dict[str, Any] = dict(request.query)
        elif request.content_type == "application/json":
            payload = json.loads(raw) if raw else {}
        else:
            payload = dict(parse_qsl(raw, keep_blank_values=True))
        async with self._changed:
            self.calls.append(Call(method, payload, dict(request.headers), request.path))
            self._changed.notify_all()
        return payload

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        outage = self.outage
        channel = None
        if outage is not None and outage.channels:
            channel = str((await _payload_of(request)).get("channel"))
        if outage is not None and outage.fails(method, channel):
            self.failed.append(method)
            if outage.kind == "reset":
                assert request.transport is not None
                request.transport.close()
                return web.Response()
            if outage.kind == "hang":  # carried out, its answer withheld (the client gives up)
                payload = await self._record(method, request)
                answer = self._answer(method, payload)
                await self._restored.wait()
                return web.json_response(answer)
            return web.json_response(
                {"ok": False, "error": "ratelimited" if outage.kind == "429" else "fatal_error"},
                status=int(outage.kind),
                headers={"Retry-After": str(outage.retry_after)},
            )
        scripted = self.failures.get(method)
        if scripted is not None and scripted.times > 0:
            scripted.times -= 1
            await self._record(f"{method}#{scripted.status}", request)
            return web.json_response(
                {"ok": False, "error": "ratelimited"},
                status=scripted.status,
                headers={"Retry-After": str(scripted.retry_after)},
            )
        payload = await self._record(method, request)
        if method in self.errors:
            return web.json_response({"ok": False, "error": self.errors[method]})
        if str(payload.get("channel")) in self.channel_errors:
            error = self.channel_errors[str(payload.get("channel"))]
            return web.json_response({"ok": False, "error": error})
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or None
        return web.json_response(self._answer(method, payload, token))

    def _oauth(self, payload: dict[str, Any]) -> dict[str, Any]:
        """``oauth.v2.access``: a code exchanged, or (token rotation) a refresh token."""
        if payload.get("grant_type") == "refresh_token":
            old = str(payload.get("refresh_token", ""))
            workspace = self.tokens.get(old.removeprefix("xoxe-1-refresh-"))
            if workspace is None:
                return {"ok": False, "error": "invalid_refresh_token"}
            return self._issued(workspace) | {"token_type": "bot"}
        workspace = self.workspaces.get(str(payload.get("code", "")))
        if workspace is None:
            return {"ok": False, "error": "invalid_code"}
        enterprise = (
            None
            if workspace.enterprise_id is None
            else {"id": workspace.enterprise_id, "name": "Org"}
        )
        return self._issued(workspace) | {
            "app_id": "A0APP",
            "token_type": "bot",
            "scope": "chat:write,commands",
            "bot_user_id": BOT_USER,
            "team": None if workspace.org_wide else {"id": workspace.team_id, "name": "Team"},
            "enterprise": enterprise,
            "is_enterprise_install": workspace.org_wide,
            "authed_user": {"id": workspace.installer},
        }

    def _issued(self, workspace: Workspace) -> dict[str, Any]:
        token = f"xoxe.xoxb-{workspace.team_id}-{next(self._issued_tokens)}"
        self.tokens[token] = workspace
        return {
            "ok": True,
            "access_token": token,
            "refresh_token": f"xoxe-1-refresh-{token}",
            "expires_in": workspace.expires_in,
        }

    def _auth_test(self, token: str | None) -> dict[str, Any]:
        workspace = self.tokens.get(token or "")
        if workspace is None:
            return {}
        return {"team_id": workspace.team_id, "enterprise_id": workspace.enterprise_id}

    def _answer(
        self, method: str, payload: dict[str, Any], token: str | None = None
    ) -> dict[str, Any]:
        match method:
            case "oauth.v2.access":
                return self._oauth(payload)
            case "auth.test":
                return {
                    "ok": True,
                    "user_id": BOT_USER,
                    "bot_id": BOT_ID,
                    "team_id": TEAM,
                    "user": "countersign",
                    "team": "Acme",
                    "url": "https://acme.slack.com/",
                } | self._auth_test(token)
            case "chat.postMessage":
                ts = f"1700000000.{next(self._ts):06d}"
                channel = payload.get("channel", "")
                if str(channel).startswith(("U", "W")):
                    channel = "D0DM"
                posted_at = None if self.clock is None else self.clock.now().timestamp()
                self.posted.append(_posted(str(channel), ts, payload, posted_at))
                self.post_blocks[(str(channel), ts)] = Call(method, payload, {}).blocks()
                return {"ok": True, "channel": channel, "ts": ts, "message": {"ts": ts}}
            case "conversations.open":  # a direct message: where chat.postMessage puts it
                return {"ok": True, "channel": {"id": "D0DM"}}
            case "conversations.replies":
                thread = str(payload.get("ts"))
                return self._messages(
                    payload,
                    lambda m: m["ts"] == thread or m.get("thread_ts") == thread,
                )
            case "conversations.history":
                oldest = float(payload.get("oldest") or 0)
                return self._messages(
                    payload,
                    lambda m: "thread_ts" not in m and (m["posted_at"] or float(m["ts"])) > oldest,
                )
            case "agents.sessions.setStatus" if payload.get("status") not in SESSION_STATUSES:
                return {"ok": False, "error": "invalid_arguments"}  # as Slack answers
            case "chat.startStream":
                ts = f"1700000000.{next(self._ts):06d}"
                return {"ok": True, "channel": payload.get("channel"), "ts": ts}
            case "chat.update":
                return {"ok": True, "channel": payload.get("channel"), "ts": payload.get("ts")}
            case "chat.postEphemeral":
                return {"ok": True, "message_ts": f"1700000001.{next(self._ts):06d}"}
            case "views.open" | "views.publish":
                return {"ok": True, "view": {"id": "V0VIEW", **self._view(payload)}}
            case "users.info":
                user = str(payload.get("user"))
                return {"ok": True, "user": {"id": user, **self.users.get(user, {})}}
            case "usergroups.users.list":
                return {"ok": True, "users": self.groups.get(str(payload.get("usergroup")), [])}
            case "apps.connections.open":
                return {"ok": True, "url": f"{self.root.replace('http', 'ws')}/link"}
            case _:
                return {"ok": True}

    def _messages(
        self, payload: dict[str, Any], chosen: Callable[[dict[str, Any]], bool]
    ) -> dict[str, Any]:
        """The posted messages of ``payload["channel"]`` that are ``chosen`` (one page; their
        metadata only with ``include_all_metadata``, as Slack answers)."""
        with_metadata = str(payload.get("include_all_metadata", "")).lower() in ("1", "true")
        messages = [
            m if with_metadata else {k: v for k, v in m.items() if k != "metadata"}
            for m in self.posted
            if m["channel"] == payload.get("channel") and chosen(m)
        ]
        return {"ok": True, "messages": messages, "has_more": False}

    @staticmethod
    def _view(payload: dict[str, Any]) -> dict[str, Any]:
        view = payload.get("view")
        return json.loads(view) if isinstance(view, str) else dict(view or {})

    async def _hook(self, request: web.Request) -> web.Response:
        outage = self.outage
        if outage is not None and "response_url" in outage.methods:  # only when named
            self.failed.append("response_url")
            if outage.kind == "hang":
                await self._restored.wait()
            else:
                return web.Response(text="failed", status=500 if outage.kind == "500" else 404)
        await self._record("response_url", request)
        return web.Response(text="ok")

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        """Socket Mode: say hello, then send queued envelopes and record their acks."""
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_json({"type": "hello", "num_connections": 1})

        async def send() -> None:
            while True:
                envelope = await self.socket_envelopes.get()
                await ws.send_json(envelope)

        sender = asyncio.get_running_loop().create_task(send())
        try:
            async for message in ws:
                if message.type is WSMsgType.TEXT:
                    async with self._changed:
                        self.socket_acks.append(json.loads(message.data))
                        self._changed.notify_all()
        finally:
            sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)
        return ws

    async def wait_for_socket_ack(self, timeout: float = 10.0) -> dict[str, Any]:
        async def some() -> None:
            async with self._changed:
                await self._changed.wait_for(lambda: bool(self.socket_acks))

        await asyncio.wait_for(some(), timeout)
        return self.socket_acks[0]


async def _payload_of(request: web.Request) -> dict[str, Any]:
    raw = await request.text()
    if request.method == "GET":
        return dict(request.query)
    if request.content_type == "application/json":
        return dict(json.loads(raw)) if raw else {}
    return dict(parse_qsl(raw, keep_blank_values=True))


def _posted(
    channel: str, ts: str, payload: dict[str, Any], posted_at: float | None
) -> dict[str, Any]:
    """A posted message as Slack lists it (with when it was posted, for the stub's tests)."""
    message: dict[str, Any] = {"type": "message", "channel": channel, "ts": ts}
    message["posted_at"] = posted_at
    message["text"] = payload.get("text", "")
    if payload.get("thread_ts"):
        message["thread_ts"] = str(payload["thread_ts"])
    metadata = payload.get("metadata")
    if isinstance(metadata, str):
        metadata = json.loads(metadata)
    if metadata:
        message["metadata"] = metadata
    return message
