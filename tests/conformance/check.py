#!/usr/bin/env python3
"""Validate JSON emitted by mcp-adapters against the providers' official SDK types
(anthropic, openai, google-genai, botocore, mistralai, cohere).

Input: a JSON file
    {"items": [{"label": "...", "check": "<provider>/<kind>", "value": {...}}]}
An item whose provider is a variant that is not listed in CHECKS (for example an
OpenAI-compatible gateway) names the SDK type it must match with an extra key
"sdk_type": either a canonical check string ("openai-chat/tool") or an SDK type
name from SDK_TYPES ("openai.types.chat.ChatCompletionFunctionToolParam").

Output: one line per failing item ("FAIL <label> [<check>]: <error>"), then
"N passed, N failed". Exit code 0 when all pass, 1 when any fails, 2 on a
harness error (bad input, unknown check, SDK type this script cannot walk).

Unknown keys are always an error, at every depth, even where the SDK itself
would ignore them (TypedDicts are not checked by pydantic, and some pydantic
models default to extra="ignore"). Where an SDK type deliberately allows extra
keys (Anthropic's input_schema, which is a JSON Schema), they stay allowed.

Usage:
    python check.py ITEMS.json
    python check.py --self-test       # runs test_check.py next to this file
    python check.py --list            # prints the supported check strings
"""

from __future__ import annotations

import base64
import collections.abc
import enum
import importlib
import json
import re
import sys
import types
import typing
import warnings
from pathlib import Path

import typing_extensions as te


class HarnessError(Exception):
    """The harness cannot do its job: reported with exit code 2."""


