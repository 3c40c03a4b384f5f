"""An MCP server of skills written as raw JSON-RPC over stdio, with no SDK,
so that it can list what an SDK would refuse to build: one good skill and
one whose manifest entry has no digest. Written for tests/e2e.rs."""
import hashlib
import json
import sys

SKILL_MD = "---\nname: good\ndescription: A well-formed skill\n---\nDo the thing.\n"
BAD_MD = "---\nname: bad\ndescription: A skill whose manifest has no digest\n---\n"


def digest(text):
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


SKILLS = [
    {
        "uri": "skill://good/SKILL.md",
        "frontmatter": {"name": "good", "description": "A well-formed skill"},
        "resources": [{"uri": "skill://good/SKILL.md", "digest": digest(SKILL_MD), "size": len(SKILL_MD.encode())}],
    },
    {
        "uri": "skill://bad/SKILL.md",
        "frontmatter": {"name": "bad", "description": "A skill whose manifest has no digest"},
        "resources": [{"uri": "skill://bad/SKILL.md", "size": len(BAD_MD.encode())}],
    },
]
FILES = {"skill://good/SKILL.md": SKILL_MD, "skill://bad/SKILL.md": BAD_MD}


def answer(request):
    method = request.get("method")
    params = request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {"resources": {}, "extensions": {"io.modelcontextprotocol/skills": {}}},
            "serverInfo": {"name": "raw-skills", "version": "1.0.0"},
        }
    if method == "skills/list":
        return {"skills": SKILLS}
    if method == "resources/read":
        uri = params.get("uri")
        return {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": FILES.get(uri, "")}]}
    if method == "ping":
        return {}
    return None


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    request = json.loads(line)
    if "id" not in request:
        continue
    result = answer(request)
    if result is None:
        reply = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "Method not found"}}
    else:
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
