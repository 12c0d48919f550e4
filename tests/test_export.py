"""Export a namespace as JSON lines and restore it elsewhere: no lock-in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import Api
from tests.support.cli import hindsight
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer


def memories(api: Api) -> dict[str, dict[str, Any]]:
    page = api.client.get(f"{api.base}/memories", params={"limit": 1000, "status": "all"}).json()
    return {m["key"]: m for m in page["memories"]}


def comparable(api: Api) -> dict[str, Any]:
    out = {}
    for key, m in memories(api).items():
        history = [
            {k: h[k] for k in ("change", "value", "confidence", "observation_count", "actor")}
            for h in api.history(m["id"])
        ]
        fields = (
            "value",
            "confidence",
            "observation_count",
            "access_count",
            "memory_type",
            "status",
            "verified",
            "permanent",
            "tags",
            "metadata",
            "source",
            "created_at",
        )
        out[key] = {**{f: m[f] for f in fields}, "history": history}
    return out


def fill(api: Api) -> None:
    api.observe(
        {"key": "user.city", "value": "Oslo", "tags": ["home"], "source": "chat-1"},
        {"key": "user.tea", "value": "green", "memory_type": "preference"},
        {"key": "user.name", "value": "Ada", "verified": True, "permanent": True},
        {"key": "user.old", "value": "to archive", "metadata": {"n": 1}},
    )
    api.observe({"key": "user.city", "value": "Oslo"})  # reinforced
    api.observe({"key": "user.tea", "value": "black"})  # superseded
    old = memories(api)["user.old"]
    api.client.patch(f"{api.base}/memories/{old['id']}", json={"status": "archived"})
    api.recall("city")  # an access count, written off the request path
    wait_until(lambda: memories(api)["user.city"]["access_count"] == 1, "the access is counted")
    api.append("s1", "planned the trip", metadata={"step": 1})
    api.append("s1", "booked the train")


def test_export_then_import_reproduces_the_namespace(
    server: ThreadServer, migrated: str, api: Api, tmp_path: Path
) -> None:
    fill(api)
    r = api.client.get(f"{api.base}:export", params={"sessions": "true"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(x) for x in r.text.splitlines()]
    header, end = lines[0], lines[-1]
    assert header["format"] == "hindsight-export" and header["version"] == 2
    assert header["namespace"] == api.ns
    assert end == {"type": "end", "memories": 4, "sessions": 1, "steps": 2}
    assert [x["type"] for x in lines[1:-1]] == ["memory"] * 4 + ["session"]

    dump = tmp_path / "export.jsonl"
    dump.write_text(r.text)
    target = Api(api.client, api.ns + "-copy")
    done = hindsight("import", str(dump), "--namespace", target.ns, database_url=migrated)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "restored": target.ns,
        "memories": 4,
        "sessions": 1,
        "steps": 2,
        "redacted": {},
    }

    assert comparable(target) == comparable(api)
    assert [s["content"] for s in target.steps("s1")] == ["planned the trip", "booked the train"]
    assert target.steps("s1")[0]["metadata"] == {"step": 1}
    # it is a working namespace: a re-observation reinforces (before any recall of it, which
    # would make this key's next store of it an echo)
    (again,) = target.observe({"key": "user.city", "value": "Oslo"})
    assert again["outcome"] == "reinforced" and again["observation_count"] == 3
    assert target.recall("city")["results"][0]["value"] == "Oslo"

    # the CLI exports the same lines as the API
    cli = hindsight("export", "--namespace", api.ns, "--sessions", database_url=migrated)
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.splitlines()[1:] == r.text.splitlines()[1:]


def test_restore_refuses_a_used_namespace_or_a_cut_file(
    server: ThreadServer, migrated: str, api: Api, tmp_path: Path
) -> None:
    fill(api)
    text = api.client.get(f"{api.base}:export").text
    dump = tmp_path / "export.jsonl"
    dump.write_text(text)
    taken = hindsight("import", str(dump), "--namespace", api.ns, database_url=migrated)
    assert taken.returncode != 0 and "not empty" in taken.stderr

    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(text.splitlines()[:3]) + "\n")
    target = Api(api.client, api.ns + "-cut")
    done = hindsight("import", str(cut), "--namespace", target.ns, database_url=migrated)
    assert done.returncode != 0 and "cut short" in done.stderr
    assert memories(target) == {}

    future = tmp_path / "future.jsonl"
    future.write_text(text.replace('"version":2', '"version":99', 1))
    done = hindsight("import", str(future), "--namespace", target.ns, database_url=migrated)
    assert done.returncode != 0 and "version 99" in done.stderr


SECRET = "sk-proj-" + "Zq7XwV3uT9sR1pO5nM2lK8jH4gF6dS0a"


def test_a_restore_follows_the_target_namespaces_redaction(
    server: ThreadServer, migrated: str, api: Api, tmp_path: Path
) -> None:
    """An export of a namespace that stored secrets (redaction off) does not bring them
    into one that redacts, nor through an old value in the history; one that refuses them
    refuses the whole file."""
    api.client.put(f"{api.base}/policy", json={"redaction": {"mode": "off"}})
    api.observe({"key": "bot.key", "value": f"old {SECRET}"})
    api.observe({"key": "bot.key", "value": "rotated, see the vault"})  # SECRET in history
    api.append("s1", f"exported {SECRET}")
    dump = tmp_path / "export.jsonl"
    dump.write_text(api.client.get(f"{api.base}:export", params={"sessions": "true"}).text)
    assert SECRET in dump.read_text()

    target = Api(api.client, api.ns + "-clean")
    done = hindsight("import", str(dump), "--namespace", target.ns, database_url=migrated)
    assert done.returncode == 0, done.stderr
    # twice in the history (created with it, superseded from it), once in the step
    assert json.loads(done.stdout)["redacted"] == {"openai_key": 3}
    restored = memories(target)["bot.key"]
    assert restored["value"] == "rotated, see the vault"
    history = api.client.get(f"{target.base}/memories/{restored['id']}/history").text
    assert SECRET not in history and "[REDACTED:openai_key]" in history
    assert target.steps("s1")[0]["content"] == "exported [REDACTED:openai_key]"

    strict = Api(api.client, api.ns + "-strict")
    strict.client.put(f"{strict.base}/policy", json={"redaction": {"mode": "reject"}})
    done = hindsight("import", str(dump), "--namespace", strict.ns, database_url=migrated)
    assert done.returncode != 0 and "history.new_value" in done.stderr
    assert SECRET not in done.stderr and memories(strict) == {}
