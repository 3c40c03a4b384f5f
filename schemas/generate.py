#!/usr/bin/env python3
"""Writes provider-spec.schema.json from the definitions below.

The provider-spec schema repeats itself (one template definition per
context, a partial variant of each section for specs with `extends`), so it
is generated: edit this file, then run `python3 schemas/generate.py`. The
test `tests/spec_format.rs` fails when the committed schema differs from
what this prints (`--check`).
"""
import json
VARS = {
  "tool_template": (["name","description","schema","title","strict"], "A tool definition template. Variables: name (the exposed name), description (cleaned, at most 4 KiB; see missing_description), schema (the input schema, strict where converted), title (cleaned), strict (whether the schema is strict; only with a strict section)."),
  "text_block_template": (["text"], "A text block template. Variable: text."),
  "envelope_template": (["call_id","name","content","attachments"], "An answer template. Variables: call_id (absent for a call without an id), name (the exposed tool name), content (see content), attachments (the items of attach rules, a list)."),
  "media_template": (["type","text","mime","mime_subtype","data","size","uri","name","title","description","value","blob_text","file_name","document_name"], "A media rule template. Variables: type, text, mime, mime_subtype, data (base64), size (decoded bytes), uri, name, title, description, value (an unknown block as sent), blob_text (a text/* blob decoded as UTF-8), file_name (a safe file name from the resource's URI, with the MIME type's extension), document_name (letters, digits, single spaces, hyphens, parentheses and brackets only, unique per call and block). A rule whose required variables a block lacks does not apply."),
  "structured_template": (["value"], "A structured-content rule template. Variable: value (the structuredContent value)."),
  "follow_up_text_template": (["text"], "A follow-up text item: the text that introduces one follow-up medium and names its call. Variable: text."),
  "follow_up_envelope_template": (["items"], "Wraps all of a turn's follow-up items into one item (a user message). Variable: items (the list)."),
  "sampling_request_template": (["model","system","messages","max_tokens","temperature","stop_sequences","metadata","tools","tool_choice"], "A sampling request body. Variables: model (the application's model name; leave it out for providers whose model is in the URL), system (the system prompt: its text, or system.value of it; absent without one), messages (the rendered messages, required), max_tokens (maxTokens, required), temperature, stop_sequences (a list; absent when empty), metadata (MCP's free-form metadata), tools (the tool definitions, wrapped by tools.wrap; absent without tools or when a tool choice leaves them out), tool_choice (the tool choice's value; absent when none is sent)."),
  "sampling_system_template": (["text"], "The system prompt as a value for ${system} (system.value) or as a message before the others (system.message). Variable: text."),
  "sampling_text_block_template": (["text"], "A text block of a message. Variable: text."),
  "sampling_media_template": (["type","mime","mime_subtype","data","size"], "A message's media rule. Variables: type (image or audio), mime (normalized, image/jpg is image/jpeg), mime_subtype (the part after /), data (the base64 payload), size (decoded bytes)."),
  "search_tool_template": (["name","description","schema"], "A client search tool's definition. Variables: name (search_tools), description (what the search tool does, written by the library), schema (its input schema: query, limit)."),
  "search_answer_template": (["call_id","name","tools","references","text"], "The answer to a search call. Variables: call_id (absent for a call without an id), name (the search tool's name), tools (the definitions of the tools found, as listed when loaded; grouped in namespaces when the listing has them), references (one reference item per tool found), text (the tools found, named and described, as text)."),
  "reference_template": (["name"], "A reference to a tool found, an item of ${references}. Variable: name (the tool's exposed name)."),
  "namespace_template": (["name","description","tools"], "A namespace: one server's tools. Variables: name (the server's id), description (the server and the names of its tools, written by the library), tools (the definitions, deferred ones marked)."),
  "hosted_server_template": (["server","url","description","headers","authorization","tools","all_tools","deferred","approval"], "A hosted MCP server's declaration (its tool, or its entry of the request's list). Variables: server (its id, the label the provider's items give back), url, description (absent without one), headers (an object; absent without any), authorization (a bearer token, only when the application gives one), tools (the tools the provider may run, written as tools.as says; absent when every tool may run), all_tools (true when every tool may run), deferred (true when its tools are deferred; absent otherwise), approval (the approval setting; absent without an approval section)."),
  "hosted_approval_template": (["ask","unasked"], "An approval setting. Variables: ask (the names of the tools asked about), unasked (the names of the others the provider may run)."),
  "hosted_answer_template": (["id","approve","reason"], "The answer to an approval request, an input item of the next request. Variables: id (the request's id), approve (true or false), reason (absent without one)."),
  "hosted_entry_template": (["name"], "The value under a tool's name when tools are written as a map. Variable: name."),
  "hosted_wrap_template": (["names"], "What holds the list of tool names (tools.as: list). Variable: names."),
  "program_answer_template": (["call_id","name","content","caller","program_id"], "An answer to a call a program made. Variables: call_id (absent for a call without an id), name (the exposed tool name), content (see answer.content), caller (the call's caller as the provider sent it), program_id (the id of the program that made the call)."),
  "program_request_template": (["container"], "Top-level fields of the next request that carry the programs' state on. Variable: container (the container's id, when a response named one)."),
  "sampling_wrap_template": (["tools","tool_choice"], "Wraps the tool definitions into ${tools}. Variables: tools (the definitions, a list), tool_choice (the tool choice's value, placed here instead of in the request)."),
}
# Variables a tool use template may use besides these: the names its `meta` map gives.
TOOL_USE_VARS = ["id","name","input","arguments"]
def pattern(vars):
    v = "|".join(vars)
    return "^(?:[^$]|\\$\\$\\{|\\$\\{(?:" + v + ")\\??\\}|\\$(?!\\{))*$"
defs = {}
for name,(vars,desc) in VARS.items():
    defs[name] = {
      "description": desc + " A string that is exactly ${var} is the variable's value; ${var?} vanishes when absent; other strings interpolate ${var} (${var?}: empty when absent); $${ writes ${.",
      "anyOf": [
        {"type": "string", "pattern": pattern(vars)},
        {"type": "object", "additionalProperties": {"$ref": f"#/$defs/{name}"}},
        {"type": "array", "items": {"$ref": f"#/$defs/{name}"}},
        {"type": ["number", "boolean", "null"]},
      ],
    }
