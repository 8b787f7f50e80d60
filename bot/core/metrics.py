"""What a running App counts, in Prometheus's terms (``prometheus-client``), one registry per App.

Each App owns a :class:`Metrics` with its own ``CollectorRegistry`` (never the global default
one), so two Apps in one process (tests, a process serving two applications) count apart. The
runtime and the channels count through it; ``/metrics`` serves :meth:`Metrics.exposition`.

Labels are bounded: outcomes, error codes, roles (named in the application), Slack methods,
resolutions. Tenant ids and user ids are never labels, and a pause id is never anywhere.

The pending pauses by role are read from the store at scrape time with one grouped query
(``PendingSource``), kept for ``PENDING_CACHE`` so scrapes in a burst read the store once. A
scrape waits for a new reading at most ``PENDING_WAIT`` (the first one, until it is read): past
that it is served the last reading while the new one finishes for the next scrape — with 100k
pending pauses the query alone took 30 ms on a busy machine, over a scrape's 20 ms budget.
Nothing of it runs while nobody scrapes.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from bot.core.clock import Clock

CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
"""The Prometheus text format's content type."""
PENDING_CACHE: Final = timedelta(seconds=5)
"""How long one reading of the pending pauses serves scrapes."""
PENDING_WAIT: Final = 0.01
"""Seconds a scrape waits for a new reading of the pending pauses before it is served the last
one (loop time: a bound on the scrape's latency, not a moment on the App's clock)."""

_ANSWER_BUCKETS: Final = (1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 86400)
_PASS_BUCKETS: Final = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
_REQUEST_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5)
"""Up to Slack's 3 s: an interactivity request answered later shows the person an error."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingByRole:
    """The pauses of one role still waiting: how many, and since when the oldest waits."""

    role: str
    count: int
    oldest_asked_at: datetime
    undelivered: int = 0
    """Of them, how many are not yet delivered: their channel could not be given them (an
    outage); the recovery sweep asks them again."""


PendingSource = Callable[[], Awaitable[Sequence[PendingByRole]]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Readiness:
    """Whether an instance can take work (``/readyz``): each check's problem, if any."""

    problems: tuple[tuple[str, str], ...] = ()
    """``(check, problem)`` for each check that failed (``("database", "closed")``)."""

    @property
    def ready(self) -> bool:
        return not self.problems

    def body(self) -> dict[str, object]:
        """The short JSON body ``/readyz`` answers with."""
        if self.ready:
            return {"status": "ready"}
        return {"status": "unready", "problems": dict(self.problems)}