# SDK type name -> (validator kind, module or service, attribute or shape).
SDK_TYPES: dict[str, tuple[str, str, str]] = {
    # Provider-hosted MCP: a hosted server's declaration and an approval answer.
    "openai.types.responses.tool_param.Mcp": ("typeddict", "openai.types.responses.tool_param", "Mcp"),
    "openai.types.responses.response_input_item_param.McpApprovalResponse": (
        "typeddict",
        "openai.types.responses.response_input_item_param",
        "McpApprovalResponse",
    ),
    "google.genai.interactions.MCPServer": ("pydantic", "google.genai._gaos.types.interactions", "MCPServer"),
    "anthropic.types.beta.BetaMCPToolsetParam": ("typeddict", "anthropic.types.beta", "BetaMCPToolsetParam"),
    "anthropic.types.beta.BetaRequestMCPServerURLDefinitionParam": (
        "typeddict",
        "anthropic.types.beta",
        "BetaRequestMCPServerURLDefinitionParam",
    ),
    "anthropic.types.ToolParam": ("typeddict", "anthropic.types", "ToolParam"),
    # Programmatic tool calling: the tools that let the model write programs.
    "openai.types.responses.tool_param.ProgrammaticToolCalling": (
        "typeddict",
        "openai.types.responses.tool_param",
        "ProgrammaticToolCalling",
    ),
    "anthropic.types.CodeExecutionTool20260120Param": ("typeddict", "anthropic.types", "CodeExecutionTool20260120Param"),
    "anthropic.types.ToolResultBlockParam": ("typeddict", "anthropic.types", "ToolResultBlockParam"),
    "openai.types.chat.ChatCompletionFunctionToolParam": (
        "typeddict",
        "openai.types.chat",
        "ChatCompletionFunctionToolParam",
    ),
    "openai.types.chat.ChatCompletionToolMessageParam": (
        "typeddict",
        "openai.types.chat",
        "ChatCompletionToolMessageParam",
    ),
    "openai.types.responses.FunctionToolParam": ("typeddict", "openai.types.responses", "FunctionToolParam"),
    "openai.types.responses.response_input_item_param.FunctionCallOutput": (
        "typeddict",
        "openai.types.responses.response_input_item_param",
        "FunctionCallOutput",
    ),
    # Deferred loading and tool search: the search tools, namespaces and search answers.
    "anthropic.types.ToolSearchToolBm25_20251119Param": ("typeddict", "anthropic.types", "ToolSearchToolBm25_20251119Param"),
    "anthropic.types.ToolSearchToolRegex_20251119Param": ("typeddict", "anthropic.types", "ToolSearchToolRegex20251119Param"),
    "openai.types.responses.NamespaceToolParam": ("typeddict", "openai.types.responses", "NamespaceToolParam"),
    "openai.types.responses.ToolSearchToolParam": ("typeddict", "openai.types.responses", "ToolSearchToolParam"),
    "openai.types.responses.ResponseToolSearchOutputItemParamParam": (
        "typeddict",
        "openai.types.responses",
        "ResponseToolSearchOutputItemParamParam",
    ),
    "google.genai.types.FunctionDeclaration": ("pydantic", "google.genai.types", "FunctionDeclaration"),
    "google.genai.types.Part": ("pydantic", "google.genai.types", "Part"),
    "botocore:bedrock-runtime:Tool": ("botocore", "bedrock-runtime", "Tool"),
    "botocore:bedrock-runtime:ToolResultBlock": ("botocore", "bedrock-runtime", "ToolResultBlock"),
    "mistralai.client.models.Tool": ("pydantic", "mistralai.client.models", "Tool"),
    "mistralai.client.models.ToolMessage": ("pydantic", "mistralai.client.models", "ToolMessage"),
    "openai.types.chat.ChatCompletionUserMessageParam": (
        "typeddict",
        "openai.types.chat",
        "ChatCompletionUserMessageParam",
    ),
    "google.genai.types.Content": ("pydantic", "google.genai.types", "Content"),
    "botocore:bedrock-runtime:Message": ("botocore", "bedrock-runtime", "Message"),
    "mistralai.client.models.UserMessage": ("pydantic", "mistralai.client.models", "UserMessage"),
    # Sampling request bodies: each SDK's request-params type for a non-streamed call.
    "anthropic.types.message_create_params.MessageCreateParamsNonStreaming": (
        "typeddict",
        "anthropic.types.message_create_params",
        "MessageCreateParamsNonStreaming",
    ),
    "openai.types.chat.completion_create_params.CompletionCreateParamsNonStreaming": (
        "typeddict",
        "openai.types.chat.completion_create_params",
        "CompletionCreateParamsNonStreaming",
    ),
    "openai.types.responses.response_create_params.ResponseCreateParamsNonStreaming": (
        "typeddict",
        "openai.types.responses.response_create_params",
        "ResponseCreateParamsNonStreaming",
    ),
    "mistralai.client.models.ChatCompletionRequest": ("pydantic", "mistralai.client.models", "ChatCompletionRequest"),
    # The Converse request's JSON body: its members bound to the URI or headers
    # (modelId) are not in the body and may not appear there.
    "botocore:bedrock-runtime:ConverseRequest#body": ("botocore-body", "bedrock-runtime", "ConverseRequest"),
    # generateContent's REST body (GenerateContentRequest), each field checked
    # against the google-genai type the SDK sends it as.
    "google.genai:GenerateContentRequest": ("gemini-body", "google.genai.types", ""),
    # Cohere v2 chat (cohere-python): the tool, the tool message, and the request body, which the
    # SDK has no type for: the keyword parameters of V2Client.chat, each checked as its annotation.
    "cohere.types.ToolV2": ("pydantic", "cohere.types", "ToolV2"),
    "cohere.types.ToolChatMessageV2": ("pydantic", "cohere.types", "ToolChatMessageV2"),
    "cohere.types.ChatMessageV2": ("adapter", "cohere.types", "ChatMessageV2"),
    "cohere:V2Client.chat": ("signature", "cohere.v2.client", "V2Client.chat"),
    # The Gemini Interactions API (google-genai's interactions types).
    "google.genai.interactions.Function": ("pydantic", "google.genai._gaos.types.interactions", "Function"),
    "google.genai.interactions.FunctionResultStep": (
        "pydantic",
        "google.genai._gaos.types.interactions",
        "FunctionResultStep",
    ),
    "google.genai.interactions.Step": ("adapter", "google.genai._gaos.types.interactions", "Step"),
    "google.genai.interactions.CreateModelInteraction": (
        "pydantic",
        "google.genai._gaos.types.interactions",
        "CreateModelInteraction",
    ),
}

# generateContent's body fields (ai.google.dev/api/generate-content, request
# body) and the google-genai type of each: "list" holds a list of them.
GEMINI_BODY: dict[str, tuple[str, str]] = {
    "contents": ("list", "Content"),
    "systemInstruction": ("one", "Content"),
    "generationConfig": ("one", "GenerationConfig"),
    "tools": ("list", "Tool"),
    "toolConfig": ("one", "ToolConfig"),
    "safetySettings": ("list", "SafetySetting"),
}

