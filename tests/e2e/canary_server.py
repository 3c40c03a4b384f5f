"""An MCP server for the egress test (tests/egress.rs), on the official `mcp`
SDK: every channel of a call carries a canary, a distinct random string the
test looks for wherever data leaves the client's process.

At start it writes its environment's `CANARY_ENV` and its own command line
to stderr, as a server that logs its configuration does. `echo` answers with
text, structured content, an image and a result `_meta`, each holding a
canary made at start (the test reads them from the call's record); `ask`
asks the client a question (elicitation) and `sample` asks it for a
completion, and neither answers with what it got; the resource `canary://r`
holds a canary; `crash` writes a canary to stderr and exits mid-call.

Usage: canary_server.py [--http PORT] [anything else, written to stderr]."""

import base64
import os
import secrets
import struct
import sys
import zlib

from pydantic import BaseModel

from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.message import ServerMessageMetadata


def canary(kind: str) -> str:
    return f"canary-{kind}-{secrets.token_hex(12)}"


def png(text: bytes) -> bytes:
    """A 1x1 grey PNG with `text` in a tEXt chunk."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"\x00\x80")
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"tEXt", b"Comment\x00" + text)
        + chunk(b"IDAT", pixels)
        + chunk(b"IEND", b"")
    )


RESULT = canary("result-text")
STRUCTURED = canary("result-structured")
META = canary("result-meta")
IMAGE = base64.b64encode(png(secrets.token_hex(24).encode())).decode()
RESOURCE = canary("resource")
SAMPLING_REQUEST = canary("sampling-request")
CRASH = canary("crash-stderr")

print(
    f"canary server starting: token={os.environ.get('CANARY_ENV', '')} argv={' '.join(sys.argv[1:])}",
    file=sys.stderr,
    flush=True,
)

server = MCPServer("canary")


@server.tool()
def echo(text: str) -> types.CallToolResult:
    """Answers with `text`, and with its own text, structured content, image and _meta."""
    return types.CallToolResult(
        content=[
            types.TextContent(text=f"{text} {RESULT}"),
            types.ImageContent(data=IMAGE, mime_type="image/png"),
        ],
        structured_content={"echo": text, "value": STRUCTURED},
        _meta={"note": META},
    )


class Answer(BaseModel):
    code: str


@server.tool()
async def ask(ctx: Context) -> str:
    """Asks the client for a code; answers whether it got one, not the code."""
    answer = await ctx.elicit("Enter the code", Answer)
    return f"asked: {answer.action}"


@server.tool()
async def sample(ctx: Context) -> str:
    """Asks the client for a completion; answers that it got one, not what it said."""
    params = types.CreateMessageRequestParams.model_validate(
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": f"Summarize {SAMPLING_REQUEST}"}}],
            "maxTokens": 16,
        }
    )
    await ctx.session.send_request(
        request=types.CreateMessageRequest(params=params),
        result_type=types.CreateMessageResult,
        metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
    )
    return "sampled"


@server.resource("canary://r")
def resource() -> str:
    """A resource whose text is a canary."""
    return RESOURCE


@server.tool()
def crash() -> str:
    """Writes a canary to stderr and exits the process in the middle of the call."""
    print(f"fatal: {CRASH}", file=sys.stderr, flush=True)
    os._exit(1)


if __name__ == "__main__":
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run("stdio")
