"""``/metrics`` after a scripted scenario, read back with exact values; ``/readyz``."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from bot.core.metrics import CONTENT_TYPE
from bot.security import KeyRing, generate_key, key_file_for, read_key_file, reencrypt_database
from channels.slack.render import APPROVE_ACTION
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER, STRANGER
from tests.slack.stub import TEAM
from tests.slack.test_clicks import ask_refund

README = Path(__file__).resolve().parents[2] / "README.md"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def scrape(world: SlackWorld) -> Samples:
    response = await world.http.get("/metrics")
    assert response.status == 200
    assert response.headers["Content-Type"] == CONTENT_TYPE
    text = await response.text()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def test_the_metrics_of_a_scripted_scenario(world: SlackWorld) -> None:
    # asked, then answered 90 s later; Slack rate-limits the message's update once
    answered = await ask_refund(world)
    await world.clock.advance(timedelta(seconds=90))
    world.stub.fail_next("chat.update", status=429, retry_after=0)
    await world.click(MANAGER, APPROVE_ACTION, answered)
    await world.settle()
    # asked, refused to a stranger, withdrawn by a cancel, then clicked too late
    withdrawn = await ask_refund(world, final=None)
    await world.click(STRANGER, APPROVE_ACTION, withdrawn)
    await world.settle()
    pause = await world.app.find_pause(withdrawn, tenant_id=TEAM)
    assert pause is not None
    await world.app.cancel(pause.thread_id, tenant_id=TEAM)
    await world.click(MANAGER, APPROVE_ACTION, withdrawn)
    await world.settle()
    # asked, still waiting 30 s later
    waiting = await ask_refund(world, final=None)
    await world.clock.advance(timedelta(seconds=30))
    role = pause.role

    samples = await scrape(world)
    text = (await (await world.http.get("/metrics")).text()).lower()

    assert value(samples, "countersign_answers_total", outcome="answered", code="") == 1
    assert (
        value(samples, "countersign_answers_total", outcome="refused", code="pause.wrong-answerer")
        == 1
    )
    assert value(samples, "countersign_answers_total", outcome="already_closed", code="") == 1
    labels = {"role": role, "resolution": "REPLIED"}
    assert value(samples, "countersign_time_to_answer_seconds_count", **labels) == 1
    assert value(samples, "countersign_time_to_answer_seconds_sum", **labels) == 90.0
    assert value(samples, "countersign_time_to_answer_seconds_bucket", le="60.0", **labels) == 0
    assert value(samples, "countersign_time_to_answer_seconds_bucket", le="120.0", **labels) == 1
    assert value(samples, "countersign_withdrawals_total", resolution="CANCELLED") == 1
    assert (
        value(
            samples,
            "countersign_slack_api_retries_total",
            method="chat.update",
            reason="ratelimited",
        )
        == 1
    )
    assert (
        value(samples, "countersign_slack_api_calls_total", method="chat.update", outcome="ok") == 2
    )
    assert (
        value(samples, "countersign_slack_api_calls_total", method="chat.postMessage", outcome="ok")
        == 3
    )
    assert value(samples, "countersign_pending_pauses", role=role) == 1
    assert value(samples, "countersign_oldest_pending_pause_age_seconds", role=role) == 30.0
    # passes: 3 first passes rested, 1 answer completed the first run
    assert value(samples, "countersign_passes_total", outcome="rested") == 3
    assert value(samples, "countersign_passes_total", outcome="completed") == 1
    assert value(samples, "countersign_pass_duration_seconds_count") == 4
    # each advance ran the sweeps once; nothing needed recovering
    assert value(samples, "countersign_sweeps_total", sweep="recovery", outcome="ok") == 2
    assert value(samples, "countersign_swept_total", sweep="recovery") == 0
    for secret in (answered, withdrawn, waiting, TEAM.lower(), MANAGER.lower(), STRANGER.lower()):
        assert secret.lower() not in text


async def test_readyz_is_200_with_a_database_and_503_without(world: SlackWorld) -> None:
    ready = await world.http.get("/readyz")
    assert (ready.status, await ready.json()) == (200, {"status": "ready"})

    await world.app.database.close()

    unready = await world.http.get("/readyz")
    assert unready.status == 503
    assert await unready.json() == {"status": "unready", "problems": {"database": "closed"}}
    health = await world.http.get("/healthz")
    assert health.status == 200  # liveness: the process serves


async def test_the_readme_names_every_sweep_and_every_refused_request_kind(
    world: SlackWorld,
) -> None:
    await ask_refund(world, final=None)
    await world.clock.advance(timedelta(hours=1))  # every sweep runs, the retention one too
    await world.post("payload=%7B%7D", sign=False)
    samples = await scrape(world)
    readme = README.read_text(encoding="utf-8")
    rows = {
        line.split("|")[1].strip(): line for line in readme.splitlines() if line.startswith("| `")
    }

    sweeps = {
        dict(labels)["sweep"] for name, labels in samples if name == "countersign_sweeps_total"
    }
    assert sweeps >= {"recovery", "deadline", "reminders", "retention"}
    row = rows["`countersign_sweeps_total`, `countersign_swept_total`"]
    assert [s for s in sorted(sweeps) if f"`{s}`" not in row] == []
    kinds = {
        dict(labels)["kind"]
        for name, labels in samples
        if name == "countersign_slack_requests_total"
    }
    assert "bad_signature" in kinds
    row = next(
        line for name, line in rows.items() if name.startswith("`countersign_slack_requests_total`")
    )
    assert [k for k in ("bad_signature", "too_large", "unreadable") if f"`{k}`" not in row] == []


async def test_readyz_names_the_encryption_keys_once_the_data_is_under_a_key_they_lack(
    world: SlackWorld, tmp_path: Path
) -> None:
    """Another instance rotated the keys and re-encrypted: this one's ring no longer opens the
    data. ``/readyz`` says so once its last check is 30 s old (the App's clock)."""
    await ask_refund(world, final=None)
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    kept = read_key_file(key_file_for(tmp_path / "countersign.db"))
    rotated = KeyRing([generate_key("key-new"), *kept.keys])
    assert (await world.http.get("/readyz")).status == 200

    report = await reencrypt_database(url, rotated)
    assert report.total > 0
    assert (await world.http.get("/readyz")).status == 200  # what it read 0 s ago
    await world.clock.advance(timedelta(seconds=30))
    unready = await world.http.get("/readyz")

    assert unready.status == 503
    body = await unready.json()
    assert body["status"] == "unready"
    [problem] = body["problems"].values()
    assert list(body["problems"]) == ["encryption_keys"]
    assert "under key id 'key-new', which it does not hold" in problem