# "<provider>/<kind>" -> (SDK type name, dotted key paths that must be present
# beyond what the SDK type requires: google-genai declares every field
# Optional, but the API needs a name and a response object).
CHECKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "anthropic/tool": ("anthropic.types.ToolParam", ()),
    "anthropic/result": ("anthropic.types.ToolResultBlockParam", ()),
    "openai-chat/tool": ("openai.types.chat.ChatCompletionFunctionToolParam", ()),
    "openai-chat/result": ("openai.types.chat.ChatCompletionToolMessageParam", ()),
    "openai-responses/tool": ("openai.types.responses.FunctionToolParam", ()),
    "openai-responses/result": ("openai.types.responses.response_input_item_param.FunctionCallOutput", ()),
    "anthropic/search_tool_bm25": ("anthropic.types.ToolSearchToolBm25_20251119Param", ()),
    "anthropic/search_tool_regex": ("anthropic.types.ToolSearchToolRegex_20251119Param", ()),
    "openai-responses/hosted_tool": ("openai.types.responses.tool_param.Mcp", ()),
    "openai-responses/hosted_approval": ("openai.types.responses.response_input_item_param.McpApprovalResponse", ()),
    "anthropic/hosted_toolset": ("anthropic.types.beta.BetaMCPToolsetParam", ()),
    "gemini-interactions/hosted_tool": ("google.genai.interactions.MCPServer", ("type",)),
    "anthropic/hosted_server": ("anthropic.types.beta.BetaRequestMCPServerURLDefinitionParam", ()),
    "openai-responses/namespace": ("openai.types.responses.NamespaceToolParam", ()),
    "openai-responses/programmatic_tool": ("openai.types.responses.tool_param.ProgrammaticToolCalling", ()),
    "anthropic/code_execution_tool": ("anthropic.types.CodeExecutionTool20260120Param", ()),
    "openai-responses/tool_search": ("openai.types.responses.ToolSearchToolParam", ()),
    "openai-responses/search_output": ("openai.types.responses.ResponseToolSearchOutputItemParamParam", ()),
    "gemini/tool": ("google.genai.types.FunctionDeclaration", ("name",)),
    # A Part is a union-like bag of optional fields; a tool result is the one
    # that carries functionResponse.
    "gemini/result": (
        "google.genai.types.Part",
        ("functionResponse", "functionResponse.name", "functionResponse.response"),
    ),
    "bedrock-converse/tool": ("botocore:bedrock-runtime:Tool", ()),
    "bedrock-converse/result": ("botocore:bedrock-runtime:ToolResultBlock", ()),
    "mistral/tool": ("mistralai.client.models.Tool", ()),
    "mistral/result": ("mistralai.client.models.ToolMessage", ()),
    # Media sent after a turn's answers: OpenAI Chat and Mistral as one user
    # message after the tool messages, Gemini as one user Content after the
    # functionResponse one; Bedrock as blocks after the toolResult blocks of
    # the same user message, checked as that whole message.
    "openai-chat/follow_up": ("openai.types.chat.ChatCompletionUserMessageParam", ()),
    "mistral/follow_up": ("mistralai.client.models.UserMessage", ()),
    "gemini/follow_up": ("google.genai.types.Content", ("role", "parts")),
    "bedrock-converse/turn": ("botocore:bedrock-runtime:Message", ()),
    # Sampling request bodies (sampling/createMessage converted); Ollama has no
    # typed SDK here.
    "anthropic/sampling_request": ("anthropic.types.message_create_params.MessageCreateParamsNonStreaming", ()),
    "openai-chat/sampling_request": ("openai.types.chat.completion_create_params.CompletionCreateParamsNonStreaming", ()),
    "openai-responses/sampling_request": (
        "openai.types.responses.response_create_params.ResponseCreateParamsNonStreaming",
        (),
    ),
    "gemini/sampling_request": ("google.genai:GenerateContentRequest", ()),
    "bedrock-converse/sampling_request": ("botocore:bedrock-runtime:ConverseRequest#body", ()),
    "mistral/sampling_request": ("mistralai.client.models.ChatCompletionRequest", ()),
    "cohere/tool": ("cohere.types.ToolV2", ("function", "function.name", "function.parameters")),
    "cohere/result": ("cohere.types.ToolChatMessageV2", ()),
    # An assistant message as the stream assembles it (what the next request sends back).
    "cohere/message": ("cohere.types.ChatMessageV2", ()),
    "cohere/sampling_request": ("cohere:V2Client.chat", ()),
    "gemini-interactions/tool": ("google.genai.interactions.Function", ("name",)),
    "gemini-interactions/result": ("google.genai.interactions.FunctionResultStep", ()),
    "gemini-interactions/step": ("google.genai.interactions.Step", ()),
    "gemini-interactions/sampling_request": ("google.genai.interactions.CreateModelInteraction", ("model",)),
}

