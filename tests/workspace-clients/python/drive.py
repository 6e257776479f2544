"""Drives the official Python MCP client (`mcp` 2.x, requirements.txt) against MCP endpoints of
the workspace and prints, as JSON, what it observed (python.test.js asserts on it).

    python drive.py URL KEY MODE PLAN     one drive: prints one JSON object
    python drive.py -                     drives at once: reads a JSON array of
                                          {"url", "key", "mode", "plan"} on standard input and
                                          prints a JSON array of what each observed, in order
                                          (one that failed as {"failed": "<why>"})

MODE is the client's `mode`: `legacy`, `auto` or a 2026 revision (`2026-07-28`). PLAN is a JSON
object naming what to do, each entry optional:

    {
      "call":      {"name": ..., "arguments": {...}},   a tool to call
      "progress":  {"name": ..., "arguments": {...}},   a tool to call with a progress callback
      "failing":   {"name": ..., "arguments": {...}},   a tool whose result is an error
      "invalid":   {"name": ..., "arguments": {...}},   a call the service refuses (invalid arguments)
      "unknown":   {"name": ..., "arguments": {...}},   a tool nobody has
      "resource":  "uri",                               a resource to read
      "elicit":    [{"name": ..., "arguments": {...}}], tools that ask for input (answered: accept)
      "refused":   {"key": ..., "granted": {...}, "denied": {...}}
                   a second client with a key granted only `granted`: it calls that, then `denied`
    }

Each operation's outcome is `{"result": ...}` (the result as the client returns it, in JSON) or
`{"error": {"type", "code", "message"}}`; what a drive observed is

    {"protocolVersion", "serverName", "tools": [names], "call", "progress": {..., "progress":
     [[progress, total], ...]}, "failing", "invalid", "unknown", "resource", "elicit": [{...,
     "asked": [messages]}], "refused": {"granted", "denied"}}

The client declares elicitation (it has an elicitation callback), which accepts every request
with its required fields filled in. The key goes in `Authorization: Bearer` through the
client's own HTTP client (`create_mcp_http_client(headers=...)`). Drives at once share one
process (the client's import is most of a short drive's time) and nothing else.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

CANNED = {"name": "Ada", "username": "ada", "email": "ada@example.com", "color": "green"}


def dump(value: Any) -> Any:
    """A result as JSON (camelCase, as on the wire)."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


async def outcome(operation) -> dict[str, Any]:
    """Runs `operation` (a coroutine function); its result or its error."""
    try:
        return {"result": dump(await operation())}
    except MCPError as error:
        return {"error": {"type": type(error).__name__, "code": error.code, "message": error.message}}
    except Exception as error:  # noqa: BLE001 - any failure is an observation
        return {"error": {"type": type(error).__name__, "code": None, "message": str(error)}}


def connect(url: str, mode: str, http_client, asked: list[str]) -> Client:
    """A client of `url` in `mode`, over `http_client` (which carries the key)."""

    async def elicit(_context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        schema = getattr(params, "requested_schema", None) or {}
        properties = schema.get("properties", {})
        content = {
            field: True if properties.get(field, {}).get("type") == "boolean" else CANNED.get(field, "x")
            for field in schema.get("required", [])
        }
        return types.ElicitResult(action="accept", content=content)

    return Client(
        streamable_http_client(url, http_client=http_client),
        mode=mode,
        elicitation_callback=elicit,
        read_timeout_seconds=15,
        client_info=types.Implementation(name="workspace-clients-python", version="1.0.0"),
    )


def http_client_for(key: str):
    return create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})


async def call(client: Client, tool: dict[str, Any], **options):
    return await client.call_tool(tool["name"], tool.get("arguments", {}), **options)


async def drive(url: str, key: str, mode: str, plan: dict[str, Any]) -> dict[str, Any]:
    observed: dict[str, Any] = {}
    asked: list[str] = []
    async with http_client_for(key) as http_client, connect(url, mode, http_client, asked) as client:
        observed["protocolVersion"] = client.protocol_version
        observed["serverName"] = client.server_info.name if client.server_info else None
        observed["tools"] = [tool.name for tool in (await client.list_tools()).tools]
        if "call" in plan:
            observed["call"] = await outcome(lambda: call(client, plan["call"]))
        if "progress" in plan:
            progress: list[list[float | None]] = []

            async def on_progress(value: float, total: float | None, _message: str | None) -> None:
                progress.append([value, total])

            observed["progress"] = await outcome(lambda: call(client, plan["progress"], progress_callback=on_progress))
            observed["progress"]["progress"] = progress
        for name in ("failing", "invalid", "unknown"):
            if name in plan:
                observed[name] = await outcome(lambda tool=plan[name]: call(client, tool))
        if "resource" in plan:
            observed["resource"] = await outcome(lambda: client.read_resource(plan["resource"]))
        if "elicit" in plan:
            observed["elicit"] = []
            for tool in plan["elicit"]:
                asked.clear()
                seen = await outcome(lambda tool=tool: call(client, tool))
                seen["asked"] = list(asked)
                observed["elicit"].append(seen)
    if "refused" in plan:
        refused = plan["refused"]
        async with http_client_for(refused["key"]) as http_client, connect(url, mode, http_client, []) as client:
            observed["refused"] = {
                "granted": await outcome(lambda: call(client, refused["granted"])),
                "denied": await outcome(lambda: call(client, refused["denied"])),
            }
    return observed


async def drive_all(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each job's drive, all at once; a drive that failed as `{"failed": why}`."""
    observed: list[dict[str, Any]] = [{} for _ in jobs]

    async def run(index: int, job: dict[str, Any]) -> None:
        try:
            observed[index] = await drive(job["url"], job["key"], job["mode"], job["plan"])
        except Exception as error:  # noqa: BLE001 - reported in its place, the others go on
            observed[index] = {"failed": f"{type(error).__name__}: {error!r}"}

    async with anyio.create_task_group() as group:
        for index, job in enumerate(jobs):
            group.start_soon(run, index, job)
    return observed


def main() -> None:
    if sys.argv[1:] == ["-"]:
        observed: Any = anyio.run(drive_all, json.load(sys.stdin))
    elif len(sys.argv) == 5:
        url, key, mode, plan = sys.argv[1:]
        observed = anyio.run(drive, url, key, mode, json.loads(plan))
    else:
        sys.exit(__doc__)
    print(json.dumps(observed))


if __name__ == "__main__":
    main()
