"""An MCP server for the end-to-end tests of MCP 2026-07-28, on the official
`mcp` SDK (2.x, pinned in requirements.txt): tools that ask for input with
multi-round-trip requests (`input_required` results, the SDK's
`InputRequiredResult`), and a tool list that changes while the session runs
(`notifications/tools/list_changed`).

The input tools are written against a 2026-07-28 session: on an earlier
revision the SDK refuses an `InputRequiredResult`."""

from typing import Annotated

from mcp.server.mcpserver import Context, ListRoots, MCPServer, Resolve, Sample
from mcp.types import (
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    ListRootsResult,
    SamplingMessage,
    TextContent,
)

server = MCPServer("input")


def ask(message: str, field: str, kind: str) -> ElicitRequest:
    """A form elicitation with one required field."""
    return ElicitRequest(
        params=ElicitRequestFormParams(
            message=message,
            requested_schema={
                "type": "object",
                "properties": {field: {"type": kind}},
                "required": [field],
            },
        )
    )


def accepted(ctx: Context, key: str) -> dict | None:
    """The content of the accepted answer to `key`, if any."""
    answer = (ctx.input_responses or {}).get(key)
    if isinstance(answer, ElicitResult) and answer.action == "accept" and answer.content is not None:
        return answer.content
    return None


@server.tool()
async def delete_note(name: str, ctx: Context) -> str | InputRequiredResult:
    """Deletes a note after the user confirms, once."""
    if ctx.input_responses is None:
        return InputRequiredResult(input_requests={"confirm": ask(f"Delete note {name!r}?", "confirm", "boolean")})
    content = accepted(ctx, "confirm")
    if content and content.get("confirm"):
        return f"Deleted note {name}"
    return f"Kept note {name}"


@server.tool()
async def transfer(amount: int, to: str, ctx: Context) -> str | InputRequiredResult:
    """Transfers money: asks to confirm, then for a code (two rounds)."""
    state = ctx.request_state  # the SDK seals it on the wire and checks the echo
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


def ask_summary(topic: str) -> Sample:
    """Asks the client's model for a summary of `topic`."""
    message = SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize the notes about {topic}"))
    return Sample([message], max_tokens=100, system_prompt="You summarize notes.")


def ask_roots() -> ListRoots:
    """Asks the client for its roots."""
    return ListRoots()


@server.tool()
async def summarize_notes(
    topic: str,
    summary: Annotated[CreateMessageResult, Resolve(ask_summary)],
    roots: Annotated[ListRootsResult, Resolve(ask_roots)],
) -> str:
    """Summarizes the notes about a topic with the client's model, under the client's roots.

    The SDK's resolvers ask in the session's own way: in one input_required
    round on 2026-07-28, as requests sent during the call on earlier revisions."""
    content = summary.content[0] if isinstance(summary.content, list) else summary.content
    text = getattr(content, "text", "?")
    where = ", ".join(str(root.uri) for root in roots.roots)
    return f"{text} (by {summary.model}, {summary.stop_reason}); roots: {where}"


def extra_tool(text: str) -> str:
    """Upper-cases the text; listed only after toggle_extra(enable=true)."""
    return text.upper()


@server.tool()
async def toggle_extra(enable: bool, ctx: Context) -> str:
    """Adds or removes the tool `extra_tool`, and announces the change."""
    names = {tool.name for tool in await server.list_tools()}
    if enable and "extra_tool" not in names:
        server.add_tool(extra_tool)
    elif not enable and "extra_tool" in names:
        server.remove_tool("extra_tool")
    await ctx.notify_tools_changed()  # 2026-07-28: on subscriptions/listen streams
    await ctx.session.send_tool_list_changed()  # earlier revisions: unsolicited
    return f"extra_tool {'on' if enable else 'off'}"


if __name__ == "__main__":
    server.run("stdio")