defs["sampling_tool_use_template"] = {
  "description": "A tool use of an assistant message. Variables: id, name (the name the provider knows the tool by), input (the arguments, an object), arguments (the same as JSON text), and each variable `meta` names (a value of the tool use's _meta). A string that is exactly ${var} is the variable's value; ${var?} vanishes when absent; other strings interpolate ${var} (${var?}: empty when absent); $${ writes ${.",
  "anyOf": [
    {"type": "string", "pattern": "^(?:[^$]|\\$\\$\\{|\\$\\{[a-z_][a-z0-9_]*\\??\\}|\\$(?!\\{))*$"},
    {"type": "object", "additionalProperties": {"$ref": "#/$defs/sampling_tool_use_template"}},
    {"type": "array", "items": {"$ref": "#/$defs/sampling_tool_use_template"}},
    {"type": ["number", "boolean", "null"]},
  ],
}
defs["sampling_message_template"] = {
  "description": "A message. Variables: content (the role's content form; absent when the message has nothing for it, write ${content?} where the API allows that), attachments (the items of attach rules, a list), tool_calls (the tool uses, with tool_use.into: tool_calls; a list), and each variable the role's `meta` names (a value of the message's _meta, or its default). A string that is exactly ${var} is the variable's value; ${var?} vanishes when absent; other strings interpolate ${var} (${var?}: empty when absent); $${ writes ${.",
  "anyOf": [
    {"type": "string", "pattern": "^(?:[^$]|\\$\\$\\{|\\$\\{[a-z_][a-z0-9_]*\\??\\}|\\$(?!\\{))*$"},
    {"type": "object", "additionalProperties": {"$ref": "#/$defs/sampling_message_template"}},
    {"type": "array", "items": {"$ref": "#/$defs/sampling_message_template"}},
    {"type": ["number", "boolean", "null"]},
  ],
}
defs["sampling_choice_template"] = {
  "description": "A tool choice's value, literal JSON (no variables).",
  "anyOf": [
    {"type": "string", "pattern": "^(?:[^$]|\\$\\$\\{|\\$(?!\\{))*$"},
    {"type": "object", "additionalProperties": {"$ref": "#/$defs/sampling_choice_template"}},
    {"type": "array", "items": {"$ref": "#/$defs/sampling_choice_template"}},
    {"type": ["number", "boolean", "null"]},
  ],
}
def text_pattern(name):
    vars,_ = VARS[name]
    return {"type": "string", "pattern": pattern(vars)}
path = {"type": "string", "pattern": "^[^/]+(/[^/]+)*$", "description": "A slash-separated path into a JSON value; numeric segments index arrays."}
def rule(tmpl, accept=True):
    props = {}
    if accept:
        props["accept"] = {"type": "array", "items": {"type": "string", "pattern": "^[^/\\s]+/[^/\\s]+$"}, "minItems": 1, "description": "MIME types this rule applies to (type/* allowed); absent: any."}
    props["block"] = {"$ref": f"#/$defs/{tmpl}", "description": "An item of ${content} (content: blocks or string_or_blocks)."}
    props["attach"] = {"$ref": f"#/$defs/{tmpl}", "description": "An item of ${attachments}, placed by the envelope outside the content."}
    props["as_text"] = dict(text_pattern(tmpl), description="A text part; variables interpolate.")
    one_of = [{"required": ["block"]}, {"required": ["attach"]}, {"required": ["as_text"]}]
    if accept:
        props["follow_up"] = {"$ref": f"#/$defs/{tmpl}", "description": "An item sent after all the turn's answers (results.follow_up says how), introduced by a text naming its call; the answer keeps a short note in its place."}
        props["max_bytes"] = {"type": "integer", "minimum": 0, "description": "The largest payload the rule takes, in decoded bytes; a larger one is refused (the next rule is tried, else the placeholder says why)."}
        one_of.append({"required": ["follow_up"]})
    return {"type": "object", "additionalProperties": False, "properties": props, "oneOf": one_of}
