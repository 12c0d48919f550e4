"""Adapters that plug Hindsight into agent frameworks, each an optional extra:
`hindsight.integrations.langgraph` (`[langgraph]`), `hindsight.integrations.openai_agents`
(`[openai-agents]`). Importing this package needs neither."""
