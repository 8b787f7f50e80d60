"""What a closed question's message shows, by how it closed."""

from __future__ import annotations

import pytest

from bot.core.enums import PauseResolution
from channels.kit.outcomes import Cancelled, Withdrawn
from channels.slack.outcomes import closed_resolution


def test_a_withdrawal_and_a_cancellation_show_as_themselves() -> None:
    assert closed_resolution(PauseResolution.WITHDRAWN) == Withdrawn()
    assert closed_resolution(PauseResolution.CANCELLED) == Cancelled()


@pytest.mark.parametrize("resolution", [PauseResolution.REPLIED, PauseResolution.DECIDED])
def test_an_answered_resolution_is_never_shown_as_cancelled(resolution: PauseResolution) -> None:
    with pytest.raises(ValueError, match="answered, not withdrawn"):
        closed_resolution(resolution)