defs.update({
  "path": path,
  "tool_choice": {"type": "object", "additionalProperties": False, "description": "What each tool choice mode is in a request (Provider::tool_choice; sampling requests): a value for the request's tool choice field, {omit: tool_choice} (none is sent: the provider's default; a warning in sampling unless the mode is auto) or {omit: tools} (neither tools nor tool choice). A mode not listed cannot be said: asking for it is an error.", "properties": {
      k: {"if": {"type": "object", "required": ["omit"]}, "then": {"type": "object", "additionalProperties": False, "properties": {"omit": {"enum": ["tool_choice", "tools"]}}}, "else": {"$ref": "#/$defs/sampling_choice_template"}} for k in ["auto", "required", "none"]}},
  "sources": {"type": "array", "description": "Where the spec's facts come from, each with the date it was checked against it (Provider::sources; the command line's providers lists them).", "items": {"type": "object", "additionalProperties": False, "required": ["url", "checked"], "properties": {
      "url": {"type": "string", "minLength": 1, "description": "A URL, or owner/repo@commit:path for a file of a repository."},
      "checked": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "description": "The date the spec was checked against it (YYYY-MM-DD)."},
      "about": {"type": "string", "description": "What it is the source of."}}}},
  "schema": {"type": "object", "additionalProperties": False, "required": ["rules"], "description": "The provider's subset of JSON Schema: every tool's schema is rewritten by these rules before it is listed (and before strict conversion); a tool whose schema the rules cannot express is left out and reported as unsupported.", "properties": {
      "rules": {"type": "string", "minLength": 1, "description": "The id of a rules file with mode: subset (rules/<id>.yaml)."}}},
  "tools": {"type": "object", "additionalProperties": False, "required": ["definition"], "properties": {
      "definition": {"allOf": [{"$ref": "#/$defs/tool_template"}], "type": "object", "description": "One tool definition."},
      "missing_description": {"enum": ["omit", "empty_string", "omit_blank"], "default": "omit", "description": "What ${description} is for a tool without one: absent (omit), the empty string (empty_string), or absent also when the cleaned description is empty or blank (omit_blank, for APIs that reject an empty string)."}}},
  "strict": {"type": "object", "additionalProperties": False, "required": ["rules"], "properties": {
      "rules": {"type": "string", "minLength": 1, "description": "The id of a strict-mode rules file (rules/<id>.yaml)."},
      "default": {"enum": ["auto", True, False], "default": "auto", "description": "The strict mode when the caller names none: auto (strict where the schema converts), true or false (YAML booleans)."}}},
  "option": {"type": "object", "additionalProperties": False, "required": ["values"], "properties": {
      "description": {"type": "string"},
      "values": {"type": "object", "minProperties": 1, "additionalProperties": {"type": "object", "additionalProperties": False,
          "anyOf": [{"required": ["merge_last"]}, {"required": ["merge_each"]}, {"required": ["results"]}],
          "properties": {"description": {"type": "string"},
            "merge_last": {"type": "object", "description": "Deep-merged into the last tool definition (null removes a key)."},
            "merge_each": {"type": "object", "description": "Deep-merged into every tool definition (null removes a key)."},
            "results": {"$ref": "#/$defs/results_partial", "description": "Deep-merged over the results section when the option has this value (objects merge, lists and other values replace, null removes a key)."}}}}}},
  "locate": {"if": {"type": "string"}, "then":
      dict(path, description="Shorthand: applies when the input has the path's first key; the path leads to the items."),
      "else": {"type": "object", "additionalProperties": False, "required": ["when", "list"], "properties": {
          "when": {"type": "string", "minLength": 1, "description": "A key whose presence in the input selects this entry."},
          "list": dict(path, description="Where the list of items is; absent or null means no calls.")}}},
  "field": {"if": {"type": "string"}, "then": path, "else": {"type": "object", "additionalProperties": False, "required": ["path"], "properties": {
      "path": path, "optional": {"type": "boolean", "default": False, "description": "Whether a call may lack it."}}}},
  "calls": {"type": "object", "additionalProperties": False, "required": ["locate", "select", "id", "name", "arguments"], "properties": {
      "locate": {"type": "array", "items": {"$ref": "#/$defs/locate"}, "minItems": 1, "description": "Where the items are in a response or message, tried in order; a list given as input is the items themselves."},
      "select": {"type": "object", "additionalProperties": False, "required": ["path"], "description": "Which items are tool calls: those whose path holds `equals`, or (without equals) those where the path is present and not null.", "properties": {
          "path": path, "equals": {"type": "string"}}},
      "id": {"$ref": "#/$defs/field", "description": "The call's id."},
      "name": {"$ref": "#/$defs/field", "description": "The tool name the model called."},
      "arguments": {"type": "object", "additionalProperties": False, "required": ["path", "format"], "properties": {
          "path": path,
          "format": {"enum": ["object", "json_text", "object_or_json_text"], "description": "A JSON object, a string holding one, or either."},
          "missing": {"enum": ["reject", "empty_object"], "default": "reject", "description": "Whether absent or null arguments (also the JSON text null) reject the call or mean {}."}}}}},
  "media_rule": rule("media_template"),
  "structured_rule": rule("structured_template", accept=False),
  "media_row": {"if": {"type": "string"},
      "then": {"const": "placeholder", "description": "The standard text form, e.g. [image: image/png, 1024 bytes]."},
      "else": {"type": "array", "items": {"$ref": "#/$defs/media_rule"}, "minItems": 1, "description": "Rules tried in order: the first whose MIME types match and whose variables the block has applies; otherwise the placeholder."}},
  "results": {"type": "object", "additionalProperties": False, "required": ["content", "envelope"], "properties": {
      "content": {"enum": ["string", "blocks", "string_or_blocks"], "description": "What ${content} is: one string (texts joined by newlines), a list of blocks, or a string unless a media rule produced a block."},
      "text_block": {"$ref": "#/$defs/text_block_template", "description": "A text block, for content: blocks and string_or_blocks."},
      "envelope": {"$ref": "#/$defs/envelope_template", "description": "The answer to one call."},
      "error": {"type": "object", "additionalProperties": False, "properties": {
          "prefix": {"type": "string", "description": "Put before the text of an error answer."},
          "envelope": {"$ref": "#/$defs/envelope_template", "description": "The answer to a failed call or an isError result, instead of envelope."}}},
      "structured_content": {"type": "object", "additionalProperties": False, "properties": {
          "use": {"enum": ["auto", "prefer", "append", "ignore"], "default": "auto", "description": "When structuredContent is used: auto (only when content is empty), prefer (instead of content), append (after it), ignore."},
          "render": {"default": "json_text", "if": {"type": "string"},
              "then": {"enum": ["json_text", "value"], "description": "JSON text, or the value itself as ${content} (content: string only)."},
              "else": {"type": "array", "items": {"$ref": "#/$defs/structured_rule"}, "minItems": 1}}}},
      "media": {"type": "object", "additionalProperties": False, "description": "How each kind of content block reaches the model; a kind not listed gets its placeholder.", "properties": {
          k: {"$ref": "#/$defs/media_row"} for k in ["image", "audio", "resource_link", "resource_text", "resource_blob", "unknown"]}},
      "follow_up": {"type": "object", "additionalProperties": False, "required": ["text"], "description": "How media that follow_up rules take are delivered: after all the turn's answers, each after a text item naming its call.", "properties": {
          "text": {"$ref": "#/$defs/follow_up_text_template", "description": "A text item."},
          "envelope": {"$ref": "#/$defs/follow_up_envelope_template", "description": "Wraps the turn's follow-up items into one item; without it they are appended as they are."}}},
      "request_limits": {"type": "array", "description": "Limits on the media of one request, counted over one turn's answers and follow-ups (earlier turns are not known here); a medium that would pass one gets its placeholder, which says why.", "items": {
          "type": "object", "additionalProperties": False, "anyOf": [{"required": ["max_bytes"]}, {"required": ["max_items"]}], "properties": {
              "accept": {"type": "array", "items": {"type": "string", "pattern": "^[^/\\s]+/[^/\\s]+$"}, "minItems": 1, "description": "The MIME types the limit counts (type/* allowed); absent: every medium."},
              "max_bytes": {"type": "integer", "minimum": 0, "description": "Decoded bytes."},
              "max_items": {"type": "integer", "minimum": 0}}}}}},
})
import copy
NULL_REMOVES = {"type": "null", "description": "null removes this key from the spec extended."}
def partial(node, names):
    """The same schema with `required` dropped from every object schema, refs pointing at partial
    defs, and every property also taking null (which removes it from the spec extended)."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "required" and "properties" in node:
                continue
            # A choice among required keys: a partial may name one and null another.
            if k == "oneOf" and all(isinstance(x, dict) and set(x) == {"required"} for x in v):
                continue
            if k == "$ref" and v.split("/")[-1] in names:
                out[k] = v + "_partial"
            elif k == "properties" and isinstance(v, dict) and node.get("type") == "object":
                out[k] = {name: {"anyOf": [partial(sub, names), NULL_REMOVES]} for name, sub in v.items()}
            else:
                out[k] = partial(v, names)
        return out
    if isinstance(node, list):
        return [partial(v, names) for v in node]
    return node
key_path = dict(path, description="A path in the event to the key the item is known by (a block index, an output index).")
defs.update({
  "condition": {"type": "object", "additionalProperties": False, "required": ["path"], "description": "The event's path holds `equals` (any JSON value), or (without equals) is present and not null.", "properties": {
      "path": path, "equals": {"description": "The value the path must hold."}}},
  "event_rule": {"type": "object", "additionalProperties": False, "description": "What the events this rule matches do; every matching rule applies, in order.", "properties": {
      "on": {"description": "The event names this rule applies to (see `name`).", "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}]},
      "when": {"$ref": "#/$defs/condition"},
      "error": {"description": "The event is a stream error: paths of its message, the first present wins.", "anyOf": [path, {"type": "array", "items": path, "minItems": 1}]},
      "message": {"description": "Merge the object at this path into the message, or set message fields from event paths ({field: path}).", "anyOf": [path, {"type": "object", "additionalProperties": path}]},
      "open": {"type": "object", "additionalProperties": False, "required": ["key"], "description": "Start an item.", "properties": {"key": key_path, "item": dict(path, description="The item as the event carries it; absent: an empty object.")}},
      "replace": {"type": "object", "additionalProperties": False, "required": ["key", "item"], "description": "Replace an open item with the whole one the event carries.", "properties": {"key": key_path, "item": path}},
      "fragments": {"type": "object", "additionalProperties": False, "required": ["list"], "description": "Entries of a list, each merged into the call it belongs to: by id (a new id starts a call), then index, then the latest call. Empty strings and nulls never overwrite.", "properties": {
          "list": path, "id": path, "index": path,
          "append": {"type": "array", "items": path, "description": "Paths whose strings are appended (an object counts as its JSON text)."},
          "drop": {"type": "array", "items": path, "description": "Paths left out of the item."}}},
      "whole": {"type": "object", "additionalProperties": False, "required": ["list"], "description": "Every element of the list (or the object) at the path is a complete item.", "properties": {
          "list": path,
          "pieces": {"type": "object", "additionalProperties": False, "required": ["at", "list", "into", "path", "more"], "description": "Elements that stream one item's arguments in pieces addressed by JSON path: an element whose `at` object has other keys and `more: true` opens the item, pieces fill `into`, an empty `at` object (or a last piece without `more`) completes it.", "properties": {
              "at": path, "list": path, "into": path,
              "path": {"type": "string", "description": "A piece's JSON-path key, such as jsonPath."},
              "more": {"type": "string", "description": "The key that is true while more follows."},
              "null_key": {"type": "string", "description": "A piece key whose presence means null."}}}}},
      "append": {"type": "object", "additionalProperties": False, "required": ["from", "to"], "description": "Append the event's fragment to a field of an item (by key) or of the message (no key).", "properties": {
          "key": key_path, "from": path, "to": path,
          "as": {"enum": ["text", "json", "list"], "default": "text", "description": "text: concatenated; json: JSON text parsed when the item closes (blank: {} or what was there); list: pushed onto a list."}}},
      "set": {"type": "object", "additionalProperties": False, "required": ["from", "to"], "description": "Set a field of an item (by key) or of the message to the event's value.", "properties": {"key": key_path, "from": path, "to": path}},
      "close": {"type": "object", "additionalProperties": False, "required": ["key"], "description": "The item is complete (a call runs now).", "properties": {"key": key_path}},
      "end": {"type": "boolean", "description": "The stream is complete."},
      "settle": {"type": "string", "description": "The path of the whole items the event carries (a final response's output): an item still open that is not a call takes the entry at its key's position, and is complete."}}},
  "stream": {"type": "object", "additionalProperties": False, "required": ["framing", "events"], "description": "How a streamed response builds the assistant message and when each call is complete.", "properties": {
      "framing": {"enum": ["sse", "ndjson", "json", "eventstream"], "description": "How the bytes are cut into events."},
      "done": {"type": "string", "description": "A data payload that ends the stream, such as [DONE]."},
      "name": {"description": "Where an event's name (for `on`) is: {path: type}, or `wrapper` for {\"<name>\": {...}} events (rule paths then address the inner object).", "if": {"type": "string"}, "then": {"const": "wrapper"}, "else": {"type": "object", "additionalProperties": False, "required": ["path"], "properties": {"path": path}}},
      "message": {"type": "object", "additionalProperties": False, "properties": {
          "base": {"type": "object", "description": "The message before any event."},
          "items": dict(path, description="Where the items go in the message; absent, the message is the list of items."),
          "omit_empty": {"type": "boolean", "default": False, "description": "Leave items out of a message that has none."},
          "drop": {"type": "array", "description": "Items left out of the message when they equal one of these (an empty text part the API would refuse in a request)."}}},
      "open_at_end": {"enum": ["drop", "close"], "default": "drop", "description": "A call still open at the end: incomplete (drop) or complete (close, for formats without a per-call end event)."},
      "events": {"type": "array", "items": {"$ref": "#/$defs/event_rule"}, "minItems": 1}}},
})
mcp_stop = {"enum": ["endTurn", "stopSequence", "maxTokens", "toolUse"]}
def sampling_role(who):
    return {"type": "object", "additionalProperties": False, "required": ["content", "envelope"], "description": f"How {who} messages are shaped: text blocks, media by their rules, and (assistant) tool uses.", "properties": {
        "content": {"enum": ["string", "blocks", "string_or_blocks"], "description": "What ${content} is: the texts joined into one string, a list of blocks, or a string unless a media rule (or a tool use or result) produced a block."},
        "text_block": {"$ref": "#/$defs/sampling_text_block_template", "description": "A text block, for content: blocks and string_or_blocks."},
        "envelope": {"$ref": "#/$defs/sampling_message_template", "description": "The message."},
        "media": {"type": "object", "additionalProperties": False, "description": "The media this role's messages may hold: a kind not listed, or a block no rule takes, is refused (an error naming the message).", "properties": {
            k: {"type": "array", "items": {"$ref": "#/$defs/sampling_media_rule"}, "minItems": 1, "description": f"Rules for {k} blocks, tried in order: the first whose MIME types match, whose max_bytes the payload fits and whose variables are present applies."} for k in ["image", "audio"]}},
        "meta": {"type": "object", "propertyNames": {"pattern": "^[a-z_][a-z0-9_]*$"}, "description": "Envelope variables read from the message's _meta (what response.message_meta kept): variable name to the _meta key, or {key, default} for a field the API requires on every such message (the default when the key is absent).", "additionalProperties": {
            "if": {"type": "string"}, "then": {"type": "string", "minLength": 1},
            "else": {"type": "object", "additionalProperties": False, "required": ["key", "default"], "properties": {"key": {"type": "string", "minLength": 1}, "default": {"description": "The value when the message's _meta lacks the key."}}}}}}}
defs.update({
  "sampling_media_rule": {"type": "object", "additionalProperties": False, "oneOf": [{"required": ["block"]}, {"required": ["attach"]}, {"required": ["as_text"]}], "properties": {
      "accept": {"type": "array", "items": {"type": "string", "pattern": "^[^/\\s]+/[^/\\s]+$"}, "minItems": 1, "description": "MIME types this rule applies to (type/* allowed); absent: any."},
      "max_bytes": {"type": "integer", "minimum": 0, "description": "The largest payload the rule takes, in decoded bytes; a larger one is refused with the limit named."},
      "block": {"$ref": "#/$defs/sampling_media_template", "description": "An item of ${content} (content: blocks or string_or_blocks)."},
      "attach": {"$ref": "#/$defs/sampling_media_template", "description": "An item of ${attachments} (Ollama's images beside the text)."},
      "as_text": dict(text_pattern("sampling_media_template"), description="A text part instead of the medium; variables interpolate.")}},
  "sampling_role": sampling_role("user"),
  "sampling_assistant_role": sampling_role("assistant"),
  "sampling_condition": {"type": "object", "additionalProperties": False, "required": ["path"], "description": "The item's path holds `equals` (any JSON value), or (without equals) is present and not null.", "properties": {
      "path": path, "equals": {"description": "The value the path must hold."}}},
  "sampling": {"type": "object", "additionalProperties": False, "required": ["request", "messages", "response"], "description": "How an MCP sampling/createMessage request becomes this provider's request body, and its response a CreateMessageResult.", "properties": {
      "request": {"allOf": [{"$ref": "#/$defs/sampling_request_template"}], "type": "object", "description": "The request body; it must place ${messages}, ${max_tokens} and ${tools}."},
      "ignore": {"type": "array", "items": {"enum": ["system", "temperature", "stop_sequences", "metadata"]}, "uniqueItems": True, "description": "Request fields the provider has no place for: dropped with a warning. A field neither placed nor ignored is an error when a request carries it."},
      "system": {"type": "object", "additionalProperties": False, "description": "Where the system prompt goes: a value for ${system} (absent: the text itself), or a message before the others.", "oneOf": [{"required": ["value"]}, {"required": ["message"]}], "properties": {
          "value": {"$ref": "#/$defs/sampling_system_template"},
          "message": {"$ref": "#/$defs/sampling_system_template"}}},
      "messages": {"type": "object", "additionalProperties": False, "required": ["user", "assistant", "tool_use", "tool_results"], "properties": {
          "user": {"$ref": "#/$defs/sampling_role"},
          "assistant": {"$ref": "#/$defs/sampling_assistant_role"},
          "tool_use": {"type": "object", "additionalProperties": False, "required": ["into", "item"], "description": "An assistant message's tool uses.", "properties": {
              "into": {"enum": ["content", "tool_calls", "messages"], "description": "Among the message's content blocks, in order (content); into ${tool_calls} beside the content (tool_calls); or items of their own after the message (messages)."},
              "item": {"$ref": "#/$defs/sampling_tool_use_template", "description": "One tool use; it must place ${name} and ${input} or ${arguments}."},
              "meta": {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}, "propertyNames": {"pattern": "^[a-z_][a-z0-9_]*$"}, "description": "Variables for the item read from the tool use's _meta: variable name to _meta key (what response.tool_use_meta kept)."}}},
          "tool_results": {"enum": ["content", "messages"], "description": "A user message's tool results, answered by the results section: the content of one user message (content), or each a message or item of its own (messages)."},
          "follow_ups": {"enum": ["after", "content"], "default": "after", "description": "The media the answers cannot carry (the results' follow_up rules): the message(s) the follow-up envelope makes, after the answers (after), or blocks after the answers in the same user message (content)."},
          "merge_consecutive": {"type": "boolean", "default": False, "description": "Consecutive messages of one role become one message, their blocks in order (APIs whose roles must alternate)."},
          "call_ids": {"type": "object", "additionalProperties": False, "required": ["alphabet"], "description": "The form call ids must have: an id of the history that does not fit is replaced by one made from it (the same in its tool use and in the result that answers it; two ids that would become one are an error).", "properties": {
              "alphabet": {"enum": ["alphanumeric", "alphanumeric_dash_underscore", "any"], "description": "The characters an id may have: A-Z a-z 0-9, those and - _, or any."},
              "length": {"type": "integer", "minimum": 8, "maximum": 64, "description": "The exact length of an id."},
              "max_length": {"type": "integer", "minimum": 8, "maximum": 64, "description": "The largest length of an id."}}}}},
      "tools": {"type": "object", "additionalProperties": False, "properties": {
          "wrap": {"$ref": "#/$defs/sampling_wrap_template", "description": "Wraps the definitions (the tools.definition template's, under the toolset's names) into ${tools}; it must place ${tools}."},
          "strict": {"enum": ["auto", True, False], "default": False, "description": "The strict mode of the tools offered (SamplingOptions::strict overrides it)."},
          "required_by_history": {"type": "boolean", "default": False, "description": "The API needs the tool definitions whenever the history holds tool uses or results: {omit: tools} keeps them then, without a tool choice (with a warning)."}}},
      "tool_choice": {"$ref": "#/$defs/tool_choice", "description": "What each toolChoice mode becomes in a sampling request, when it differs from the spec's tool_choice section (which applies otherwise)."},
      "response": {"type": "object", "additionalProperties": False, "required": ["content", "stop_reason"], "description": "How the provider's (non-streamed) response is read. Items the calls section selects are tool calls, read with its id, name and arguments.", "properties": {
          "model": dict(path, description="Where the model's name is; absent: the request's model."),
          "error": {"type": "array", "items": path, "description": "Paths of an error body's message: the first present, not null and not an object makes the response an error."},
          "content": {"type": "array", "items": path, "minItems": 1, "description": "Where the answer is, read in order: a string is one text block, a list is items."},
          "items": {"type": "array", "description": "What items that are not calls become: the first rule that matches applies; an item no rule matches is left out.", "items": {"type": "object", "additionalProperties": False, "oneOf": [{"required": ["text"]}, {"required": ["media"]}, {"required": ["each"]}, {"required": ["skip"]}], "properties": {
              "when": {"$ref": "#/$defs/sampling_condition"},
              "text": dict(path, description="A text block from the string here."),
              "media": {"type": "object", "additionalProperties": False, "required": ["mime", "data"], "description": "An image or audio block (by the MIME type's major type).", "properties": {"mime": path, "data": path}},
              "each": dict(path, description="The items of the list here are read with the same rules."),
              "skip": {"const": True, "description": "The item is left out."}}}},
          "stop_reason": {"type": "object", "additionalProperties": False, "required": ["from"], "properties": {
              "from": {"type": "array", "items": path, "minItems": 1, "description": "Paths of the provider's reason: the first present and not null wins."},
              "map": {"type": "object", "additionalProperties": mcp_stop, "description": "Provider values and the MCP stop reasons they are; others are kept as sent."},
              "calls_mean_tool_use": {"type": "boolean", "default": False, "description": "A reason that maps to endTurn is toolUse when the answer holds tool calls."},
              "empty_means_tool_use": {"type": "boolean", "default": False, "description": "An empty reason (\"\") is toolUse when the answer holds tool calls, and no reason otherwise (APIs that leave it empty on tool-call turns)."}}},
          "tool_use_meta": {"type": "object", "additionalProperties": path, "description": "_meta keys of a tool use and the paths in the call item they are read from (provider state the next request must send back)."},
          "message_meta": {"type": "object", "additionalProperties": path, "description": "_meta keys of the result and the paths in the response they are read from (fields of the assistant message the next request must send back, such as reasoning; a role's meta puts them back)."}}}}},
})
defs["search"] = {"type": "object", "additionalProperties": False, "required": ["defer"], "description": "Deferred loading (ListOptions::defer): how the provider marks a deferred tool, its own search tools, a search the client answers, and namespaces. Without this section, deferred tools are left out of the listing and the library's search tool (search_tools, a function tool) finds them.", "properties": {
  "defer": {"type": "object", "description": "Merged into the definition of a deferred tool (literal JSON)."},
  "server_tools": {"type": "object", "description": "The provider's own search tools, by name (ToolSearch::Server): each literal JSON, listed as is, never deferred.", "additionalProperties": {"type": "object"}},
  "client": {"type": "object", "additionalProperties": False, "required": ["answer"], "description": "A search the client answers (ToolSearch::Client, the default with this section): the library ranks the deferred tools and answers in this shape.", "properties": {
      "tool": {"$ref": "#/$defs/search_tool_template", "description": "The search tool's definition; absent: the library's search tool, listed through tools.definition."},
      "calls": {"type": "object", "additionalProperties": False, "required": ["select", "id", "arguments"], "description": "Which response items are search calls, when they are items of their own; absent: calls (the calls section) to the search tool's name.", "properties": {
          "select": {"$ref": "#/$defs/calls/properties/select"},
          "id": {"$ref": "#/$defs/field"},
          "arguments": {"$ref": "#/$defs/calls/properties/arguments"}}},
      "answer": {"$ref": "#/$defs/search_answer_template"},
      "reference": {"$ref": "#/$defs/reference_template", "description": "One item of ${references} per tool found (required when the answer uses ${references})."}}},
  "namespace": {"type": "object", "additionalProperties": False, "required": ["definition"], "description": "One namespace per server for listings with deferred tools and the provider's search (ListOptions::namespaces turns it off).", "properties": {
      "definition": {"$ref": "#/$defs/namespace_template"}}}}}
defs["tokens"] = {"type": "object", "additionalProperties": False, "required": ["text"], "description": "How the provider's models count a tool result's tokens, for result budgets (ResultOptions::max_result_tokens). Without this section: 3 bytes a token, 1,600 tokens an image or other medium.", "properties": {
  "text": {"type": "object", "additionalProperties": False, "required": ["bytes_per_token"], "properties": {
      "tokenizer": {"enum": ["o200k_base", "cl100k_base"], "description": "A public tokenizer the library counts with exactly (the tiktoken encodings, with the tokenizers feature)."},
      "bytes_per_token": {"type": "number", "minimum": 1, "maximum": 16, "description": "Bytes of UTF-8 text per token: the estimate, used without a tokenizer, and with one for the text a budget leaves out."}}},
  "image": {"type": "object", "additionalProperties": False, "required": ["unsized"], "description": "An image's tokens, from the size its header gives: give one of tiles, patches and fixed.", "oneOf": [{"required": ["tiles"]}, {"required": ["patches"]}, {"required": ["fixed"]}], "properties": {
      "tiles": {"type": "object", "additionalProperties": False, "required": ["size", "tokens"], "description": "Scaled to fit fit x fit, then down so its short side is at most short_side; each size x size tile costs tokens, plus base once.", "properties": {
          "size": {"type": "integer", "minimum": 1}, "tokens": {"type": "integer", "minimum": 0}, "base": {"type": "integer", "minimum": 0},
          "fit": {"type": "integer", "minimum": 1}, "short_side": {"type": "integer", "minimum": 1}}},
      "patches": {"type": "object", "additionalProperties": False, "required": ["size"], "description": "Scaled down so its long edge is at most max_long_edge and it has at most max_patches size x size patches (a partial patch counts whole); it costs its patches times multiplier.", "properties": {
          "size": {"type": "integer", "minimum": 1}, "max_long_edge": {"type": "integer", "minimum": 1},
          "max_patches": {"type": "integer", "minimum": 1}, "multiplier": {"type": "number", "exclusiveMinimum": 0, "default": 1}}},
      "fixed": {"type": "integer", "minimum": 0, "description": "The same tokens for any image."},
      "unsized": {"type": "integer", "minimum": 0, "description": "Tokens for an image whose size cannot be read from its header."}}},
  "other_media": {"type": "integer", "minimum": 0, "description": "Tokens for a medium that is not an image (audio, a document, a video), an estimate: 1,600 when absent."}}}
SEL = {"$ref": "#/$defs/calls/properties/select"}
FIELD = {"$ref": "#/$defs/field"}
ARGS = {"$ref": "#/$defs/calls/properties/arguments"}
defs["hosted_mcp"] = {"type": "object", "additionalProperties": False, "required": ["tool", "calls"], "description": "MCP servers the provider calls itself, inside one request (hosted::HostedServer, Provider::list_hosted): how one is declared, how its policy is written, and how the provider's hosted calls, results, approval requests and tool listings appear among a response's items (Extracted::hosted). Without this section, every server runs locally.", "properties": {
  "headers": {"type": "object", "additionalProperties": {"type": "string"}, "description": "HTTP headers a request that declares hosted servers carries (a beta flag)."},
  "schemes": {"type": "array", "items": {"type": "string"}, "description": "URL schemes the provider reaches (default [https]); a server at another runs locally."},
  "request": {"type": "object", "additionalProperties": False, "required": ["key", "entry"], "description": "A top-level request field that lists the hosted servers.", "properties": {
      "key": {"type": "string", "minLength": 1}, "entry": {"$ref": "#/$defs/hosted_server_template"}}},
  "tool": {"$ref": "#/$defs/hosted_server_template", "description": "The tool that declares one hosted server."},
  "tools": {"type": "object", "additionalProperties": False, "description": "How ${tools} is written: a list of names (as: list, the default; wrap puts it in what holds it) or an object keyed by name (as: map, with entry).", "properties": {
      "as": {"enum": ["list", "map"]}, "entry": {"$ref": "#/$defs/hosted_entry_template"}, "wrap": {"$ref": "#/$defs/hosted_wrap_template"}}},
  "approval": {"type": "object", "additionalProperties": False, "required": ["none", "all", "some"], "description": "The approval setting, ${approval}, when no tool, every tool, or some tools are asked about. Absent: the provider has no approval step, and a server whose policy asks runs locally.", "properties": {
      "none": {"$ref": "#/$defs/hosted_approval_template"}, "all": {"$ref": "#/$defs/hosted_approval_template"}, "some": {"$ref": "#/$defs/hosted_approval_template"}}},
  "calls": {"type": "object", "additionalProperties": False, "required": ["select", "id", "server", "name", "arguments"], "description": "The provider's hosted calls among a response's items (the calls section's locate).", "properties": {
      "select": SEL, "id": FIELD, "server": FIELD, "name": FIELD, "arguments": ARGS, "output": FIELD, "error": FIELD}},
  "results": {"type": "object", "additionalProperties": False, "required": ["select", "call_id", "output"], "description": "Their results, when they are items of their own, joined to the call by id.", "properties": {
      "select": SEL, "call_id": FIELD, "output": FIELD, "is_error": FIELD}},
  "approvals": {"type": "object", "additionalProperties": False, "required": ["select", "id", "server", "name", "arguments", "answer"], "description": "The provider's approval requests, and the input item that answers one.", "properties": {
      "select": SEL, "id": FIELD, "server": FIELD, "name": FIELD, "arguments": ARGS, "answer": {"$ref": "#/$defs/hosted_answer_template"}}},
  "listings": {"type": "object", "additionalProperties": False, "required": ["select", "server", "tools", "name"], "description": "The provider's listings of a hosted server's tools.", "properties": {
      "select": SEL, "server": FIELD, "tools": {"type": "string", "description": "The path of the list of tools."}, "name": {"type": "string", "description": "A tool's name within an entry."}, "error": FIELD}}}}
PROGRAM_CONDITION = {"type": "object", "additionalProperties": False, "required": ["path"], "description": "The item's path holds `equals`, one of `one_of`, or (with neither) is present and not null.", "properties": {
  "path": {"type": "string"}, "equals": {"type": "string"}, "one_of": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
  "not": {"required": ["equals", "one_of"]}}
defs["program_conditions"] = {"description": "A condition, or a list of conditions that must all hold.", "anyOf": [PROGRAM_CONDITION, {"type": "array", "items": PROGRAM_CONDITION, "minItems": 1}]}
PROGRAM_CONDITIONS = {"$ref": "#/$defs/program_conditions"}
defs["programmatic"] = {"type": "object", "additionalProperties": False, "required": ["tool", "allowed_callers", "calls", "programs", "answer"], "description": "Calls that come from code the model wrote (programmatic tool calling; callers::CallersRule, ListOptions::callers): how a listing declares the code-execution tool and who may call each tool, how a call's caller is read, which items are programs, their outputs and their container (Extracted::programs), what the next request carries on, and how an answer to a program's call is shaped. null: the provider has none, and a listing that opens a tool to code is refused.", "properties": {
  "tool": {"type": "object", "description": "The tool that lets the model write programs, listed once after the tools when any tool is open to code."},
  "headers": {"type": "object", "additionalProperties": {"type": "string"}, "description": "HTTP headers a request that lists it carries (a beta flag)."},
  "allowed_callers": {"type": "object", "additionalProperties": False, "required": ["key", "model", "code"], "description": "Where a tool open to code says who may call it (a list of values, merged into its definition), and the values that mean the model and code. A tool only the model calls is listed as before.", "properties": {
      "key": {"type": "string", "minLength": 1}, "model": {"type": "string", "minLength": 1}, "code": {"type": "string", "minLength": 1}}},
  "output_schema": {"type": "string", "minLength": 1, "description": "The key of a tool definition its outputSchema goes under, for tools open to code (absent: the provider takes none)."},
  "calls": {"type": "object", "additionalProperties": False, "required": ["caller", "model", "program", "program_id"], "description": "How a call's caller is read (in whole responses and streams alike). A caller that is neither the model's nor a program's rejects the call.", "properties": {
      "caller": {"type": "string", "description": "The path of a call item's caller; absent or null: the model."},
      "model": PROGRAM_CONDITIONS, "program": PROGRAM_CONDITIONS,
      "program_id": {"type": "string", "description": "The path of the program's id within a program's caller."}}},
  "programs": {"type": "object", "additionalProperties": False, "required": ["select", "id"], "description": "Which of a response's items are programs (read from the calls section's items).", "properties": {
      "select": PROGRAM_CONDITIONS, "id": FIELD, "code": FIELD}},
  "outputs": {"type": "object", "additionalProperties": False, "required": ["select", "program_id", "output"], "description": "Which items are a program's output, once it ended.", "properties": {
      "select": PROGRAM_CONDITIONS, "program_id": FIELD, "output": FIELD, "status": FIELD}},
  "container": {"type": "object", "additionalProperties": False, "required": ["id"], "description": "Where a response (or a streamed message) says which container its programs run in, and until when it waits for answers.", "properties": {
      "id": {"type": "string"}, "expires_at": {"type": "string"}}},
  "request": {"$ref": "#/$defs/program_request_template", "description": "Top-level fields of the next request that carry the programs' state on (Provider::program_request)."},
  "answer": {"type": "object", "additionalProperties": False, "required": ["envelope", "content"], "description": "An answer to a call a program made: never cut by a result budget, structured when the result is, within a byte cap, no media.", "properties": {
      "envelope": {"$ref": "#/$defs/program_answer_template"},
      "error": {"type": "object", "additionalProperties": False, "description": "How an error answer is marked: a prefix to its text, or an envelope of its own.", "properties": {
          "prefix": {"type": "string"}, "envelope": {"$ref": "#/$defs/program_answer_template"}}},
      "content": {"enum": ["text", "json", "json_if_schema"], "description": "${content}: text (the structured result as JSON text, else the result's text), json (JSON text: the structured result, else the text as a JSON string) or json_if_schema (json for a tool listed with its output schema, text for the others)."},
      "results_only": {"type": "boolean", "default": False, "description": "Whether the answers of a turn with a program's calls must be a message of tool results only: no follow-up items (Turn::results_only)."}}}}}
PARTIAL = ["hosted_mcp", "programmatic", "search", "tokens", "tools", "strict", "option", "calls", "field", "results", "stream", "sampling", "sampling_role", "sampling_assistant_role"]
for name in PARTIAL:
    defs[name + "_partial"] = partial(copy.deepcopy(defs[name]), PARTIAL)
def spec_def(suffix, required):
    d = {"type": "object", "additionalProperties": False, "properties": {
    "title": {"type": "string", "minLength": 1, "description": "A human-readable name."},
    "description": {"type": "string"},
    "extends": {"type": "string", "minLength": 1, "description": "The id of a spec this one is based on: this document is deep-merged over it (objects merge, anything else replaces, null removes a key)."},
    "sources": {"$ref": "#/$defs/sources"},
    "tools": {"$ref": "#/$defs/tools"},
    "schema": {"$ref": "#/$defs/schema"},
    "strict": {"$ref": "#/$defs/strict"},
    "tool_choice": {"$ref": "#/$defs/tool_choice"},
    "options": {"type": "object", "description": "Named options, such as cache_control: last (listings) or media: full (answers).", "additionalProperties": {"$ref": "#/$defs/option"}},
    "calls": {"$ref": "#/$defs/calls"},
    "results": {"$ref": "#/$defs/results"},
    }}
    d["properties"]["stream"] = {"$ref": "#/$defs/stream"}
    for k in ["tools", "strict", "calls", "results", "stream", "sampling", "search", "tokens", "hosted_mcp"]:
        d["properties"][k] = {"$ref": f"#/$defs/{k}{suffix}"}
    # Said explicitly when a provider has none: null.
    d["properties"]["programmatic"] = {"$ref": f"#/$defs/programmatic{suffix}"} if suffix else {"anyOf": [{"$ref": "#/$defs/programmatic"}, {"type": "null", "description": "The provider has no programmatic calling."}]}
    d["properties"]["options"] = {"type": "object", "description": "Named options, such as cache_control: last (listings) or media: full (answers).", "additionalProperties": {"$ref": f"#/$defs/option{suffix}"}}
    if required:
        d["required"] = required
    if suffix:
        d["properties"] = {k: (v if k in ("title", "extends") else {"anyOf": [v, NULL_REMOVES]}) for k, v in d["properties"].items()}
    return d
defs["spec"] = spec_def("", ["title", "tools", "calls", "results"])
defs["spec_partial"] = spec_def("_partial", ["extends"])
schema = {
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://github.com/mcp-adapters/schemas/provider-spec.schema.json",
  "title": "mcp-adapters provider spec",
  "description": "One LLM provider's tool-calling wire format: tool definitions, where calls are found in a response, and how results are answered. A provider's id is its file's stem. A spec with `extends` holds only what differs from the spec it extends.",
  "if": {"type": "object", "required": ["extends"]},
  "then": {"$ref": "#/$defs/spec_partial"},
  "else": {"$ref": "#/$defs/spec"},
  "$defs": defs,
}
import os
import sys

TARGET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "provider-spec.schema.json")
text = json.dumps(schema, indent=2) + "\n"
if "--check" in sys.argv:
    with open(TARGET) as f:
        if f.read() != text:
            sys.exit("schemas/provider-spec.schema.json is out of date: run python3 schemas/generate.py")
else:
    with open(TARGET, "w") as f:
        f.write(text)
