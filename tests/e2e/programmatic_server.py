"""The tools of the recorded programmatic exchanges (tests/fixtures/programmatic),
served on the official `mcp` SDK (2.x, pinned in requirements.txt): the OpenAI
recording's `getInventory` and `getDemand`, whose results are structured (the
SDK declares their output schemas from the return types), and the Anthropic
recording's `rollDie`, whose result is a text. Each `tools/call` it receives is appended as one JSON
line (tool, arguments, the `_meta` idempotency key) to the file named by its
first argument, so a test can check that each call arrived exactly once."""

import json
import sys
from typing import TypedDict

from mcp.server.mcpserver import Context, MCPServer

LOG = sys.argv[1]
IDEMPOTENCY_KEY = "mcp-adapters/idempotency-key"

server = MCPServer("programmatic")


class Inventory(TypedDict):
    sku: str
    availableUnits: int


class Demand(TypedDict):
    sku: str
    requestedUnits: int


def record(ctx: Context, tool: str, arguments: dict) -> None:
    """Appends what this tools/call carried to the log."""
    meta = getattr(ctx.request_context, "meta", None)
    if meta is not None and hasattr(meta, "model_dump"):
        meta = meta.model_dump(mode="json", by_alias=True, exclude_none=True)
    key = (meta or {}).get(IDEMPOTENCY_KEY)
    line = {"tool": tool, "arguments": arguments, "key": key}
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps(line, sort_keys=True) + "\n")


@server.tool(name="getInventory")
def get_inventory(sku: str, ctx: Context) -> Inventory:
    """Get available inventory for a SKU."""
    record(ctx, "getInventory", {"sku": sku})
    return {"sku": sku, "availableUnits": 42}


@server.tool(name="getDemand")
def get_demand(sku: str, ctx: Context) -> Demand:
    """Get requested units for a SKU."""
    record(ctx, "getDemand", {"sku": sku})
    return {"sku": sku, "requestedUnits": 31}


ROLLS = {"player1": [6, 5, 6, 6, 6, 4, 6], "player2": [6, 4, 4, 3, 2, 5, 1]}
ROLLED = {"player1": 0, "player2": 0}


@server.tool(name="rollDie", structured_output=False)
def roll_die(player: str, ctx: Context) -> str:
    """Rolls a die for a player and returns the number (player1's die is loaded)."""
    record(ctx, "rollDie", {"player": player})
    rolls = ROLLS.get(player, [1])
    n = rolls[ROLLED.get(player, 0) % len(rolls)]
    ROLLED[player] = ROLLED.get(player, 0) + 1
    return str(n)


if __name__ == "__main__":
    server.run("stdio")
