"""``python -m bot serve`` with the Slack settings: a real process, its settings, the desk."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot import App, Settings
from bot.cli.main import main
from bot.components.specs import ApplicationSpec, FlowStep, WorkflowSpec, spec_of
from bot.desk.settings import DeskSettings
from bot.desk.slack import build_desk
from bot.testing import FakeClock, call_tool, mock_llm
from channels.slack import SlackBot, SlackSettings
from channels.slack.render import APPROVE_ACTION
from tests.cli.processes import StubThread, person_env
from tests.ports import free_port
from tests.slack.checks import all_text, buttons
from tests.slack.conftest import SECRET, interactive_body, signed_headers
from tests.slack.stub import BOT_USER, TEAM, SlackStub

ROOT = Path(__file__).resolve().parents[2]
BASE_ENV = {
    "SLACK_BOT_TOKEN": "xoxb-test",
    "SLACK_SIGNING_SECRET": SECRET,
}


def clean_environ(**extra: str) -> dict[str, str]:
    kept = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "COUNTERSIGN_", "PORT"))
    }
    return {**kept, **BASE_ENV, **extra}


# --------------------------------------------------------------------------------------------
# Settings problems: one line, exit code 2.


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        ({}, "COUNTERSIGN_APPROVAL_CHANNEL is missing: the id of the Slack channel"),
        (
            {"COUNTERSIGN_APPROVAL_CHANNEL": "#general"},
            "COUNTERSIGN_APPROVAL_CHANNEL is malformed",
        ),
        (
            {"COUNTERSIGN_APPROVAL_CHANNEL": "C0APPROVALS", "COUNTERSIGN_APPROVERS": "bob"},
            "COUNTERSIGN_APPROVERS is malformed",
        ),
        (
            {"COUNTERSIGN_APPROVAL_CHANNEL": "C0APPROVALS"},
            "COUNTERSIGN_MODEL_NAMES: no model provider serves the desk's model",
        ),
        ({"COUNTERSIGN_APP": "nowhere"}, "COUNTERSIGN_APP is malformed: module:ApplicationClass"),
        (
            {"COUNTERSIGN_APP": "no.such.module:App"},
            "COUNTERSIGN_APP: the module no.such.module cannot be imported",
        ),
        ({"COUNTERSIGN_APP": "tests.slack.office:Ledger"}, "COUNTERSIGN_APP is malformed"),
        ({"SLACK_API_URL": "ftp://x"}, "SLACK_API_URL is malformed"),
        ({"COUNTERSIGN_METRICS_PORT": "http"}, "COUNTERSIGN_METRICS_PORT is malformed"),
        ({"COUNTERSIGN_METRICS_PORT": "70000"}, "COUNTERSIGN_METRICS_PORT is malformed"),
        ({"COUNTERSIGN_LOG_FORMAT": "xml"}, "COUNTERSIGN_LOG_FORMAT is malformed"),
        (
            {"COUNTERSIGN_APPROVAL_CHANNEL": "C0APPROVALS", "COUNTERSIGN_DESK_AGENT": "crewai"},
            "COUNTERSIGN_DESK_AGENT is malformed: native or langgraph, not 'crewai'",
        ),
        ({"COUNTERSIGN_READYZ_SLACK": "maybe"}, "COUNTERSIGN_READYZ_SLACK is malformed"),
        (
            {"COUNTERSIGN_METRICS_TOKEN": "too-short"},
            "COUNTERSIGN_METRICS_TOKEN is malformed: at least 16 characters",
        ),
    ],
)
def test_a_bad_setting_is_one_line_and_exit_2(
    extra: dict[str, str],
    line: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith(("SLACK_", "COUNTERSIGN_")):
            monkeypatch.delenv(name)
    for name, value in {**BASE_ENV, **extra}.items():
        monkeypatch.setenv(name, value)

    assert main(["serve"]) == 2

    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(line)


def test_a_taken_port_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with socket.socket() as taken, StubThread() as slack_api:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for name, value in clean_environ(
            PORT=str(port),
            COUNTERSIGN_APP="tests.slack.served:ServedApplication",
            DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'taken.db'}",
            SLACK_API_URL=slack_api.api_url,
        ).items():
            monkeypatch.setenv(name, value)

        assert main(["serve"]) == 2

    *logged, err = capsys.readouterr().err.strip().splitlines()  # the log, then the problem
    assert err.startswith(f"PORT {port} cannot be served: ")
    assert "in use" in err
    assert all(
        " WARNING countersign.security: generated a new encryption key" in line for line in logged
    )


# --------------------------------------------------------------------------------------------
# A real process.


async def signed_post(
    session: aiohttp.ClientSession, url: str, body: str, content_type: str
) -> int:
    headers = {"Content-Type": content_type, **signed_headers(body)}
    async with session.post(url, data=body.encode(), headers=headers) as response:
        return response.status


async def test_serve_answers_slack_over_http_warns_of_refused_signatures_and_stops_on_sigterm(
    stub: SlackStub, tmp_path: Path
) -> None:
    """One process (a start costs seconds): a request signed with another secret is refused,
    a warning with the team once a minute; a mention is asked and answered; SIGTERM stops it."""
    port = free_port()
    env = clean_environ(
        SLACK_API_URL=stub.api_url,
        PORT=str(port),
        COUNTERSIGN_APP="tests.slack.served:ServedApplication",
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'served.db'}",
        PYTHONPATH=str(ROOT),
    )
    process = await start_serve(env, tmp_path)
    base = f"http://127.0.0.1:{port}"
    pause_like = "0123456789abcdef0123456789abcdef"
    try:
        async with aiohttp.ClientSession() as session:
            await wait_healthy(session, f"{base}/healthz", process)
            body = click_payload(pause_like)
            wrong = {**signed_headers(body, secret="not-the-secret")}
            for _ in range(3):
                async with session.post(
                    f"{base}/slack/events",
                    data=body.encode(),
                    headers={"Content-Type": "application/x-www-form-urlencoded", **wrong},
                ) as response:
                    assert response.status == 401
            mention = {
                "type": "event_callback",
                "team_id": TEAM,
                "event_id": "Ev0SERVED",
                "event": {
                    "type": "app_mention",
                    "user": "U0OWNER",
                    "text": f"<@{BOT_USER}> do the office things",
                    "channel": "C0GENERAL",
                    "ts": "1700000900.000001",
                },
            }
            events = f"{base}/slack/events"
            assert (
                await signed_post(session, events, json.dumps(mention), "application/json") == 200
            )
            questions = await stub.wait_for("chat.postMessage", 2)
            for question in questions:
                assert question.payload["thread_ts"] == "1700000900.000001"
                click = click_payload(str(buttons(question.blocks())[0]["value"]))
                form = "application/x-www-form-urlencoded"
                assert await signed_post(session, events, click, form) == 200
            posts = await stub.wait_for("chat.postMessage", 3)
            assert posts[-1].payload["text"].startswith("Here is what happened: refunded 120.00")
            assert len(await stub.wait_for("chat.update", 2)) == 2
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode == 0, err.decode()
        assert f"serves Slack on http://0.0.0.0:{port}/slack/events" in out.decode()
        assert "Stopping" in out.decode()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    logged = [line.split(" WARNING countersign.slack: ") for line in err.decode().splitlines()]
    warnings = [said for *_, said in logged if said.startswith("refused a Slack request")]
    assert warnings == [
        f"refused a Slack request with a signature that does not match (team {TEAM}): check "
        "SLACK_SIGNING_SECRET against the Slack app's Basic Information page"
    ]
    assert pause_like not in err.decode()


def click_payload(pause_id: str) -> str:
    return interactive_body(
        {
            "type": "block_actions",
            "team": {"id": TEAM},
            "user": {"id": "U0OWNER", "team_id": TEAM},
            "container": {"type": "message", "channel_id": "C0GENERAL", "is_ephemeral": False},
            "channel": {"id": "C0GENERAL"},
            "trigger_id": "t",
            "actions": [{"type": "button", "action_id": APPROVE_ACTION, "value": pause_id}],
        }
    )


async def wait_healthy(
    session: aiohttp.ClientSession, url: str, process: asyncio.subprocess.Process
) -> None:
    for _ in range(300):
        if process.returncode is not None:
            _, err = await process.communicate()
            raise AssertionError(f"serve exited {process.returncode}: {err.decode()}")
        try:
            async with session.get(url) as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.1)
    raise AssertionError("serve never became healthy")


async def test_socket_mode_serves_the_probes_on_the_metrics_port(
    stub: SlackStub, tmp_path: Path
) -> None:
    port = free_port()
    env = clean_environ(
        SLACK_API_URL=stub.api_url,
        SLACK_APP_TOKEN="xapp-test",
        COUNTERSIGN_METRICS_PORT=str(port),
        COUNTERSIGN_APP="tests.slack.served:ServedApplication",
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'socket.db'}",
        PYTHONPATH=str(ROOT),
    )
    process = await start_serve(env, tmp_path)
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as session:
            await wait_healthy(session, f"{base}/healthz", process)
            async with session.get(f"{base}/readyz") as ready:
                assert (ready.status, await ready.json()) == (200, {"status": "ready"})
            async with session.get(f"{base}/metrics") as metrics:
                assert metrics.status == 200
                text = await metrics.text()
        assert "# TYPE countersign_pending_pauses gauge" in text
        assert "# TYPE countersign_answers_total counter" in text
    finally:
        code, out, err = await stop(process)
    assert code == 0, err
    assert "Socket Mode" in out and f"Metrics on http://0.0.0.0:{port}/metrics" in out


async def start_serve(env: dict[str, str], cwd: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "serve",
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def stop(process: asyncio.subprocess.Process) -> tuple[int, str, str]:
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
    out, err = await asyncio.wait_for(process.communicate(), 30)
    return process.returncode or 0, out.decode(), err.decode()


def desk_mention(event_id: str, *, ts: str) -> dict[str, Any]:
    """A signed-to-be mention of the bot asking the desk for a refund, in a channel."""
    return {
        "type": "event_callback",
        "team_id": TEAM,
        "event_id": event_id,
        "event": {
            "type": "app_mention",
            "user": "U0OWNER",
            "text": f"<@{BOT_USER}> refund the broken order",
            "channel": "C0GENERAL",
            "ts": ts,
        },
    }


async def test_serve_runs_the_desk_on_the_offline_model_with_nothing_but_a_slack_app(
    stub: SlackStub, tmp_path: Path
) -> None:
    port = free_port()
    env = person_env(  # what a person sets: the Slack app, the channel, the offline model
        SLACK_BOT_TOKEN="xoxb-test",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=stub.api_url,
        PORT=str(port),
        COUNTERSIGN_APPROVAL_CHANNEL="C0DESK",
        COUNTERSIGN_DESK_MODEL="offline",
    )
    process = await start_serve(env, tmp_path)
    try:
        async with aiohttp.ClientSession() as session:
            await wait_healthy(session, f"http://127.0.0.1:{port}/healthz", process)
            mention = desk_mention("Ev0OFFLINE", ts="1700000950.000001")
            events = f"http://127.0.0.1:{port}/slack/events"
            mentioned = json.dumps(mention)
            assert await signed_post(session, events, mentioned, "application/json") == 200
            questions = await stub.wait_for("chat.postMessage", 2)
            for question in questions:  # no approvers: the requester answers, in the thread
                assert question.payload["thread_ts"] == "1700000950.000001"
                click = click_payload(str(buttons(question.blocks())[0]["value"]))
                form = "application/x-www-form-urlencoded"
                assert await signed_post(session, events, click, form) == 200
            posts = await stub.wait_for("chat.postMessage", 3)
        assert posts[-1].payload["text"].startswith("Here is what happened: refunded 120.00")
        assert stub.calls[0].method == "auth.test"  # the token was checked first
    finally:
        code, _, err = await stop(process)
    assert code == 0, err


async def test_serve_runs_the_desk_as_an_attached_langchain_agent(
    stub: SlackStub, tmp_path: Path
) -> None:
    """``COUNTERSIGN_DESK_AGENT=langgraph``: a mention invokes LangChain's ``create_agent`` with
    ``HumanInTheLoopMiddleware`` attached to the desk's refund role; only the refund is asked
    (the middleware's choice), a signed click approves it, the tool runs once and the agent's
    answer is said in the thread. A restart between the question and the click loses nothing:
    the graph is checkpointed in the App's own database."""
    port = free_port()
    env = person_env(
        SLACK_BOT_TOKEN="xoxb-test",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=stub.api_url,
        PORT=str(port),
        COUNTERSIGN_APPROVAL_CHANNEL="C0DESK",
        COUNTERSIGN_DESK_MODEL="offline",
        COUNTERSIGN_DESK_AGENT="langgraph",
    )
    events = f"http://127.0.0.1:{port}/slack/events"
    process = await start_serve(env, tmp_path)
    try:
        async with aiohttp.ClientSession() as session:
            await wait_healthy(session, f"http://127.0.0.1:{port}/healthz", process)
            mention = desk_mention("Ev0LANGGRAPH", ts="1700000960.000001")
            assert (
                await signed_post(session, events, json.dumps(mention), "application/json") == 200
            )
            [question] = await stub.wait_for("chat.postMessage", 1)
    finally:
        code, _, err = await stop(process)
    assert code == 0, err
    assert question.payload["thread_ts"] == "1700000960.000001"  # the requester answers
    assert "The desk agent asks to refund" in all_text(question.blocks())
    approve = str(buttons(question.blocks())[0]["value"])

    process = await start_serve(env, tmp_path)  # a restart: the graph waits in the database
    try:
        async with aiohttp.ClientSession() as session:
            await wait_healthy(session, f"http://127.0.0.1:{port}/healthz", process)
            click = click_payload(approve)
            form = "application/x-www-form-urlencoded"
            assert await signed_post(session, events, click, form) == 200
            posts = await stub.wait_for("chat.postMessage", 2)
    finally:
        code, _, err = await stop(process)  # its work finished: what it would send, sent
    assert code == 0, err
    # nothing more came: no second question, no second answer
    answer = stub.of("chat.postMessage")[-1]
    assert len(stub.of("chat.postMessage")) == 2 == len(posts)
    assert answer.payload["thread_ts"] == "1700000960.000001"
    assert "refunded 120.00" in answer.payload["text"]
    assert "booked" in answer.payload["text"]  # the expense ran without a question


# --------------------------------------------------------------------------------------------
# The built-in desk.


def desk_agent(application: type) -> type:
    spec = spec_of(application)
    assert isinstance(spec, ApplicationSpec)
    workflow = spec_of(spec.workflows[0])
    assert isinstance(workflow, WorkflowSpec)
    step = workflow.flows[0].build().steps[0]
    assert isinstance(step, FlowStep)
    return step.agent


async def test_the_desk_asks_its_approvers_in_the_approval_channel(
    stub: SlackStub, tmp_path: Path
) -> None:
    desk = build_desk(
        DeskSettings(approval_channel="C0DESK", approvers=("U0BOSS",), model="some/model")
    )
    agent_cls = desk_agent(desk)
    tools = {spec_of(t).name: t for t in spec_of(agent_cls).tools}  # type: ignore[union-attr]
    mock_llm(agent_cls).then_return(
        call_tool(tools["refund-card-tool"], {"order_id": "A-1", "amount": 10.0}), "Refunded."
    )
    app = await App.create(
        desk,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'desk.db'}",
        clock=FakeClock(),
        settings=Settings(),
    )
    bot = SlackBot(
        app, SlackSettings(bot_token="xoxb-t", signing_secret=SECRET, api_url=stub.api_url)
    )
    try:
        from channels.slack.threads import SlackThread

        thread = SlackThread(team=TEAM, channel="C0GENERAL", ts="1700000000.000009")
        await bot.services.conversations.start(
            thread=thread, tenant_id=TEAM, user="U0ASKER", text="refund A-1"
        )
        question, note = stub.of("chat.postMessage")
        assert question.payload["channel"] == "C0DESK"
        assert (note.payload["channel"], note.payload["thread_ts"]) == (thread.channel, thread.ts)
        assert note.payload["text"].startswith("Waiting for approval in <#C0DESK>")
        pause_id = str(buttons(question.blocks())[0]["value"])
        from channels.slack.answering import Answerer
        from channels.slack.button_values import read_answer_value
        from channels.slack.feedback import Audience

        boss = Answerer(user="U0BOSS", team=TEAM, tenant_id=TEAM, audience=Audience(user="U0BOSS"))
        await bot.services.flows.approve(read_answer_value(pause_id), boss)
        await bot.wait_idle()
        texts: list[Any] = [c.payload["text"] for c in stub.of("chat.postMessage")]
        assert texts[-1] == "Refunded."
    finally:
        await bot.close()
        await app.close()
