"""An MCP server written as raw JSON-RPC over stdio, with no SDK, so that it
can answer the handshake as no SDK would. Its one argument is its mode:

- `no-cache-hints`: answers `server/discover` (MCP 2026-07-28) without the
  result's `ttlMs` and `cacheScope`, as Google's MCP Toolbox 1.12 does, and
  `resources/templates/list` with -32601 (method not found) although it
  declares resources, and `resources/list` without the cache hints.
- `unreadable-discover`: answers `server/discover` with a result that has
  neither `supportedVersions` nor `capabilities`, and `initialize` properly.
- `unreadable`: answers both `server/discover` and `initialize` with results
  that cannot be read.
- `late-discover`: holds its answer to `server/discover` until `initialize`
  comes (as a server slow to start does, past the client's 10 s wait),
  then sends it, and refuses `initialize` as a 2026-07-28 server does.
- `silent`: reads every request and answers none.

In every mode it exits when its input closes. Written for tests/handshakes.rs.
"""
import json
import sys

MODE = sys.argv[1]
TOOL = {
    "name": "echo",
    "description": "Echoes its text",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    # A field of no revision yet: the SDK's tool type has no place for it.
    "x-origin": {"listedBy": "raw"},
}
CAPABILITIES = {"tools": {}, "resources": {}}


def discover():
    if MODE in ("no-cache-hints", "late-discover"):
        return {
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "raw", "version": "1.0.0"}},
            "resultType": "complete",
            "supportedVersions": ["2025-11-25", "2026-07-28"],
            "capabilities": CAPABILITIES,
        }
    return {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}


def initialize(params):
    if MODE == "unreadable":
        return {"protocolVersion": params.get("protocolVersion", "2025-11-25")}
    return {
        "protocolVersion": params.get("protocolVersion", "2025-11-25"),
        "capabilities": CAPABILITIES,
        "serverInfo": {"name": "raw", "version": "1.0.0"},
    }


def modern():
    return {"resultType": "complete"} if MODE in ("no-cache-hints", "late-discover") else {}


def answer(request):
    """A result, or an error object under the key `error`."""
    method = request.get("method")
    params = request.get("params") or {}
    if method == "server/discover":
        if MODE == "no-cache-hints" or MODE.startswith("unreadable"):
            return discover()
        return {"error": {"code": -32601, "message": "Method not found"}}
    if method == "initialize":
        return initialize(params)
    if method == "tools/list":
        return {**modern(), "ttlMs": 0, "cacheScope": "private", "tools": [TOOL]}
    if method == "tools/call":
        text = (params.get("arguments") or {}).get("text", "")
        return {**modern(), "content": [{"type": "text", "text": "echo: " + text}]}
    if method == "resources/list":
        # Without the cache hints the Python SDK defaults.
        return {**modern(), "resources": []}
    if method == "ping":
        return {}
    return {"error": {"code": -32601, "message": "Method not found: " + str(method)}}


held = None
for line in sys.stdin:
    line = line.strip()
    if not line or MODE == "silent":
        continue
    request = json.loads(line)
    if "id" not in request:
        continue
    if MODE == "late-discover" and request["method"] == "server/discover":
        held = request
        continue
    if MODE == "late-discover" and request["method"] == "initialize" and held:
        late = {"jsonrpc": "2.0", "id": held["id"], "result": discover()}
        sys.stdout.write(json.dumps(late) + "\n")
        refusal = {"code": -32022, "message": "connection is serving the 2026-07-28 protocol"}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": refusal}) + "\n")
        sys.stdout.flush()
        continue
    result = answer(request)
    if "error" in result:
        reply = {"jsonrpc": "2.0", "id": request["id"], "error": result["error"]}
    else:
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
