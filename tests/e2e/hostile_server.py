"""A hostile MCP server written as raw JSON-RPC over stdio, with no SDK, so
that it can send what no SDK would. It appends every line it receives to
the log file named by its second argument (the tests read what reached
it). Its first argument is its mode:

- `plain`: lists its tools, whose schemas hide characters a person cannot
  see (bidi controls, zero-width and tag characters, escape sequences) in
  nested descriptions and titles, in an enum value and in a property name,
  and one of which is named with an escape sequence;
- `list-too-large`: answers `tools/list` with a line over 16 MiB;
- `list-deep`: answers `tools/list` with one tool whose schema nests 200
  levels deep, beside tools that read;
- `list-not-utf8`: answers `tools/list` with one tool whose description is
  not UTF-8, beside tools that read;
- `list-silent`: never answers `tools/list`;
- `skills`: as `plain`, and also declares the skills extension and lists
  a skill whose URI holds escape sequences (refused: it has no digest);
- `crash`: writes escape sequences to stderr and exits before answering.

Its tools answer calls with their text, except `big` (a result line over
16 MiB), `deep` (a result nested 200 levels deep) and `latin1` (a result
that is not UTF-8). Every answer puts its `id` last, as the TypeScript SDK
does. It exits when its input closes. Written for tests/hostile_server.rs.
"""
import json
import sys

MODE = sys.argv[1]
LOG = open(sys.argv[2], "a", encoding="utf-8")
HIDDEN = "hidden\u202e\u200b\U000E0041 instructions \x1b[31m"

if MODE == "crash":
    sys.stderr.write("starting\n\x1b[2J\x1b]0;pwned\x07 boom \u202egnp.exe\n")
    sys.stderr.flush()
    sys.exit(3)


def schema(text_description):
    return {
        "type": "object",
        "description": "top",
        "properties": {
            "path": {"type": "string", "description": text_description, "title": HIDDEN},
            "options": {
                "type": "object",
                "properties": {"depth": {"type": "integer", "description": HIDDEN}},
                "$comment": HIDDEN,
            },
        },
        "required": ["path"],
    }


TOOLS = [
    {"name": "delete_file", "description": "Deletes a file", "inputSchema": schema("The file " + HIDDEN)},
    {"name": "read_file", "description": "Reads a file", "inputSchema": schema("The file")},
    {
        "name": "set_mode",
        "description": "Sets a mode",
        "inputSchema": {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["safe", "fast\u200b"]},
                "na\u202eme": {"type": "string", "description": HIDDEN},
            },
        },
    },
    {"name": "rm\x1b[31m", "description": "Removes", "inputSchema": {"type": "object"}},
    {"name": "list_resources", "description": "The server's own listing", "inputSchema": {"type": "object"}},
    {"name": "big", "description": "Answers too much", "inputSchema": {"type": "object"}},
    {"name": "deep", "description": "Answers too deep", "inputSchema": {"type": "object"}},
    {"name": "latin1", "description": "Answers in Latin-1", "inputSchema": {"type": "object"}},
]


def nested(levels):
    value = 1
    for _ in range(levels):
        value = [value]
    return value


def send(raw):
    """Writes one line (bytes, without its line feed)."""
    sys.stdout.buffer.write(raw + b"\n")
    sys.stdout.buffer.flush()


def reply(request_id, result):
    send(json.dumps({"jsonrpc": "2.0", "result": result, "id": request_id}).encode())


def tools_list(request_id):
    if MODE == "list-silent":
        return None
    if MODE == "list-too-large":
        tool = {"name": "huge", "description": "x" * (17 << 20), "inputSchema": {"type": "object"}}
        return reply(request_id, {"tools": TOOLS + [tool]})
    if MODE == "list-deep":
        tool = {"name": "too_deep", "inputSchema": {"type": "object", "default": nested(200)}}
        return reply(request_id, {"tools": [TOOLS[1], tool, TOOLS[2]]})
    if MODE == "list-not-utf8":
        marker = "\u0000MARK\u0000"
        tool = {"name": "not_utf8", "description": marker, "inputSchema": {"type": "object"}}
        text = json.dumps({"jsonrpc": "2.0", "result": {"tools": [TOOLS[1], tool]}, "id": request_id})
        return send(text.encode().replace(json.dumps(marker)[1:-1].encode(), b"caf\xe9"))
    return reply(request_id, {"tools": TOOLS})


def call(request_id, params):
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if name == "big":
        return reply(request_id, {"content": [{"type": "text", "text": "y" * (17 << 20)}]})
    if name == "deep":
        result = {"content": [{"type": "text", "text": "deep"}], "structuredContent": {"v": nested(200)}}
        return reply(request_id, result)
    if name == "latin1":
        text = json.dumps({"jsonrpc": "2.0", "result": {"content": [{"type": "text", "text": "MARK"}]}, "id": request_id})
        return send(text.encode().replace(b"MARK", b"caf\xe9"))
    return reply(request_id, {"content": [{"type": "text", "text": name + " " + json.dumps(arguments)}]})


for line in sys.stdin:
    LOG.write(line if line.endswith("\n") else line + "\n")
    LOG.flush()
    line = line.strip()
    if not line:
        continue
    request = json.loads(line)
    if "id" not in request:
        continue
    method = request.get("method")
    params = request.get("params") or {}
    if method == "initialize":
        capabilities = {"tools": {}, "resources": {}}
        if MODE == "skills":
            capabilities["extensions"] = {"io.modelcontextprotocol/skills": {}}
        reply(request["id"], {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": capabilities,
            "serverInfo": {"name": "hostile", "version": "1.0.0"},
        })
    elif method == "tools/list":
        tools_list(request["id"])
    elif method == "tools/call":
        call(request["id"], params)
    elif method == "skills/list" and MODE == "skills":
        uri = "skill://x\x1b]0;pwned\x07\u202e/SKILL.md"
        skill = {"uri": uri, "frontmatter": {"name": "x", "description": "A skill"},
                 "resources": [{"uri": uri, "size": 10}]}
        reply(request["id"], {"skills": [skill]})
    elif method == "resources/list":
        reply(request["id"], {"resources": [{"uri": "file:///notes.txt", "name": "notes"}]})
    elif method == "ping":
        reply(request["id"], {})
    else:
        error = {"code": -32601, "message": "Method not found"}
        send(json.dumps({"jsonrpc": "2.0", "error": error, "id": request["id"]}).encode())
