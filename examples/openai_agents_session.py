"""An OpenAI Agents SDK conversation that survives restarts: its history is a Hindsight
working-memory session, not process memory. Run it twice with the same session id:

    export HINDSIGHT_URL=http://127.0.0.1:8080 HINDSIGHT_API_KEY=hs_... OPENAI_API_KEY=sk-...
    python examples/openai_agents_session.py chat-ada "Hi! My name is Ada."
    python examples/openai_agents_session.py chat-ada "What is my name?"

The second process starts with nothing but the session id, and the agent still knows.
Any OpenAI-compatible endpoint works (`OPENAI_BASE_URL`, `OPENAI_MODEL`).
Needs `pip install 'hindsight[openai-agents]'`.
"""

from __future__ import annotations

import asyncio
import os
import sys

from agents import Agent, Runner, set_tracing_disabled

from hindsight.integrations.openai_agents import HindsightSession


async def main(session_id: str, message: str) -> None:
    set_tracing_disabled(True)  # traces would be uploaded to OpenAI; keep this example local
    agent = Agent(
        name="Assistant",
        instructions="Reply in one short sentence.",
        model=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini"),
    )
    session = HindsightSession(
        session_id,
        url=os.environ.get("HINDSIGHT_URL", "http://127.0.0.1:8080"),
        api_key=os.environ.get("HINDSIGHT_API_KEY"),
        namespace=os.environ.get("HINDSIGHT_NAMESPACE", "openai-agents"),
    )
    result = await Runner.run(agent, message, session=session)
    print(f"assistant: {result.final_output}")
    print(f"history: {len(await session.get_items())} items in session {session_id!r}")
    await session.aclose()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: openai_agents_session.py SESSION_ID MESSAGE")
    asyncio.run(main(sys.argv[1], sys.argv[2]))
