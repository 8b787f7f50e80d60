"""A process that starts the demo's App on each database URL it reads on stdin, one a line.

Everything is imported before it prints ``ready``; processes handed the same URL together race
on the schema steps themselves, not on how long their imports took. For each URL it prints
``started <status>`` once the App ran the demo's request, or ``failed <error>``.
"""

from __future__ import annotations

import asyncio
import sys

from bot import App, Settings, WorkflowStartText
from bot.desk.demo import OfficeDeskApplication, OfficeDeskWorkflow
from channels.terminal import TerminalOutput
from tests.databases import TEST_ENCRYPTION_KEYS


async def start(url: str) -> str:
    app = await App.create(
        OfficeDeskApplication,
        database_url=url,
        settings=Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS),
        services={TerminalOutput: TerminalOutput(sys.stderr)},
    )
    async with app:
        result = await app.execute(
            OfficeDeskWorkflow, WorkflowStartText(text="go"), tenant_id="t", owner_id="o"
        )
    return result.status.value


def main() -> None:
    print("ready", flush=True)
    for line in sys.stdin:
        try:
            said = f"started {asyncio.run(start(line.strip()))}"
        except Exception as error:
            said = f"failed {type(error).__name__}: {' '.join(str(error).split())}"
        print(said, flush=True)


if __name__ == "__main__":
    main()
