"""Whether a call a server is running was cancelled by its client, for the
tests' own servers: the official `mcp` SDK (pinned in requirements.txt) sets
a flag when `notifications/cancelled` names the request, which tells a
client's cancellation from the session ending under the call."""

from mcp.server.mcpserver import Context


def cancel_requested(ctx: Context) -> bool:
    """Whether the client sent `notifications/cancelled` for this request.
    The SDK keeps the flag on the request's dispatch context, which its
    per-request session holds."""
    outbound = getattr(ctx.request_context.session, "_request_outbound", None)
    event = getattr(outbound, "cancel_requested", None)
    return bool(event is not None and event.is_set())
