"""LangGraph's long-term memory store on Hindsight (`pip install 'hindsight[langgraph]'`).

>>> from hindsight.integrations.langgraph import HindsightStore
>>> graph = builder.compile(store=HindsightStore("http://127.0.0.1:8080", api_key="hs_..."))
"""

from hindsight.integrations.langgraph.store import HindsightStore

__all__ = ["HindsightStore"]
