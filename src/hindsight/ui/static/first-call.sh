KEY=$(cat "${HINDSIGHT_DATA_DIR:-$HOME/.local/share/hindsight}/admin-api-key")
H="Authorization: Bearer $KEY"; J="Content-Type: application/json"
B=http://127.0.0.1:${HINDSIGHT_PORT:-8080}/v1/namespaces/alice   # one agent, user or tenant

# Observe two memories: one result per item, in order
curl -s -X POST $B/memories:batch -H "$H" -H "$J" -d '{"memories": [
  {"key": "user.favorite_color", "value": "blue", "memory_type": "preference", "source": "chat"},
  {"key": "user.city", "value": "Oslo"}]}' | jq -c '.results[] | {key, outcome, confidence}'
#> {"key":"user.favorite_color","outcome":"created","confidence":0.5}
#> {"key":"user.city","outcome":"created","confidence":0.5}
