"""How an ``App`` is put together from an application class and the settings.

Assembly (every rule checked at once), the database, the encryption keys, LangGraph's
checkpointer, the runtime's services, the graphs, the engine: each resource is opened on the
caller's ``AsyncExitStack``, so a start that fails at any point releases what it had opened
(the database's engine and worker threads, the checkpointer) and the App's ``close`` is
that stack's.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver

from bot.components.specs import AgentSpec, spec_of
from bot.core.clock import Clock, SystemClock
from bot.core.errors import SettingsError
from bot.core.metrics import Metrics
from bot.models import ModelProvider, resolve_chat_model
from bot.runtime.agent_graph import AgentLoop, build_agent_graph
from bot.runtime.assembly import Assembly, assemble
from bot.runtime.checkpoints import OpenCheckpointer, open_checkpointer
from bot.runtime.container import Container
from bot.runtime.engine import Engine, WorkflowTrees
from bot.runtime.interpreting import ReplyModels
from bot.runtime.launch import GraphLookup
from bot.runtime.ledger import price_for
from bot.runtime.model_overrides import override_for
from bot.runtime.services import Runtime
from bot.runtime.sweeps import SWEEP_INTERVAL
from bot.runtime.tree_guard import TreeGuard
from bot.runtime.views import Views
from bot.runtime.workflow_graph import build_workflow_graph
from bot.security.checkpoint_serde import encrypted_checkpoint_serde
from bot.security.codec import EncryptingCodec
from bot.security.derived import DerivedKeys
from bot.security.key_check import KeyCheck, database_samplers
from bot.security.key_source import key_source
from bot.settings import Settings, load_settings
from bot.store.batch_lines import SqlBatchLines
from bot.store.database import Database, DatabaseUrl, DatabaseUrlError
from bot.store.delegations import SqlDelegations
from bot.store.grants import SqlGrants
from bot.store.installations import SqlInstallations, SqlOAuthStates
from bot.store.leases import SqlLeases
from bot.store.ledger import SqlLedger
from bot.store.message_refs import SqlMessageRefs
from bot.store.outbox import SqlOutbox
from bot.store.repositories import MessageRefs
from bot.store.sql import SqlStore
from bot.store.tool_runs import SqlToolRuns


@dataclass(frozen=True, slots=True, kw_only=True)
class Wiring:
    """The parts of a running App."""

    runtime: Runtime
    engine: Engine
    reply_models: ReplyModels
    views: Views
    database: Database
    message_refs: MessageRefs
    derived_keys: DerivedKeys
    checkpointer: BaseCheckpointSaver[Any]
    key_check: KeyCheck
    installations: SqlInstallations
    oauth_states: SqlOAuthStates
    outbox: SqlOutbox
    batch_lines: SqlBatchLines
    sweep_interval: timedelta = SWEEP_INTERVAL


async def wire(
    application: type,
    stack: AsyncExitStack,
    *,
    database_url: str | None,
    clock: Clock | None,
    settings: Settings | None,
    services: Mapping[type, object] | None,
) -> Wiring:
    """Open everything an App of ``application`` needs, each release pushed on ``stack``."""
    settings = settings or load_settings()
    spec = spec_of(application)
    providers: list[ModelProvider] = [
        *getattr(spec, "providers", ()),
        *settings.model_providers(),
    ]
    assembly = assemble(application, providers)
    clock = clock or SystemClock()
    try:
        url = DatabaseUrl.checked(database_url or settings.database_url)
    except DatabaseUrlError as error:
        raise SettingsError(f"DATABASE_URL: {error}") from None
    keys = key_source(url, settings.countersign_encryption_keys)  # refuses a start at once
    database = Database.open(url)
    stack.push_async_callback(database.close)
    await database.migrate(clock.now())
    # after the database opened: a failed start leaves no key
    ring = await keys.load(holds_rows=database.holds_rows)
    checkpointer = await open_checkpointer(url, serde=encrypted_checkpoint_serde(ring))
    stack.push_async_callback(checkpointer.close)
    samplers = [*database_samplers(database), checkpointer.sample]
    key_check = KeyCheck(ring, samplers, source=keys.named, clock=clock)
    problem = await key_check.problem()  # a ring that is not the database's: before serving
    if problem is not None:
        raise SettingsError(problem)
    codec = EncryptingCodec(ring)
    store = SqlStore(database, codec)
    token = settings.countersign_metrics_token
    metrics = Metrics(clock, scrape_token=None if token is None else token.get_secret_value())
    metrics.read_pending_with(store.pending_by_role)
    stack.push_async_callback(metrics.close)  # a reading under way ends before the database
    runtime = Runtime(
        store=store,
        clock=clock,
        container=Container(services),
        assembly=assembly,
        metrics=metrics,
        tool_runs=SqlToolRuns(database, codec),
        grants=SqlGrants(database, codec),
        delegations=SqlDelegations(database),
    )

    def chat_model_for(component: type, model: Any) -> BaseChatModel:
        return _chat_model_for(component, model, providers)

    reply_models = ReplyModels.of_app(providers, chat_model_for, SqlLedger(database))
    guard = TreeGuard(
        SqlLeases(database), clock, owner=f"instance-{uuid.uuid4().hex}", metrics=metrics
    )
    stack.push_async_callback(guard.close)  # a tree kept for a continuation: given up first
    return Wiring(
        runtime=runtime,
        engine=Engine(
            runtime,
            WorkflowTrees(
                _build_graphs(runtime, assembly, checkpointer, chat_model_for, providers),
                checkpointer.new_threads,
            ),
            guard,
        ),
        reply_models=reply_models,
        views=Views(runtime, reply_models.ledger),
        database=database,
        message_refs=SqlMessageRefs(database),
        derived_keys=DerivedKeys(ring),
        checkpointer=checkpointer.saver,
        key_check=key_check,
        installations=SqlInstallations(database, codec),
        oauth_states=SqlOAuthStates(database),
        outbox=SqlOutbox(database, codec),
        batch_lines=SqlBatchLines(database, codec),
        sweep_interval=settings.sweep_interval,
    )


def _chat_model_for(
    component: type, model: Any, providers: Sequence[ModelProvider]
) -> BaseChatModel:
    override = override_for(component)
    if override is not None:
        return override  # type: ignore[no-any-return]
    return resolve_chat_model(model, providers)


def _build_graphs(
    runtime: Runtime,
    assembly: Assembly,
    checkpointer: OpenCheckpointer,
    chat_model_for: Callable[[type, Any], BaseChatModel],
    providers: Sequence[ModelProvider],
) -> dict[str, Any]:
    """Root graphs by workflow name; agents and children are found through one lookup."""
    lookup = GraphLookup()
    for agent_cls, agent_spec in assembly.agents.items():
        bindings = {assembly.tools[t].spec.name: assembly.tools[t] for t in agent_spec.tools}
        chat_model = chat_model_for(agent_cls, agent_spec.model)
        price = price_for(agent_spec.model, providers)
        loop = AgentLoop(runtime, agent_spec, chat_model, bindings, price=price)
        lookup.loops[agent_cls] = loop
        lookup.agents[agent_cls] = build_agent_graph(loop)
    agents: dict[type, AgentSpec] = dict(assembly.agents)
    roots = {}
    for workflow_cls, workflow_spec in assembly.workflows.items():
        flow = assembly.flows[workflow_cls]
        assert flow.finish is not None
        finish = assembly.finishes[flow.finish]
        lookup.children[workflow_cls] = build_workflow_graph(
            runtime, workflow_spec, flow, agents, lookup, finish, None
        )
        roots[workflow_spec.name] = build_workflow_graph(
            runtime, workflow_spec, flow, agents, lookup, finish, checkpointer.saver
        )
    return roots