MAX_ERRORS_PER_ITEM = 6


def fmt_path(path: tuple) -> str:
    out = "$"
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _depth(err: str) -> int:
    """Depth of the path an error message starts with."""
    where = err.split(": ", 1)[0]
    return where.count(".") + where.count("[")


def json_type(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


# ---------------------------------------------------------------------------
# TypedDict walker (anthropic, openai)
# ---------------------------------------------------------------------------

_td_cache: dict[type, tuple[dict, bool]] = {}

_SEQUENCE_ORIGINS = {
    list,
    collections.abc.Iterable,
    collections.abc.Sequence,
    collections.abc.Collection,
    collections.abc.MutableSequence,
}
_MAPPING_ORIGINS = {dict, collections.abc.Mapping, collections.abc.MutableMapping}


def _strip_qualifiers(tp):
    """Returns (inner type, 'required'|'not_required'|None, wire alias or None)."""
    req = None
    alias = None
    while True:
        origin = typing.get_origin(tp)
        if origin in (te.Required, getattr(typing, "Required", te.Required)):
            req = "required"
            tp = typing.get_args(tp)[0]
        elif origin in (te.NotRequired, getattr(typing, "NotRequired", te.NotRequired)):
            req = "not_required"
            tp = typing.get_args(tp)[0]
        elif origin in (te.ReadOnly,):
            tp = typing.get_args(tp)[0]
        elif origin is te.Annotated or origin is typing.Annotated:
            for meta in tp.__metadata__:
                a = getattr(meta, "alias", None)
                if isinstance(a, str):
                    alias = a
            tp = tp.__origin__
        else:
            return tp, req, alias


def typeddict_fields(td) -> tuple[dict[str, tuple[object, bool]], bool]:
    """Maps wire key -> (type, required) and tells whether extra keys are allowed."""
    if td in _td_cache:
        return _td_cache[td]
    try:
        hints = typing.get_type_hints(td, include_extras=True)
    except Exception as e:  # noqa: BLE001
        raise HarnessError(f"cannot resolve annotations of {td.__module__}.{td.__qualname__}: {e}") from e

    # `total` belongs to the class that declared each key; string annotations
    # (from __future__ import annotations) leave __required_keys__ unreliable,
    # so work it out from the declaring classes.
    total_of: dict[str, bool] = {}

    def visit(c):
        bases = [b for b in getattr(c, "__orig_bases__", ()) if te.is_typeddict(b)]
        inherited = set()
        for b in bases:
            visit(b)
            inherited |= set(b.__annotations__)
        for k in c.__annotations__:
            if k not in inherited:
                total_of[k] = getattr(c, "__total__", True)

    visit(td)
    fields = {}
    for key, tp in hints.items():
        inner, req, alias = _strip_qualifiers(tp)
        required = total_of.get(key, True) if req is None else req == "required"
        fields[alias or key] = (inner, required)
    cfg = getattr(td, "__pydantic_config__", None) or {}
    allow_extra = cfg.get("extra") == "allow"
    _td_cache[td] = (fields, allow_extra)
    return fields, allow_extra


def check_annotation(value, tp, path: tuple) -> list[str]:
    """Returns a list of "path: message" errors; empty means the value matches."""
    tp, _, _ = _strip_qualifiers(tp)
    if tp is typing.Any or tp is object:
        return []
    if tp is None or tp is type(None):
        return [] if value is None else [f"{fmt_path(path)}: expected null, got {json_type(value)}"]
    # PEP 695 / typing_extensions.TypeAliasType
    if isinstance(tp, getattr(te, "TypeAliasType", ())) or type(tp).__name__ == "TypeAliasType":
        return check_annotation(value, tp.__value__, path)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Literal or origin is te.Literal:
        for a in args:
            if value == a and type(value) is type(a):
                return []
            if isinstance(a, enum.Enum) and value == a.value:
                return []
        return [f"{fmt_path(path)}: expected one of {list(args)!r}, got {value!r}"]
    if origin is typing.Union or origin is getattr(types, "UnionType", None):
        errs_by_member = []
        for a in args:
            errs = check_annotation(value, a, path)
            if not errs:
                return []
            errs_by_member.append(errs)
        # Report the member that got furthest (deepest error path), which is
        # usually the one the emitter meant.
        best = max(errs_by_member, key=lambda es: max(_depth(e) for e in es))
        if max(_depth(e) for e in best) <= len(path):
            firsts = "; ".join(es[0].split(": ", 1)[1] for es in errs_by_member)
            return [f"{fmt_path(path)}: matches no member of the union ({firsts})"]
        return best
    if origin in _MAPPING_ORIGINS or tp in (dict, typing.Dict):
        if not isinstance(value, dict):
            return [f"{fmt_path(path)}: expected object, got {json_type(value)}"]
        if not args:
            return []
        errs = []
        for k, v in value.items():
            errs += check_annotation(k, args[0], path + (f"<key {k!r}>",))
            errs += check_annotation(v, args[1], path + (k,))
        return errs
    if origin in _SEQUENCE_ORIGINS or tp in (list, typing.List):
        if not isinstance(value, list):
            return [f"{fmt_path(path)}: expected array, got {json_type(value)}"]
        errs = []
        for i, v in enumerate(value):
            errs += check_annotation(v, args[0] if args else typing.Any, path + (i,))
        return errs
    if te.is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{fmt_path(path)}: expected object ({tp.__name__}), got {json_type(value)}"]
        fields, allow_extra = typeddict_fields(tp)
        errs = []
        for key, (ftp, required) in fields.items():
            if key in value:
                errs += check_annotation(value[key], ftp, path + (key,))
            elif required:
                errs.append(f"{fmt_path(path)}: missing required key {key!r} ({tp.__name__})")
        if not allow_extra:
            for key in value:
                if key not in fields:
                    errs.append(f"{fmt_path(path + (key,))}: unknown key {key!r} ({tp.__name__})")
        return errs
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        allowed = [m.value for m in tp]
        return [] if value in allowed else [f"{fmt_path(path)}: expected one of {allowed!r}, got {value!r}"]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{fmt_path(path)}: expected boolean, got {json_type(value)}"]
    if tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{fmt_path(path)}: expected integer, got {json_type(value)}"]
    if tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{fmt_path(path)}: expected number, got {json_type(value)}"]
    if tp is str:
        return [] if isinstance(value, str) else [f"{fmt_path(path)}: expected string, got {json_type(value)}"]
    # Types with no JSON form (IO[bytes], PathLike, bytes): never match JSON.
    if origin is not None and isinstance(origin, type) and not issubclass(origin, (str, int, float, list, dict)):
        return [f"{fmt_path(path)}: {tp!r} has no JSON form"]
    if isinstance(tp, type) and tp in (bytes, bytearray):
        return [f"{fmt_path(path)}: {tp!r} has no JSON form"]
    if typing.get_origin(tp) is None and isinstance(tp, type) and tp.__module__ in ("os", "io", "typing"):
        return [f"{fmt_path(path)}: {tp!r} has no JSON form"]
    raise HarnessError(f"check.py cannot walk the annotation {tp!r} at {fmt_path(path)}")


# ---------------------------------------------------------------------------
# pydantic models (google-genai, mistralai)
# ---------------------------------------------------------------------------

_prepared: set[type] = set()


def _reachable_models(tp, out: list) -> None:
    import pydantic

    if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):
        if tp in out:
            return
        out.append(tp)
        for f in tp.model_fields.values():
            _reachable_models(f.annotation, out)
        return
    if hasattr(tp, "__value__"):
        _reachable_models(tp.__value__, out)
    for a in typing.get_args(tp):
        _reachable_models(a, out)


