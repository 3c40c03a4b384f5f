"""A small MCP server for the end-to-end tests: what the third-party servers
do not cover (audio, a slow tool that notices cancellation, progress, a crash,
request _meta, a sampling request that carries a trace context)."""

import asyncio
import base64
import json
import os
import struct

from mcp import types
from mcp.server.mcpserver import Audio, Context, MCPServer
from mcp.shared.message import ServerMessageMetadata

from cancellation import cancel_requested

server = MCPServer("lab")


def _wav() -> bytes:
    """A deterministic 8-sample, 8 kHz, 8-bit mono WAV."""
    samples = bytes([128, 160, 192, 160, 128, 96, 64, 96])
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 8000, 1, 8)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(samples)) + samples
    return b"RIFF" + struct.pack("<I", len(body)) + body


@server.tool()
def beep() -> Audio:
    """Returns a short beep as WAV audio."""
    return Audio(data=_wav(), format="wav")


@server.tool()
async def slow(seconds: float, marker: str, ctx: Context) -> str:
    """Sleeps; writes `cancelled` to the file `marker` if the client cancels the
    call (`notifications/cancelled`), `ended` if the session ends under it."""
    try:
        await asyncio.sleep(seconds)
    except BaseException:
        with open(marker, "w", encoding="utf-8") as f:
            f.write("cancelled" if cancel_requested(ctx) else "ended")
        raise
    return f"slept {seconds} s"


@server.tool()
async def count(n: int, ctx: Context) -> str:
    """Counts to n, reporting progress at each step."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i} of {n}")
        await asyncio.sleep(0.01)
    return f"counted to {n}"


@server.tool()
def crash() -> str:
    """Exits the server process in the middle of the call."""
    os._exit(1)


@server.tool()
def meta(ctx: Context) -> str:
    """Returns the request's _meta as JSON."""
    meta = getattr(ctx.request_context, "meta", None)
    if meta is not None and hasattr(meta, "model_dump"):
        meta = meta.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps(meta, sort_keys=True, default=str)


@server.tool()
async def sample_in_trace(traceparent: str, ctx: Context) -> str:
    """Asks the client for a completion, putting `traceparent` in the request's _meta (the SDK
    sends the trace context its handler runs in instead, when it has one)."""
    params = types.CreateMessageRequestParams.model_validate(
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello."}}],
            "maxTokens": 16,
            "_meta": {"traceparent": traceparent},
        }
    )
    result = await ctx.session.send_request(
        request=types.CreateMessageRequest(params=params),
        result_type=types.CreateMessageResult,
        metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
    )
    return json.dumps(result.model_dump(by_alias=True, exclude_none=True, mode="json"), sort_keys=True)


if __name__ == "__main__":
    server.run("stdio")
