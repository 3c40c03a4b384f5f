"""An MCP server for the reconnection tests, on the official `mcp` SDK
(pinned in requirements.txt): every call it receives is appended to the log
file named by $SOAK_LOG before the tool works, so a test can tell which calls
reached it and how often; its pid is logged when it starts, so a test can kill
it. With $SOAK_REFUSE naming a file that exists, it exits at once (a server
that does not come back)."""

import asyncio
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

LOG = os.environ["SOAK_LOG"]


def log(line: str) -> None:
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()


refuse = os.environ.get("SOAK_REFUSE")
if refuse and os.path.exists(refuse):
    print("refusing to start", file=sys.stderr)
    sys.exit(3)

server = MCPServer("soak")
log(f"start {os.getpid()}")


@server.tool()
async def work(id: str, ms: int) -> str:
    """Works for `ms` milliseconds; changes things, so it must not run twice."""
    log(f"work {id}")
    await asyncio.sleep(ms / 1000)
    return f"worked {id}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def peek(id: str, ms: int) -> str:
    """Reads for `ms` milliseconds; safe to repeat."""
    log(f"peek {id}")
    await asyncio.sleep(ms / 1000)
    return f"peeked {id}"


if __name__ == "__main__":
    server.run("stdio")