def prepare_model(model: type) -> None:
    """Sets extra='forbid' on the model and every model reachable from it."""
    if model in _prepared:
        return
    found: list = []
    _reachable_models(model, found)
    for cls in found:
        if cls.model_config.get("extra") != "forbid":
            cls.model_config = {**cls.model_config, "extra": "forbid"}
    # Children first, so each parent's schema embeds the rebuilt children.
    for cls in reversed(found):
        cls.model_rebuild(force=True)
    _prepared.add(model)


def _unknown_variants(obj, path: tuple) -> list[str]:
    """Finds values that the SDK kept only as an 'unknown variant' fallback."""
    import pydantic

    errs = []
    if isinstance(obj, pydantic.BaseModel):
        if getattr(obj, "is_unknown", False) is True:
            raw = getattr(obj, "raw", None)
            msg = f"{fmt_path(path)}: not a variant the SDK recognises ({type(obj).__name__})"
            # Re-validate against the variant its "type" names for a precise reason.
            mod = sys.modules.get(type(obj).__module__)
            if isinstance(raw, dict) and mod is not None:
                for name, table in vars(mod).items():
                    if name.endswith("_VARIANTS") and isinstance(table, dict) and raw.get("type") in table:
                        variant = table[raw["type"]]
                        prepare_model(variant)
                        sub = validate_pydantic(variant, raw, path)
                        if sub:
                            return sub
            return [msg]
        for name, field in type(obj).model_fields.items():
            errs += _unknown_variants(getattr(obj, name, None), path + (field.alias or name,))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            errs += _unknown_variants(v, path + (i,))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            errs += _unknown_variants(v, path + (k,))
    return errs


