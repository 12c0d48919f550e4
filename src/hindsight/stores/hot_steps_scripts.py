"""Redis: what the hot copy of a session's steps is made of, and the scripts that change it.

Every key of a session shares the `{namespace:session}` hash tag (one Redis Cluster slot):
the steps' sorted set, the tombstone a delete or pop leaves, and the session's expiry. Each
change is one Lua script, so it is atomic per session; `hot_steps` runs them and decides
when the copy is trusted.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

_PREFIX = "hs:wm:"
TOMBSTONE_MS = 30_000

# The session's exact expiry (ISO text) sits beside the steps in KEYS[3]; both expire then.
# KEYS: steps, tombstone, expiry. ARGV: step index, step JSON, expiry (unix ms), expiry
# (ISO), steps to keep
_APPEND = """
local key = KEYS[1]
local index = tonumber(ARGV[1])
if index == 0 then redis.call('DEL', KEYS[2]) end
redis.call('ZREMRANGEBYSCORE', key, index, index)
redis.call('ZADD', key, index, ARGV[2])
redis.call('ZREMRANGEBYRANK', key, 0, -(tonumber(ARGV[5]) + 1))
local expire_at = tonumber(ARGV[3])
local pttl = redis.call('PTTL', key)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if pttl < 0 or now + pttl < expire_at then
  redis.call('PEXPIREAT', key, expire_at)
  redis.call('SET', KEYS[3], ARGV[4], 'PXAT', expire_at)
end
return 1
"""

# KEYS: steps, expiry. ARGV: how many of the newest steps. Returns the expiry, then
# member/score pairs; nothing when the steps or their expiry are missing.
_READ = """
local raw = redis.call('ZRANGE', KEYS[1], -tonumber(ARGV[1]), -1, 'WITHSCORES')
if #raw == 0 then return {} end
local expiry = redis.call('GET', KEYS[2])
if not expiry then return {} end
table.insert(raw, 1, expiry)
return raw
"""

# Replace a cached step if (and only if) it is cached. ARGV: step index, step JSON
_REPLACE = """
if redis.call('ZCOUNT', KEYS[1], ARGV[1], ARGV[1]) == 0 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
return 1
"""

# Fill a cold or partial key from Postgres rows, keeping the set contiguous. KEYS[2] is the
# tombstone a delete leaves, so a read that raced the delete cannot bring the steps back.
# KEYS: steps, tombstone, expiry. ARGV: expiry (unix ms), steps to keep, expiry (ISO), then
# index/JSON pairs in ascending order
_FILL = """
local key = KEYS[1]
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local lo = tonumber(ARGV[4])
local hi = tonumber(ARGV[#ARGV - 1])
local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
if #first > 0 then
  local cmin = tonumber(first[2])
  local cmax = tonumber(last[2])
  if cmax < lo - 1 or cmin > hi + 1 then return 0 end
end
for i = 4, #ARGV, 2 do
  local index = tonumber(ARGV[i])
  if redis.call('ZCOUNT', key, index, index) == 0 then
    redis.call('ZADD', key, index, ARGV[i + 1])
  end
end
redis.call('ZREMRANGEBYRANK', key, 0, -(tonumber(ARGV[2]) + 1))
local pttl = redis.call('PTTL', key)
if pttl < 0 then
  redis.call('PEXPIREAT', key, ARGV[1])
  redis.call('SET', KEYS[3], ARGV[3], 'PXAT', ARGV[1])
end
return 1
"""


# Remove a popped step. KEYS: steps, tombstone. ARGV: step index, step JSON, tombstone ms.
# The tombstone keeps a read that fetched the step before the pop from filling it back in;
# if the index holds anything but the exact step (a racing append), the copy is dropped.
_POP = """
redis.call('SET', KEYS[2], 1, 'PX', ARGV[3])
if redis.call('ZREM', KEYS[1], ARGV[2]) == 0
   and redis.call('ZCOUNT', KEYS[1], ARGV[1], ARGV[1]) > 0 then
  redis.call('UNLINK', KEYS[1])
end
return 1
"""


def session_key(namespace: str, session_id: str) -> str:
    return f"{_PREFIX}{{{namespace}:{session_id}}}"


def tombstone_key(namespace: str, session_id: str) -> str:
    return f"{_PREFIX}{{{namespace}:{session_id}}}:deleted"


def expiry_key(namespace: str, session_id: str) -> str:
    return f"{_PREFIX}{{{namespace}:{session_id}}}:expires"


def _encode(step: dict[str, Any]) -> str:
    return json.dumps(
        {
            "step_index": step["step_index"],
            "role": step["role"],
            "content": step["content"],
            "summary": step["summary"],
            "metadata": step["metadata"],
            "idempotency_key": step.get("idempotency_key"),
            "created_at": step["created_at"].isoformat(),
            "occurred_at": step["occurred_at"].isoformat() if step.get("occurred_at") else None,
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def _decode(raw: bytes | str, expires_at: datetime) -> dict[str, Any]:
    step: dict[str, Any] = json.loads(raw)
    step["created_at"] = datetime.fromisoformat(step["created_at"])
    # cached before steps had a time of their own: none
    occurred = step.get("occurred_at")
    step["occurred_at"] = datetime.fromisoformat(occurred) if occurred else None
    step["expires_at"] = expires_at
    return step


def _expiry_ms(step: dict[str, Any]) -> int:
    return int(step["expires_at"].timestamp() * 1000)
