"""One factory for the tests' sample applications: an agent over some tools, the one-agent
workflow around it (a text in, the agent's answer out) and the application that runs it.

What differs between the tests' applications is their tools, the roles those tools ask and the
channel implementations of the roles; the rest was copied from test to test. Components are
made fresh per call because a decorated class belongs to one application, and a test that
needs a variant (a budget, PII policies, providers) gets its own classes.

Script the agent with ``mock_llm(sample.agent)`` before the App is created.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel

from bot import (
    Budget,
    PiiPolicy,
    WorkflowFinishText,
    WorkflowStartText,
    agent,
    application,
    start,
    workflow,
    workflow_finish,
    workflow_start,
)
from bot.models.provider import ModelProvider

KIMI = "moonshotai/kimi-k2.6"


@workflow_start(name="office-workflow-start", description="A request", input=WorkflowStartText)
class OfficeStart: ...


@workflow_finish(name="office-workflow-finish", description="The answer", output=WorkflowFinishText)
class OfficeFinish: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class SampleApplication:
    """The classes a test passes to ``App.create``, ``App.execute`` and ``mock_llm``."""

    application: type
    workflow: type
    agent: type


def sample_agent(
    name: str,
    *,
    tools: Sequence[type],
    description: str,
    prompt: str = "Do what is asked.",
    model: str | BaseChatModel = KIMI,
) -> type:
    """An agent named ``{name}-agent`` over ``tools`` (each already bound to its role)."""
    cls = type(_class_name(name, "Agent"), (), {"__module__": __name__})
    return agent(
        name=f"{name}-agent", description=description, prompt=prompt, model=model, tools=tools
    )(cls)


def sample_application(
    name: str,
    *,
    agent: type,
    channels: Sequence[type] = (),
    workflow_name: str | None = None,
    version: str = "1.0.0",
    entry_workflow: bool = False,
    budget: Budget | None = None,
    workflow_budget: Budget | None = None,
    pii_policies: Sequence[PiiPolicy] = (),
    workflow_pii_policies: Sequence[PiiPolicy] = (),
    providers: Sequence[ModelProvider] = (),
) -> SampleApplication:
    """The application ``name`` with one workflow (``workflow_name``, by default
    ``{name}-workflow``) that hands the start text to ``agent``; ``channels`` implement the
    roles its tools ask. ``budget`` / ``pii_policies`` apply to the application,
    ``workflow_budget`` / ``workflow_pii_policies`` to the workflow."""
    flow = start(OfficeStart).returns(WorkflowStartText).to_agent(agent).to_finish(OfficeFinish)
    workflow_cls = workflow(
        name=workflow_name or f"{name}-workflow",
        version=version,
        flow=[flow],
        budget=workflow_budget,
        pii_policies=workflow_pii_policies,
    )(type(_class_name(name, "Workflow"), (), {"__module__": __name__}))
    application_cls = application(
        name=name,
        workflows=[workflow_cls],
        channels=channels,
        entry_workflow=workflow_cls if entry_workflow else None,
        budget=budget,
        pii_policies=pii_policies,
        providers=providers,
    )(type(_class_name(name, "Application"), (), {"__module__": __name__}))
    return SampleApplication(application=application_cls, workflow=workflow_cls, agent=agent)


def _class_name(name: str, kind: str) -> str:
    """``slack-office`` + ``Agent``: ``SlackOfficeAgent`` (what a class written out was called)."""
    return "".join(part.capitalize() for part in name.split("-")) + kind