class Metrics:
    """The App's collectors, on a registry of its own."""

    def __init__(self, clock: Clock, *, scrape_token: str | None = None) -> None:
        self._clock = clock
        self._scrape_token = None if scrape_token is None else f"Bearer {scrape_token}".encode()
        self._children: dict[tuple[object, tuple[str, ...]], Any] = {}
        self.registry = CollectorRegistry(auto_describe=True)
        registry = self.registry
        self.answers = Counter(
            "countersign_answers",
            "Answers given to pauses, by what became of them (code: a refusal's error code).",
            ["outcome", "code"],
            registry=registry,
        )
        self.time_to_answer = Histogram(
            "countersign_time_to_answer_seconds",
            "From a question asked to its answer recorded, by role and resolution.",
            ["role", "resolution"],
            buckets=_ANSWER_BUCKETS,
            registry=registry,
        )
        self.withdrawals = Counter(
            "countersign_withdrawals",
            "Questions taken back from their channel (withdrawn, expired, cancelled), by "
            "resolution.",
            ["resolution"],
            registry=registry,
        )
        self.nudges = Counter(
            "countersign_nudges",
            "Reminders and escalations sent to a question's channel, by kind (remind, escalate).",
            ["kind"],
            registry=registry,
        )
        self.passes = Counter(
            "countersign_passes",
            "LangGraph passes over a tree, by where they left it (rested, completed, failed).",
            ["outcome"],
            registry=registry,
        )
        self.pass_duration = Histogram(
            "countersign_pass_duration_seconds",
            "How long one pass over a tree took.",
            buckets=_PASS_BUCKETS,
            registry=registry,
        )
        self.sweeps = Counter(
            "countersign_sweeps",
            "Sweeps run, by sweep and whether they failed.",
            ["sweep", "outcome"],
            registry=registry,
        )
        self.swept = Counter(
            "countersign_swept",
            "What the sweeps moved: trees recovered, questions closed at a deadline, replies "
            "read, ends told, records removed.",
            ["sweep"],
            registry=registry,
        )
        self.lease_waits = Counter(
            "countersign_lease_waits",
            "Passes that waited for a tree's lease held by another instance.",
            registry=registry,
        )
        self.leases_lost = Counter(
            "countersign_leases_lost",
            "Leases another instance took over while a pass of this one ran.",
            registry=registry,
        )
        self.lease_takeovers = Counter(
            "countersign_lease_takeovers",
            "Leases this instance took over from another whose lease had expired (it died or "
            "stalled mid-pass), apart from the waits for a live one.",
            registry=registry,
        )
        self.slack_requests = Counter(
            "countersign_slack_requests",
            "Requests Slack sent the bot, by kind (block_actions, view_submission, event, "
            "command...) and outcome (ok, unhandled, refused, failed).",
            ["kind", "outcome"],
            registry=registry,
        )
        self.slack_request_duration = Histogram(
            "countersign_slack_request_duration_seconds",
            "From a Slack request's arrival to the bot's answer (the ack), by kind.",
            ["kind"],
            buckets=_REQUEST_BUCKETS,
            registry=registry,
        )
        self.slack_calls = Counter(
            "countersign_slack_api_calls",
            "Slack Web API calls, by method and outcome (ok, Slack's error code, ratelimited).",
            ["method", "outcome"],
            registry=registry,
        )
        self.slack_retries = Counter(
            "countersign_slack_api_retries",
            "Slack Web API requests retried, by method and reason (ratelimited, server_error, "
            "connection).",
            ["method", "reason"],
            registry=registry,
        )
        self.model_calls = Counter(
            "countersign_model_calls",
            "Model calls made, by caller (the component or interpreter) and outcome.",
            ["caller", "outcome"],
            registry=registry,
        )
        self.model_spend = Counter(
            "countersign_model_spend",
            "What the model calls cost (the providers' prices), by caller.",
            ["caller"],
            registry=registry,
        )
        self.policy_decisions = Counter(
            "countersign_policy_decisions",
            "What approval policies decided before a question was sent, by policy and outcome "
            "(approved, rejected, asked; failed: the policy raised and a person was asked).",
            ["policy", "outcome"],
            registry=registry,
        )
        self.grant_decisions = Counter(
            "countersign_grant_decisions",
            "Questions a standing grant approved at once, by role.",
            ["role"],
            registry=registry,
        )
        self._pending = _PendingCollector()
        registry.register(self._pending)
        self._source: PendingSource | None = None
        self._read_at: datetime | None = None
        self._reading: asyncio.Future[None] | None = None

    def may_scrape(self, authorization: str | None) -> bool:
        """Whether a scrape with this ``Authorization`` header may read the metrics: always
        without a scrape token (``COUNTERSIGN_METRICS_TOKEN``), else only ``Bearer <token>``
        (compared in constant time)."""
        if self._scrape_token is None:
            return True
        given = (authorization or "").encode()
        return hmac.compare_digest(given, self._scrape_token)

    def read_pending_with(self, source: PendingSource) -> None:
        """Where the pending pauses are read from at scrape time (the App's store)."""
        self._source = source

    async def exposition(self) -> bytes:
        """Every metric in the Prometheus text format, the pending pauses read if stale."""
        await self._refresh_pending()
        return generate_latest(self.registry)

    async def _refresh_pending(self) -> None:
        now = self._clock.now()
        if self._source is None:
            return
        if self._read_at is not None and now - self._read_at < PENDING_CACHE:
            return
        if self._reading is None:
            self._reading = asyncio.ensure_future(self._read_pending(self._source, now))
            self._reading.add_done_callback(_retrieved)
        reading = self._reading
        if self._pending.read_at is None:  # nothing read yet: this scrape waits for it
            await asyncio.shield(reading)
            return
        await asyncio.wait({reading}, timeout=PENDING_WAIT)
        if reading.done():
            reading.result()  # a store that failed in time fails the scrape, as it always did

    async def _read_pending(self, source: PendingSource, now: datetime) -> None:
        try:
            self._pending.rows = tuple(await source())
            self._pending.read_at = now
            self._read_at = now
        finally:
            self._reading = None

    async def close(self) -> None:
        """Wait for a reading of the pending pauses still under way (the App closes its store
        after); repeatable."""
        if self._reading is not None:
            await asyncio.gather(self._reading, return_exceptions=True)

    # ---------------------------------------------------------------- what is counted

    def _child(self, metric: Counter | Histogram, *values: str) -> Any:
        """``metric.labels(*values)``, kept: a labelled child lives as long as its metric
        (nothing here removes one), and ``labels`` checks and locks on every call — six
        times a pause cycle."""
        key = (metric, values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child

    def answered(self, outcome: str, code: str = "") -> None:
        self._child(self.answers, outcome, code).inc()

    def policy_decided(self, policy: str, outcome: str) -> None:
        self._child(self.policy_decisions, policy, outcome).inc()

    def grant_decided(self, role: str) -> None:
        self._child(self.grant_decisions, role).inc()

    def answer_time(self, role: str, resolution: str, waited: timedelta) -> None:
        self._child(self.time_to_answer, role, resolution).observe(max(waited.total_seconds(), 0.0))

    def withdrawn(self, resolution: str) -> None:
        self._child(self.withdrawals, resolution).inc()

    def nudged(self, kind: str) -> None:
        self._child(self.nudges, kind).inc()

    def pass_ran(self, outcome: str, took: timedelta) -> None:
        self._child(self.passes, outcome).inc()
        self.pass_duration.observe(max(took.total_seconds(), 0.0))

    def sweep_ran(self, sweep: str, *, moved: int, failed: bool = False) -> None:
        self._child(self.sweeps, sweep, "failed" if failed else "ok").inc()
        if moved:
            self._child(self.swept, sweep).inc(moved)

    def slack_call(self, method: str, outcome: str) -> None:
        self._child(self.slack_calls, method, outcome).inc()

    def slack_request(self, kind: str, outcome: str, took: timedelta) -> None:
        self._child(self.slack_requests, kind, outcome).inc()
        self._child(self.slack_request_duration, kind).observe(max(took.total_seconds(), 0.0))

    def lease_taken_over(self) -> None:
        self.lease_takeovers.inc()

    def slack_retry(self, method: str, reason: str) -> None:
        self._child(self.slack_retries, method, reason).inc()

    def model_call(self, caller: str, outcome: str, *, cost: float = 0.0) -> None:
        self._child(self.model_calls, caller, outcome).inc()
        if cost:
            self._child(self.model_spend, caller).inc(cost)


def _retrieved(reading: asyncio.Future[None]) -> None:
    """A reading that failed after its scrape was served: the next scrape reads again (and
    fails if the store still does); its failure is not left unretrieved."""
    if not reading.cancelled():
        reading.exception()


class _PendingCollector(Collector):
    """The pending pauses by role and the age of the oldest, as last read."""

    def __init__(self) -> None:
        self.rows: tuple[PendingByRole, ...] = ()
        self.read_at: datetime | None = None

    def collect(self) -> Iterator[Metric]:
        pending = GaugeMetricFamily(
            "countersign_pending_pauses",
            "Questions waiting for an answer, by role.",
            labels=["role"],
        )
        oldest = GaugeMetricFamily(
            "countersign_oldest_pending_pause_age_seconds",
            "How long the oldest waiting question of each role has waited.",
            labels=["role"],
        )
        undelivered = GaugeMetricFamily(
            "countersign_questions_undelivered",
            "Questions waiting that their channel could not be given yet (an outage), by role.",
            labels=["role"],
        )
        for row in self.rows:
            pending.add_metric([row.role], row.count)
            undelivered.add_metric([row.role], row.undelivered)
            if self.read_at is not None:
                age = (self.read_at - row.oldest_asked_at).total_seconds()
                oldest.add_metric([row.role], max(age, 0.0))
        yield pending
        yield oldest
        yield undelivered

    def describe(self) -> Iterator[Metric]:
        return iter(())
