"""What the permanent audit trail keeps of a decision and of what a tool ran with: masked.

The trail outlives the pause records and is read by auditors, so it never holds what the
application declared private: fields of the tool's input marked ``Sensitive`` are masked, and
every value that a PII policy of the application or of the pause's workflows finds (from the root
down to the pause's execution) is replaced with ``<LABEL>`` — in arguments, in approvers'
changes, and in the free-text reason. A policy that allows values unmasked (for a model to read)
does not unmask them here: the audit trail is not a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from bot.core.dtos import ToolCallApprovalDecision
from bot.core.pii import PiiAction, PiiDetector, PiiPolicy
from bot.core.sensitive import mask_arguments
from bot.runtime.budgets import lineage
from bot.runtime.pii import policies_of
from bot.runtime.services import Runtime
from bot.store.records import PauseRecord


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditMask:
    """Masks what one pause's audit entry keeps."""

    tool_input: type[BaseModel] | None
    detectors: tuple[PiiDetector, ...]

    def decision(self, decision: ToolCallApprovalDecision) -> dict[str, Any]:
        shown = decision.model_dump(mode="json")
        if decision.reason is not None:
            shown["reason"] = self._text(decision.reason)
        if decision.override_arguments is not None:
            shown["override_arguments"] = self.arguments(decision.override_arguments)
        return shown

    def arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        masked = mask_arguments(self.tool_input, arguments)
        return {key: self._value(value) for key, value in masked.items()}

    def ran_with(
        self, decision: ToolCallApprovalDecision, asked: dict[str, Any]
    ) -> dict[str, Any] | None:
        """What an approved call runs with (the approver's changes merged in), masked; None
        for a rejection."""
        if not decision.approved:
            return None
        return self.arguments(decision.override_arguments or asked)

    def _value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, int) and not isinstance(value, bool):
            text = str(value)
            masked = self._text(text)
            return value if masked == text else masked
        if isinstance(value, dict):
            return {key: self._value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._value(item) for item in value]
        return value

    def _text(self, text: str) -> str:
        found = sorted(
            (match.start, match.end, detector.label)
            for detector in self.detectors
            for match in detector.find(text)
        )
        pieces: list[str] = []
        position = 0
        for start, end, label in found:
            if start < position:
                continue  # overlaps a match already masked
            pieces += [text[position:start], f"<{label}>"]
            position = end
        return "".join([*pieces, text[position:]])


def masking_detectors(policies: Sequence[PiiPolicy]) -> tuple[PiiDetector, ...]:
    """The detectors whose finds the audit trail masks."""
    return tuple(
        policy.detector
        for policy in policies
        if isinstance(policy.detector, PiiDetector)
        and policy.action is not PiiAction.ALLOW_UNMASKED
    )


async def audit_mask(
    runtime: Runtime, record: PauseRecord, tool_input: type[BaseModel] | None
) -> AuditMask:
    """The mask of ``record``'s audit entry. Reads the tree's executions only when a workflow
    declares policies of its own (the application's apply everywhere)."""
    assembly = runtime.assembly
    policies: Sequence[PiiPolicy] = assembly.application.pii_policies
    if any(spec.pii_policies for spec in assembly.workflows.values()):
        tree = await runtime.store.list_executions_by_root(record.root_execution_id)
        policies = policies_of(assembly, lineage(tree, record.execution_id))
    return AuditMask(tool_input=tool_input, detectors=masking_detectors(policies))
