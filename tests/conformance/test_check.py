"""Tests of check.py: every check accepts a known-good sample and rejects an
unknown key at the top level and nested, a missing required key and a wrong type.

Run with `python check.py --self-test` (plain asserts) or with pytest.
The known-good shapes follow shared/reference/providers.md.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import check  # noqa: E402

PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
SCHEMA = {
    "type": "object",
    "properties": {"location": {"type": "string", "description": "City"}},
    "required": ["location"],
    "additionalProperties": False,
}

# check -> known-good samples (the first one is the base for the mutations).
GOOD = {
    "anthropic/tool": [
        {
            "name": "get_weather",
            "description": "Current weather",
            "input_schema": SCHEMA,
            "cache_control": {"type": "ephemeral"},
        },
        {"name": "no_args", "input_schema": {"type": "object"}, "strict": True, "type": "custom"},
        {"name": "roll", "input_schema": SCHEMA, "allowed_callers": ["code_execution_20260120"]},
    ],
    "anthropic/result": [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01A",
            "content": [
                {"type": "text", "text": "12 degrees"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
            ],
            "is_error": False,
        },
        {"type": "tool_result", "tool_use_id": "toolu_01B", "content": "boom", "is_error": True},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01C",
            "content": [
                {
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": PNG_B64},
                    "title": "report.pdf",
                }
            ],
        },
    ],
    "openai-chat/tool": [
        {
            "type": "function",
            "function": {"name": "get_weather", "description": "Current weather", "parameters": SCHEMA, "strict": True},
        },
        {"type": "function", "function": {"name": "no_args"}},
    ],
    "openai-chat/result": [
        {"role": "tool", "tool_call_id": "call_abc", "content": [{"type": "text", "text": "12 degrees"}]},
        {"role": "tool", "tool_call_id": "call_abc", "content": "12 degrees"},
    ],
    "openai-responses/hosted_tool": [
        {
            "type": "mcp",
            "server_label": "gh",
            "server_url": "https://example.com/mcp",
            "allowed_tools": ["get_issue", "merge_pr"],
            "require_approval": {"always": {"tool_names": ["merge_pr"]}, "never": {"tool_names": ["get_issue"]}},
            "headers": {"X-Key": "k"},
            "defer_loading": True,
        },
        {"type": "mcp", "server_label": "deepwiki", "server_url": "https://mcp.deepwiki.com/mcp", "require_approval": "never"},
    ],
    "openai-responses/hosted_approval": [
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": False, "reason": "denied"},
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
    ],
    "openai-responses/programmatic_tool": [{"type": "programmatic_tool_calling"}],
    "anthropic/code_execution_tool": [
        {"type": "code_execution_20260120", "name": "code_execution", "cache_control": {"type": "ephemeral"}},
        {"type": "code_execution_20260120", "name": "code_execution", "allowed_callers": ["direct"]},
    ],
    "anthropic/hosted_toolset": [
        {
            "type": "mcp_toolset",
            "mcp_server_name": "gh",
            "default_config": {"enabled": False, "defer_loading": True},
            "configs": {"get_issue": {"enabled": True}},
        },
        {"type": "mcp_toolset", "mcp_server_name": "gh", "default_config": {"enabled": True}},
    ],
    "gemini-interactions/hosted_tool": [
        {
            "type": "mcp_server",
            "name": "gh",
            "url": "https://example.com/mcp",
            "headers": {"X-Key": "k"},
            "allowed_tools": [{"tools": ["get_issue"]}],
            "defer_loading": True,
        },
        {"type": "mcp_server", "name": "deepwiki", "url": "https://mcp.deepwiki.com/mcp"},
    ],
    "anthropic/hosted_server": [
        {"type": "url", "url": "https://example.com/mcp", "name": "gh", "authorization_token": "t"},
        {"type": "url", "url": "https://example.com/mcp", "name": "gh"},
    ],
    "openai-responses/tool": [
        {"type": "function", "name": "get_weather", "description": "Current weather", "parameters": SCHEMA, "strict": True},
        {"type": "function", "name": "no_args", "parameters": None, "strict": None},
        # Open to programs, with the output schema they rely on.
        {
            "type": "function",
            "name": "get_inventory",
            "parameters": SCHEMA,
            "strict": True,
            "allowed_callers": ["direct", "programmatic"],
            "output_schema": {"type": "object", "properties": {"units": {"type": "number"}}},
        },
    ],
    "openai-responses/result": [
        {
            "type": "function_call_output",
            "call_id": "call_abc",
            "output": [
                {"type": "input_text", "text": "12 degrees"},
                {"type": "input_image", "image_url": "data:image/png;base64," + PNG_B64, "detail": "auto"},
            ],
        },
        {"type": "function_call_output", "call_id": "call_abc", "output": "12 degrees"},
        # An answer to a program's call carries its caller back.
        {
            "type": "function_call_output",
            "call_id": "call_abc",
            "output": '{"units": 42}',
            "caller": {"type": "program", "caller_id": "call_prog"},
        },
    ],
    "gemini/tool": [
        {"name": "typed", "parameters": {"type": "OBJECT", "properties": {"q": {"type": "STRING"}}, "required": ["q"]}},
        {"name": "get_weather", "description": "Current weather", "parametersJsonSchema": SCHEMA},
    ],
    "gemini/result": [
        {
            "functionResponse": {
                "id": "call-1",
                "name": "get_weather",
                "response": {"output": "12 degrees"},
                "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG_B64}}],
            }
        },
        {"functionResponse": {"name": "get_weather", "response": {"error": "boom"}}},
    ],
    "bedrock-converse/tool": [
        {
            "toolSpec": {
                "name": "get_weather",
                "description": "Current weather",
                "inputSchema": {"json": SCHEMA},
                "strict": True,
            }
        },
        {"toolSpec": {"name": "no_args", "inputSchema": {"json": {"type": "object"}}}},
    ],
    "bedrock-converse/result": [
        {
            "toolUseId": "tooluse_1",
            "content": [
                {"text": "12 degrees"},
                {"json": {"temp": 12}},
                {"image": {"format": "png", "source": {"bytes": PNG_B64}}},
            ],
            "status": "success",
        },
        {"toolUseId": "a.b:c", "content": [{"text": "boom"}], "status": "error"},
    ],
    "mistral/tool": [
        {"type": "function", "function": {"name": "get_weather", "description": "Current weather", "parameters": SCHEMA}},
        {"type": "function", "function": {"name": "no_args", "parameters": {"type": "object"}, "strict": True}},
    ],
    "mistral/result": [
        {
            "role": "tool",
            "tool_call_id": "D681PevKs",
            "content": [
                {"type": "text", "text": "12 degrees"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG_B64}},
            ],
        },
        {"role": "tool", "tool_call_id": "D681PevKs", "name": "get_weather", "content": "12 degrees"},
    ],
    "openai-chat/follow_up": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Item 1 of the result of chart (call call_1):"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG_B64}},
                {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"}},
            ],
        },
        {"role": "user", "content": "plain"},
    ],
    "mistral/follow_up": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Item 1 of the result of chart (call D681PevKs):"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG_B64}},
                {"type": "document_url", "document_url": "data:application/pdf;base64,JVBERi0x", "document_name": "a.pdf"},
            ],
        },
        {"role": "user", "content": "plain"},
    ],
    "gemini/follow_up": [
        {
            "role": "user",
            "parts": [
                {"text": "Item 1 of the result of chart (call c1):"},
                {"inlineData": {"mimeType": "audio/mpeg", "data": PNG_B64}},
            ],
        },
    ],
    "bedrock-converse/turn": [
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "[item 1 follows]"}]}},
                {"text": "Item 1 of the result of chart (call tooluse_1):"},
                {"document": {"format": "pdf", "name": "a (pdf) [tooluse-1 item 1]", "source": {"bytes": PNG_B64}}},
                {"video": {"format": "mp4", "source": {"bytes": PNG_B64}}},
            ],
        },
    ],
    # Sampling request bodies: a system prompt, media, a tool use and its result, tools and a choice.
    "anthropic/sampling_request": [
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 100,
            "system": "Be brief.",
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is this?"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
                    ],
                },
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "look", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a dot"}]},
            ],
            "stop_sequences": ["END"],
            "tools": [{"name": "look", "input_schema": SCHEMA}],
            "tool_choice": {"type": "any"},
        },
    ],
    "openai-chat/sampling_request": [
        {
            "model": "gpt-5",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Transcribe"},
                        {"type": "input_audio", "input_audio": {"data": PNG_B64, "format": "wav"}},
                    ],
                },
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "look", "arguments": "{}"}}],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "a dot"},
            ],
            "max_completion_tokens": 100,
            "stop": ["END"],
            "tools": [{"type": "function", "function": {"name": "look", "parameters": SCHEMA}}],
            "tool_choice": "required",
        },
    ],
    "openai-responses/sampling_request": [
        {
            "model": "gpt-5",
            "instructions": "Be brief.",
            "input": [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "What is this?"},
                        {"type": "input_image", "image_url": "data:image/png;base64," + PNG_B64, "detail": "auto"},
                    ],
                },
                {"type": "function_call", "call_id": "c1", "name": "look", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "a dot"},
            ],
            "max_output_tokens": 100,
            "tools": [{"type": "function", "name": "look", "parameters": SCHEMA, "strict": False}],
            "tool_choice": "auto",
        },
    ],
    "gemini/sampling_request": [
        {
            "contents": [
                {"role": "user", "parts": [{"text": "What is this?"}, {"inlineData": {"mimeType": "image/png", "data": PNG_B64}}]},
                {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "look", "args": {}}, "thoughtSignature": PNG_B64}]},
                {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "look", "response": {"output": "a dot"}}}]},
            ],
            "systemInstruction": {"parts": [{"text": "Be brief."}]},
            "generationConfig": {"maxOutputTokens": 100, "temperature": 0.2, "stopSequences": ["END"]},
            "tools": [{"functionDeclarations": [{"name": "look", "parametersJsonSchema": SCHEMA}]}],
            "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
        },
    ],
    "bedrock-converse/sampling_request": [
        {
            "messages": [
                {"role": "user", "content": [{"text": "What is this?"}, {"image": {"format": "png", "source": {"bytes": PNG_B64}}}]},
                {"role": "assistant", "content": [{"toolUse": {"toolUseId": "c1", "name": "look", "input": {}}}]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "c1", "content": [{"text": "a dot"}]}}]},
            ],
            "system": [{"text": "Be brief."}],
            "inferenceConfig": {"maxTokens": 100, "temperature": 0.2, "stopSequences": ["END"]},
            "toolConfig": {"tools": [{"toolSpec": {"name": "look", "inputSchema": {"json": SCHEMA}}}], "toolChoice": {"any": {}}},
        },
    ],
    "mistral/sampling_request": [
        {
            "model": "mistral-large-latest",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is this?"},
                        {"type": "image_url", "image_url": "data:image/png;base64," + PNG_B64},
                    ],
                },
                {"role": "assistant", "tool_calls": [{"id": "D681PevKs", "type": "function", "function": {"name": "look", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "D681PevKs", "name": "look", "content": "a dot"},
            ],
            "max_tokens": 100,
            "stop": ["END"],
            "tools": [{"type": "function", "function": {"name": "look", "parameters": SCHEMA}}],
            "tool_choice": "any",
        },
    ],
    "anthropic/search_tool_bm25": [{"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25", "cache_control": {"type": "ephemeral"}}],
    "anthropic/search_tool_regex": [{"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex", "cache_control": {"type": "ephemeral"}}],
    "openai-responses/namespace": [
        {"type": "namespace", "name": "crm", "description": "CRM tools",
         "tools": [{"type": "function", "name": "list_orders", "parameters": SCHEMA, "strict": True, "defer_loading": True}]},
    ],
    "openai-responses/tool_search": [
        {"type": "tool_search"},
        {"type": "tool_search", "execution": "client", "description": "Finds tools", "parameters": SCHEMA},
    ],
    "openai-responses/search_output": [
        {"type": "tool_search_output", "call_id": "call_1", "execution": "client", "status": "completed",
         "tools": [{"type": "function", "name": "list_orders", "parameters": SCHEMA, "strict": True}]},
    ],
    "cohere/tool": [
        {"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": SCHEMA}},
    ],
    "cohere/result": [
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": [
                {"type": "text", "text": "sunny"},
                {"type": "document", "document": {"id": "file:///w.txt", "data": {"uri": "file:///w.txt", "text": "sunny"}}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ],
    "cohere/message": [
        {
            "role": "assistant",
            "tool_plan": "I will look it up.",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\": \"Paris\"}"}}],
        },
    ],
    "cohere/sampling_request": [
        {
            "model": "command-a-03-2025",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather?"},
                {"role": "assistant", "tool_plan": "look", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
            ],
            "max_tokens": 100,
            "stop_sequences": ["END"],
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}],
            "tool_choice": "REQUIRED",
        },
    ],
    "gemini-interactions/tool": [
        {"type": "function", "name": "get_weather", "description": "Weather", "parameters": SCHEMA},
    ],
    "gemini-interactions/result": [
        {
            "type": "function_result",
            "call_id": "c1",
            "name": "get_weather",
            "result": [{"type": "text", "text": "sunny"}, {"type": "image", "data": PNG_B64, "mime_type": "image/png"}],
        },
    ],
    "gemini-interactions/step": [
        {"type": "function_call", "id": "c1", "name": "get_weather", "arguments": {"location": "Paris"}},
    ],
    "gemini-interactions/sampling_request": [
        {
            "model": "gemini-2.5-flash",
            "system_instruction": "Be brief.",
            "input": [{"type": "user_input", "content": [{"type": "text", "text": "Weather?"}]}],
            "tools": [{"type": "function", "name": "get_weather", "parameters": SCHEMA}],
            "generation_config": {"max_output_tokens": 100, "tool_choice": "any"},
        },
    ],
}

# check -> (path of a nested object that must reject unknown keys,
#           path of a required key to delete,
#           (path, wrong-typed value))
MUTATIONS = {
    "anthropic/tool": (("cache_control",), ("name",), (("name",), 7)),
    "anthropic/result": (("content", 1, "source"), ("tool_use_id",), (("is_error",), "false")),
    "openai-chat/tool": (("function",), ("function", "name"), (("function", "strict"), "yes")),
    "openai-chat/result": (("content", 0), ("tool_call_id",), (("content",), 12)),
    "openai-responses/tool": ((), ("strict",), (("strict",), "true")),
    "openai-responses/hosted_tool": (("require_approval", "always"), ("server_label",), (("allowed_tools",), 7)),
    "openai-responses/hosted_approval": ((), ("approve",), (("approve",), "yes")),
    "openai-responses/programmatic_tool": ((), ("type",), (("type",), 7)),
    "anthropic/code_execution_tool": (("cache_control",), ("name",), (("name",), 7)),
    "anthropic/hosted_toolset": (("default_config",), ("mcp_server_name",), (("configs", "get_issue", "enabled"), "yes")),
    "anthropic/hosted_server": ((), ("url",), (("name",), 7)),
    "gemini-interactions/hosted_tool": (("allowed_tools", 0), ("type",), (("defer_loading",), "yes")),
    "openai-responses/result": (("output", 1), ("output",), (("output", 0, "text"), ["12"])),
    "gemini/tool": (("parameters", "properties", "q"), ("name",), (("name",), 7)),
    "gemini/result": (("functionResponse", "parts", 0, "inlineData"), ("functionResponse",), (("functionResponse", "response"), "12")),
    "bedrock-converse/tool": (("toolSpec", "inputSchema"), ("toolSpec", "name"), (("toolSpec", "strict"), "yes")),
    "bedrock-converse/result": (("content", 2, "image", "source"), ("toolUseId",), (("content",), {"text": "x"})),
    "mistral/tool": (("function",), ("function", "parameters"), (("function", "name"), 7)),
    "mistral/result": (("content", 1, "image_url"), ("content",), (("tool_call_id",), 9)),
    "openai-chat/follow_up": (("content", 1, "image_url"), ("role",), (("content", 0, "text"), 7)),
    "mistral/follow_up": (("content", 1, "image_url"), ("content",), (("content", 0, "text"), 7)),
    "gemini/follow_up": (("parts", 1, "inlineData"), ("parts",), (("parts", 0, "text"), 7)),
    "bedrock-converse/turn": (("content", 2, "document"), ("role",), (("content", 1, "text"), 7)),
    "anthropic/sampling_request": (("tool_choice",), ("max_tokens",), (("max_tokens",), "100")),
    "openai-chat/sampling_request": (("messages", 1, "content", 1, "input_audio"), ("model",), (("max_completion_tokens",), "100")),
    "openai-responses/sampling_request": (("input", 2), ("input", 1, "call_id"), (("max_output_tokens",), "100")),
    "gemini/sampling_request": (("generationConfig",), ("contents",), (("generationConfig", "maxOutputTokens"), "100")),
    "bedrock-converse/sampling_request": (("inferenceConfig",), ("messages", 0, "role"), (("inferenceConfig", "maxTokens"), "100")),
    "mistral/sampling_request": (("messages", 2, "tool_calls", 0, "function"), ("model",), (("max_tokens",), "100")),
    "anthropic/search_tool_bm25": (("cache_control",), ("name",), (("type",), "tool_search_tool_bm25_2024")),
    "anthropic/search_tool_regex": (("cache_control",), ("name",), (("name",), "tool_search_tool_bm25")),
    "openai-responses/namespace": (("tools", 0), ("description",), (("tools",), "all")),
    "openai-responses/tool_search": ((), ("type",), (("execution",), "local")),
    "openai-responses/search_output": (("tools", 0), ("tools",), (("status",), "done")),
    "cohere/tool": (("function",), ("function", "name"), (("function", "name"), 7)),
    "cohere/result": (("content", 1, "document"), ("tool_call_id",), (("content",), 12)),
    "cohere/message": (("tool_calls", 0, "function"), ("tool_calls", 0, "id"), (("tool_plan",), 7)),
    "cohere/sampling_request": (("messages", 2, "tool_calls", 0), ("model",), (("max_tokens",), "100")),
    "gemini-interactions/tool": ((), ("name",), (("name",), 7)),
    "gemini-interactions/result": (("result", 1), ("call_id",), (("call_id",), 7)),
    "gemini-interactions/step": ((), ("name",), (("id",), 7)),
    "gemini-interactions/sampling_request": (("generation_config",), ("model",), (("generation_config", "max_output_tokens"), "100")),
}


def _get(obj, path):
    for p in path:
        obj = obj[p]
    return obj


def _errors(check_name, value):
    sdk_type, require = check.CHECKS[check_name]
    return check.validate(value, sdk_type, require)


def _mutated(check_name, how):
    value = copy.deepcopy(GOOD[check_name][0])
    how(value)
    return value


def test_every_check_has_samples_and_mutations():
    assert set(GOOD) == set(check.CHECKS), set(GOOD) ^ set(check.CHECKS)
    assert set(MUTATIONS) == set(check.CHECKS), set(MUTATIONS) ^ set(check.CHECKS)


def test_known_good_samples_pass():
    for name, samples in GOOD.items():
        for i, sample in enumerate(samples):
            errs = _errors(name, sample)
            assert errs == [], f"{name} sample {i}: {errs}"


def test_unknown_top_level_key_rejected():
    for name in GOOD:
        errs = _errors(name, _mutated(name, lambda v: v.__setitem__("x_unknown", 1)))
        assert errs, f"{name}: unknown top-level key accepted"
        assert any("x_unknown" in e for e in errs), f"{name}: {errs}"


def test_unknown_nested_key_rejected():
    for name, (nested, _, _) in MUTATIONS.items():
        if not nested:
            # Flat type: nest into the first nested object the sample has instead.
            continue
        errs = _errors(name, _mutated(name, lambda v: _get(v, nested).__setitem__("x_nested", 1)))
        assert errs, f"{name}: unknown key at {nested} accepted"
        assert any("x_nested" in e for e in errs), f"{name}: {errs}"


def test_missing_required_key_rejected():
    for name, (_, missing, _) in MUTATIONS.items():
        errs = _errors(name, _mutated(name, lambda v: _get(v, missing[:-1]).pop(missing[-1])))
        assert errs, f"{name}: missing {missing} accepted"


def test_wrong_type_rejected():
    for name, (_, _, (path, bad)) in MUTATIONS.items():
        errs = _errors(name, _mutated(name, lambda v: _get(v, path[:-1]).__setitem__(path[-1], bad)))
        assert errs, f"{name}: {path} = {bad!r} accepted"


def test_wrong_literal_rejected():
    cases = {
        "anthropic/result": (("type",), "tool_use"),
        "openai-chat/tool": (("type",), "custom_tool"),
        "openai-responses/result": (("type",), "function_call"),
        "mistral/tool": (("type",), "functio"),
        "bedrock-converse/result": (("status",), "ok"),
        "gemini/result": (("functionResponse", "scheduling"), "SOMETIMES"),
    }
    for name, (path, bad) in cases.items():
        errs = _errors(name, _mutated(name, lambda v: _get(v, path[:-1]).__setitem__(path[-1], bad)))
        assert errs, f"{name}: {path} = {bad!r} accepted"


def test_callers_take_the_sdks_values_only():
    # Who may call a tool, and who called: each API's own words.
    tool = dict(GOOD["openai-responses/tool"][2], allowed_callers=["program"])
    assert _errors("openai-responses/tool", tool), "openai: allowed_callers program accepted"
    anthropic = dict(GOOD["anthropic/tool"][2], allowed_callers=["programmatic"])
    assert _errors("anthropic/tool", anthropic), "anthropic: allowed_callers programmatic accepted"
    answer = dict(GOOD["openai-responses/result"][2], caller={"type": "program"})
    assert _errors("openai-responses/result", answer), "a program caller without caller_id accepted"


def test_schema_objects_stay_open():
    # JSON Schemas are free-form in every SDK: their keywords are not "unknown keys".
    schema = {"type": "object", "properties": {}, "$defs": {"a": {"type": "string"}}, "x-anything": 1}
    assert _errors("anthropic/tool", {"name": "t", "input_schema": schema}) == []
    assert _errors("openai-chat/tool", {"type": "function", "function": {"name": "t", "parameters": schema}}) == []
    assert _errors("gemini/tool", {"name": "t", "parametersJsonSchema": schema}) == []
    assert _errors("bedrock-converse/tool", {"toolSpec": {"name": "t", "inputSchema": {"json": schema}}}) == []


def test_sampling_bodies_keep_url_members_out():
    # modelId is in Converse's URL; Gemini's model is too, and the REST body has no `model`.
    body = copy.deepcopy(GOOD["bedrock-converse/sampling_request"][0])
    assert any("modelId" in e for e in _errors("bedrock-converse/sampling_request", {**body, "modelId": "m"}))
    body = copy.deepcopy(GOOD["gemini/sampling_request"][0])
    assert any("model" in e for e in _errors("gemini/sampling_request", {**body, "model": "gemini-2.5-flash"}))
    # Responses has no stop sequences; Anthropic's tool choice has no `required`.
    body = copy.deepcopy(GOOD["openai-responses/sampling_request"][0])
    assert _errors("openai-responses/sampling_request", {**body, "stop": ["END"]})
    body = copy.deepcopy(GOOD["anthropic/sampling_request"][0])
    assert _errors("anthropic/sampling_request", {**body, "tool_choice": {"type": "required"}})
    # Messages no longer takes a temperature (deprecated; anthropic 2.14.0 has none).
    assert _errors("anthropic/sampling_request", {**body, "temperature": 0.2})


def test_union_needs_exactly_one_member():
    errs = _errors("bedrock-converse/result", {"toolUseId": "t", "content": [{"text": "a", "json": {}}]})
    assert any("exactly one member" in e for e in errs), errs
    errs = _errors("bedrock-converse/result", {"toolUseId": "t", "content": [{}]})
    assert any("exactly one member" in e for e in errs), errs


def test_bedrock_strings_and_blobs():
    base = GOOD["bedrock-converse/tool"][0]
    too_long = copy.deepcopy(base)
    too_long["toolSpec"]["name"] = "a" * 65
    assert _errors("bedrock-converse/tool", too_long)
    bad_name = copy.deepcopy(base)
    bad_name["toolSpec"]["name"] = "has.dot"
    assert _errors("bedrock-converse/tool", bad_name)
    bad_blob = copy.deepcopy(GOOD["bedrock-converse/result"][0])
    bad_blob["content"][2]["image"]["source"]["bytes"] = "not base64!"
    assert _errors("bedrock-converse/result", bad_blob)
    bad_enum = copy.deepcopy(GOOD["bedrock-converse/result"][0])
    bad_enum["content"][2]["image"]["format"] = "bmp"
    assert _errors("bedrock-converse/result", bad_enum)


def test_gemini_wants_camel_case():
    errs = _errors("gemini/tool", {"name": "t", "parameters_json_schema": {"type": "object"}})
    assert errs, "snake_case accepted"
    errs = _errors("gemini/result", {"text": "only text"})
    assert any("functionResponse" in e for e in errs), errs


def test_mistral_unknown_chunk_rejected():
    # The SDK keeps unrecognised chunks as UnknownContentChunk; a conformant emitter never produces one.
    errs = _errors("mistral/result", {"role": "tool", "content": [{"type": "audio_clip", "data": "x"}]})
    assert errs, "unknown chunk type accepted"
    errs = _errors("mistral/result", {"role": "tool", "content": [{"type": "text", "text": "a", "x_nested": 1}]})
    assert any("x_nested" in e for e in errs), errs


def test_openai_responses_detail_and_file():
    good = {
        "type": "function_call_output",
        "call_id": "c",
        "output": [{"type": "input_file", "file_data": PNG_B64, "filename": "a.pdf"}],
    }
    assert _errors("openai-responses/result", good) == []
    bad = copy.deepcopy(GOOD["openai-responses/result"][0])
    bad["output"][1]["detail"] = "medium"
    assert _errors("openai-responses/result", bad)


def test_anthropic_image_media_type_enum():
    bad = copy.deepcopy(GOOD["anthropic/result"][0])
    bad["content"][1]["source"]["media_type"] = "image/bmp"
    assert _errors("anthropic/result", bad)


def test_sdk_type_for_variant_provider():
    item = {
        "label": "gateway",
        "check": "some-gateway/tool",
        "sdk_type": "openai-chat/tool",
        "value": GOOD["openai-chat/tool"][0],
    }
    assert check.validate_item(item) == []
    item["sdk_type"] = "openai.types.chat.ChatCompletionFunctionToolParam"
    assert check.validate_item(item) == []
    item["value"] = GOOD["anthropic/tool"][0]
    assert check.validate_item(item)


def test_unknown_check_is_harness_error():
    for item in ({"label": "x", "check": "nope/tool", "value": {}}, {"label": "x", "check": "a/b", "sdk_type": "zz", "value": {}}):
        try:
            check.validate_item(item)
        except check.HarnessError:
            pass
        else:
            raise AssertionError(f"{item} did not raise HarnessError")
