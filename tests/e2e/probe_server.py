"""A probe MCP server for the tests of suspended and interrupted turns, on the
official `mcp` SDK (2.x, pinned in requirements.txt): it appends one JSON line
per `tools/call` it receives to the file named by its first argument (tool,
arguments, echoed request state, the `_meta` idempotency key), so a test can
check each call arrived exactly once however many processes the turn took,
and one line `{"cancelled": ...}` for each call the client cancelled
(`notifications/cancelled`).

Its request states are sealed under a key every instance shares (as a
deployment with several instances must configure the SDK), so a call that
asked for input in one server process goes on in another."""

import json
import os
import sys

import anyio

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult

from cancellation import cancel_requested

LOG = sys.argv[1]
IDEMPOTENCY_KEY = "mcp-adapters/idempotency-key"
# A test key, shared by every instance of this probe.
SHARED_KEY = "probe-request-state-key-for-tests-only-0123456789"

server = MCPServer("probe", request_state_security=RequestStateSecurity(keys=[SHARED_KEY]))


def record(ctx: Context, tool: str, arguments: dict) -> None:
    """Appends what this tools/call carried to the log."""
    meta = getattr(ctx.request_context, "meta", None)
    if meta is not None and hasattr(meta, "model_dump"):
        meta = meta.model_dump(mode="json", by_alias=True, exclude_none=True)
    key = (meta or {}).get(IDEMPOTENCY_KEY)
    line = {"tool": tool, "arguments": arguments, "state": ctx.request_state, "key": key}
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps(line, sort_keys=True) + "\n")


def ask(message: str, field: str, kind: str) -> ElicitRequest:
    """A form elicitation with one required field."""
    return ElicitRequest(
        params=ElicitRequestFormParams(
            message=message,
            requested_schema={"type": "object", "properties": {field: {"type": kind}}, "required": [field]},
        )
    )


def accepted(ctx: Context, key: str) -> dict | None:
    answer = (ctx.input_responses or {}).get(key)
    if isinstance(answer, ElicitResult) and answer.action == "accept" and answer.content is not None:
        return answer.content
    return None


@server.tool()
def append(text: str, ctx: Context) -> str:
    """Appends a line to the journal."""
    record(ctx, "append", {"text": text})
    return f"appended {text}"


@server.tool()
def publish(text: str, ctx: Context) -> str:
    """Publishes a line (a call a policy asks about)."""
    record(ctx, "publish", {"text": text})
    return f"published {text}"


@server.tool()
def file_note(tenant: str, text: str, ctx: Context) -> str:
    """Files a note for a tenant (an argument the application binds); the
    answer does not echo the tenant."""
    record(ctx, "file_note", {"tenant": tenant, "text": text})
    return f"filed {text}"


@server.tool()
async def transfer(amount: int, to: str, ctx: Context) -> str | InputRequiredResult:
    """Transfers money: asks to confirm, then for a code (two rounds)."""
    record(ctx, "transfer", {"amount": amount, "to": to})
    state = ctx.request_state
    if state is None:
        return InputRequiredResult(
            input_requests={"confirm": ask(f"Send {amount} to {to}?", "confirm", "boolean")},
            request_state="confirm",
        )
    if state == "confirm":
        content = accepted(ctx, "confirm")
        if not content or not content.get("confirm"):
            return "Transfer cancelled"
        return InputRequiredResult(
            input_requests={"code": ask("Enter the 4-digit code", "code", "string")},
            request_state="code",
        )
    content = accepted(ctx, "code")
    if not content:
        return "Transfer cancelled at the code"
    return f"Sent {amount} to {to} (code {content['code']})"


@server.tool()
async def hold(text: str, release: str, ctx: Context) -> str:
    """Answers once the file `release` exists (a test holds the call in flight)."""
    record(ctx, "hold", {"text": text, "release": release})
    try:
        while not os.path.exists(release):
            await anyio.sleep(0.01)
    except BaseException:
        if cancel_requested(ctx):
            with open(LOG, "a", encoding="utf-8") as log:
                log.write(json.dumps({"cancelled": text}) + "\n")
        raise
    return f"held {text}"


if __name__ == "__main__":
    server.run("stdio")