def validate_pydantic(model: type, value, path: tuple = ()) -> list[str]:
    import pydantic

    prepare_model(model)
    # google-genai's enums accept unknown values with only a warning
    # (CaseInSensitiveEnum._missing_); a warning while validating is an error here.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            obj = model.model_validate_json(json.dumps(value), strict=True, by_alias=True, by_name=False)
        except pydantic.ValidationError as e:
            return [f"{fmt_path(path + tuple(err['loc']))}: {err['msg']}" for err in e.errors()]
    errs = [f"{fmt_path(path)}: SDK warned: {w.message}" for w in caught]
    return errs + _unknown_variants(obj, path)


# ---------------------------------------------------------------------------
# botocore shapes (bedrock-runtime)
# ---------------------------------------------------------------------------

_service_models: dict = {}


def service_model(name: str):
    if name not in _service_models:
        import botocore.session

        _service_models[name] = botocore.session.get_session().get_service_model(name)
    return _service_models[name]


def check_shape(value, shape, path: tuple) -> list[str]:
    p = fmt_path(path)
    meta = shape.metadata
    t = shape.type_name
    if getattr(shape, "is_document_type", False):
        return []  # any JSON value
    if t == "structure":
        if not isinstance(value, dict):
            return [f"{p}: expected object ({shape.name}), got {json_type(value)}"]
        errs = []
        members = shape.members
        for key in value:
            if key not in members:
                errs.append(f"{fmt_path(path + (key,))}: unknown member {key!r} ({shape.name})")
        for key in shape.required_members:
            if key not in value:
                errs.append(f"{p}: missing required member {key!r} ({shape.name})")
        if meta.get("union"):
            present = [k for k in value if k in members]
            if len(present) != 1:
                errs.append(
                    f"{p}: union {shape.name} needs exactly one member set, got {len(present)}"
                    f" (members: {', '.join(members)})"
                )
        for key, v in value.items():
            if key in members:
                errs += check_shape(v, members[key], path + (key,))
        return errs
    if value is None:
        return [f"{p}: null is not a valid {t} ({shape.name})"]
    if t == "list":
        if not isinstance(value, list):
            return [f"{p}: expected array ({shape.name}), got {json_type(value)}"]
        errs = _min_max(len(value), meta, p, "items")
        for i, v in enumerate(value):
            errs += check_shape(v, shape.member, path + (i,))
        return errs
    if t == "map":
        if not isinstance(value, dict):
            return [f"{p}: expected object ({shape.name}), got {json_type(value)}"]
        errs = []
        for k, v in value.items():
            errs += check_shape(k, shape.key, path + (f"<key {k!r}>",))
            errs += check_shape(v, shape.value, path + (k,))
        return errs
    if t == "string":
        if not isinstance(value, str):
            return [f"{p}: expected string ({shape.name}), got {json_type(value)}"]
        errs = _min_max(len(value), meta, p, "characters")
        enum_values = getattr(shape, "enum", None) or meta.get("enum")
        if enum_values and value not in enum_values:
            errs.append(f"{p}: {value!r} is not one of {list(enum_values)!r} ({shape.name})")
        pattern = meta.get("pattern")
        if pattern:
            try:
                rx = re.compile(pattern)
            except re.error:
                rx = None  # a Java-only construct: skip rather than guess
            if rx is not None and not rx.fullmatch(value):
                errs.append(f"{p}: {value!r} does not match pattern {pattern!r} ({shape.name})")
        return errs
    if t in ("integer", "long"):
        if not isinstance(value, int) or isinstance(value, bool):
            return [f"{p}: expected integer ({shape.name}), got {json_type(value)}"]
        return _min_max(value, meta, p, "")
    if t in ("float", "double"):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return [f"{p}: expected number ({shape.name}), got {json_type(value)}"]
        return _min_max(value, meta, p, "")
    if t == "boolean":
        return [] if isinstance(value, bool) else [f"{p}: expected boolean ({shape.name}), got {json_type(value)}"]
    if t == "blob":
        if not isinstance(value, str):
            return [f"{p}: expected base64 string ({shape.name}), got {json_type(value)}"]
        try:
            raw = base64.b64decode(value, validate=True)
        except (ValueError, TypeError):
            return [f"{p}: not valid base64 ({shape.name})"]
        return _min_max(len(raw), meta, p, "bytes")
    if t == "timestamp":
        ok = isinstance(value, (str, int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{p}: expected timestamp ({shape.name}), got {json_type(value)}"]
    raise HarnessError(f"check.py cannot walk botocore shape type {t!r} ({shape.name}) at {p}")


def _min_max(n, meta, p, unit) -> list[str]:
    errs = []
    unit = f" {unit}" if unit else ""
    if "min" in meta and n < meta["min"]:
        errs.append(f"{p}: {n}{unit} is below the minimum {meta['min']}")
    if "max" in meta and n > meta["max"]:
        errs.append(f"{p}: {n}{unit} is above the maximum {meta['max']}")
    return errs


# ---------------------------------------------------------------------------
# dispatch
# ---------------------------------------------------------------------------


def resolve_sdk_type(item: dict) -> tuple[str, tuple[str, ...]]:
    check = item.get("check")
    if not isinstance(check, str) or "/" not in check:
        raise HarnessError(f"item {item.get('label')!r}: 'check' must be '<provider>/<kind>', got {check!r}")
    sdk_type = item.get("sdk_type")
    if sdk_type is not None:
        if sdk_type in CHECKS:
            return CHECKS[sdk_type]
        if sdk_type in SDK_TYPES:
            return sdk_type, ()
        raise HarnessError(
            f"item {item.get('label')!r}: unknown sdk_type {sdk_type!r}; use a check string "
            f"({', '.join(CHECKS)}) or an SDK type ({', '.join(SDK_TYPES)})"
        )
    if check in CHECKS:
        return CHECKS[check]
    raise HarnessError(
        f"item {item.get('label')!r}: unknown check {check!r}; supported: {', '.join(CHECKS)}"
        " (a variant provider must also give 'sdk_type')"
    )


def check_body_shape(value, shape) -> list[str]:
    """A botocore request shape's JSON body: members located in the URI or
    headers are neither required nor allowed."""
    if not isinstance(value, dict):
        return [f"$: expected object ({shape.name}), got {json_type(value)}"]
    body = {k: m for k, m in shape.members.items() if "location" not in m.serialization}
    errs = [f"$.{k}: unknown body member {k!r} ({shape.name})" for k in value if k not in body]
    errs += [f"$: missing required member {k!r} ({shape.name})" for k in shape.required_members if k in body and k not in value]
    for key, v in value.items():
        if key in body:
            errs += check_shape(v, body[key], (key,))
    return errs


def check_gemini_body(value) -> list[str]:
    """generateContent's body: known fields only, each valid as its google-genai type."""
    types_mod = importlib.import_module("google.genai.types")
    if not isinstance(value, dict):
        return [f"$: expected object (GenerateContentRequest), got {json_type(value)}"]
    errs = [f"$.{k}: unknown key {k!r} (GenerateContentRequest)" for k in value if k not in GEMINI_BODY]
    if "contents" not in value:
        errs.append("$: missing required key 'contents' (GenerateContentRequest)")
    for key, (many, type_name) in GEMINI_BODY.items():
        if key not in value:
            continue
        model = getattr(types_mod, type_name)
        if many == "one":
            errs += validate_pydantic(model, value[key], (key,))
        elif not isinstance(value[key], list):
            errs.append(f"$.{key}: expected array, got {json_type(value[key])}")
        else:
            for i, item in enumerate(value[key]):
                errs += validate_pydantic(model, item, (key, i))
    return errs


def check_signature(value, func) -> list[str]:
    """A request body given to an SDK method as keyword arguments: every key a parameter of
    it, the parameters without a default present, each value valid as its annotation (pydantic
    models reached from it refuse unknown keys)."""
    import inspect

    import pydantic

    if not isinstance(value, dict):
        return [f"$: expected object ({func.__qualname__}), got {json_type(value)}"]
    hints = typing.get_type_hints(func, include_extras=True)
    params = {
        n: p for n, p in inspect.signature(func).parameters.items() if n not in ("self", "request_options")
    }
    errs = [f"$.{k}: not a parameter of {func.__qualname__}" for k in value if k not in params]
    errs += [
        f"$: missing required parameter {n!r} ({func.__qualname__})"
        for n, p in params.items()
        if p.default is inspect.Parameter.empty and n not in value
    ]
    for key, v in value.items():
        if key not in params:
            continue
        tp = hints.get(key, typing.Any)
        found: list = []
        _reachable_models(tp, found)
        for model in found:
            prepare_model(model)
        try:
            pydantic.TypeAdapter(tp).validate_python(v, strict=True)
        except pydantic.ValidationError as e:
            errs += [f"{fmt_path((key,) + tuple(err['loc']))}: {err['msg']}" for err in e.errors()]
    return errs


def validate_adapter(tp, value) -> list[str]:
    """A value valid as a type alias (a union of models) with unknown keys refused."""
    import pydantic

    found: list = []
    _reachable_models(tp, found)
    for model in found:
        prepare_model(model)
    try:
        obj = pydantic.TypeAdapter(tp).validate_python(value)
    except pydantic.ValidationError as e:
        return [f"{fmt_path(tuple(err['loc']))}: {err['msg']}" for err in e.errors()]
    return _unknown_variants(obj, ())


def load_sdk_type(name: str):
    kind, where, attr = SDK_TYPES[name]
    if kind == "gemini-body":
        return kind, None
    if kind == "signature":
        cls, _, method = attr.partition(".")
        try:
            return kind, getattr(getattr(importlib.import_module(where), cls), method)
        except (ImportError, AttributeError) as e:
            raise HarnessError(f"cannot load {where}.{attr}: {e}") from e
    if kind in ("botocore", "botocore-body"):
        try:
            return kind, service_model(where).shape_for(attr)
        except Exception as e:  # noqa: BLE001
            raise HarnessError(f"cannot load botocore shape {where}:{attr}: {e}") from e
    try:
        mod = importlib.import_module(where)
    except ImportError as e:
        raise HarnessError(f"cannot import {where} ({e}); is requirements.txt installed?") from e
    if not hasattr(mod, attr):
        raise HarnessError(f"{where} has no {attr}: the pinned SDK version changed its types")
    return kind, getattr(mod, attr)


def validate(value, sdk_type: str, require: tuple[str, ...] = ()) -> list[str]:
    """Validates one JSON value against an SDK type name; returns the errors."""
    kind, tp = load_sdk_type(sdk_type)
    if kind == "typeddict":
        errs = check_annotation(value, tp, ())
    elif kind == "pydantic":
        errs = validate_pydantic(tp, value)
    elif kind == "botocore-body":
        errs = check_body_shape(value, tp)
    elif kind == "gemini-body":
        errs = check_gemini_body(value)
    elif kind == "signature":
        errs = check_signature(value, tp)
    elif kind == "adapter":
        errs = validate_adapter(tp, value)
    else:
        errs = check_shape(value, tp, ())
    for dotted in require:
        *parents, key = dotted.split(".")
        obj = value
        for p in parents:
            obj = obj.get(p) if isinstance(obj, dict) else None
        if isinstance(obj, dict) and key not in obj:
            errs.append(f"{fmt_path(tuple(parents))}: missing required key {key!r}")
    return errs


def validate_item(item: dict) -> list[str]:
    sdk_type, require = resolve_sdk_type(item)
    if "value" not in item:
        raise HarnessError(f"item {item.get('label')!r} has no 'value'")
    return validate(item["value"], sdk_type, require)


def run_items(items: list) -> int:
    passed = failed = 0
    for item in items:
        if not isinstance(item, dict):
            raise HarnessError(f"each item must be an object, got {json_type(item)}")
        errs = validate_item(item)
        if errs:
            failed += 1
            shown = errs[:MAX_ERRORS_PER_ITEM]
            more = f" (+{len(errs) - len(shown)} more)" if len(errs) > len(shown) else ""
            print(f"FAIL {item.get('label')} [{item.get('check')}]: " + "; ".join(shown) + more)
        else:
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def self_test() -> int:
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    import test_check

    tests = [(n, f) for n, f in vars(test_check).items() if n.startswith("test_") and callable(f)]
    passed = failed = 0
    for name, fn in tests:
        try:
            fn()
        except HarnessError:
            raise
        except Exception as e:  # noqa: BLE001
            failed += 1
            kind = "" if isinstance(e, AssertionError) else f"{type(e).__name__}: "
            print(f"FAIL {name}: {kind}{e}")
        else:
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def main(argv: list[str]) -> int:
    try:
        if argv == ["--self-test"]:
            return self_test()
        if argv == ["--list"]:
            print("\n".join(CHECKS))
            return 0
        if len(argv) != 1:
            print("usage: check.py ITEMS.json | --self-test | --list", file=sys.stderr)
            return 2
        try:
            doc = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise HarnessError(f"cannot read {argv[0]}: {e}") from e
        if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
            raise HarnessError('input must be {"items": [...]}')
        return run_items(doc["items"])
    except HarnessError as e:
        print(f"harness error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
