"""An MCP server on the official SDK's low-level server, over stdio, that
lists the tools of the `tools/list` file named by its first argument in one
page and calls none: what a client pays to list a large server (the memory
bench's live server)."""

import json
import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

with open(sys.argv[1], encoding="utf-8") as listed:
    TOOLS = [types.Tool.model_validate(tool) for tool in json.load(listed)["tools"]]


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


server = Server("many", on_list_tools=list_tools)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
