"""Scripted replies: the one answer the proxy (proxy.py) gives itself instead of `confab serve`.

The test checkpoint's weights are random, so its model never chooses a tool. To see an agent's
tool round trip (the agent runs the tool, then sends its result back for the model to read),
the proxy answers one chosen request with a tool call written here, streamed in the exact shape
that API streams it; the request that carries the tool's result goes to `confab serve` as usual.

- `messages_tool_use`: Anthropic's Messages events (`message_start`, content blocks with their
  deltas and stops, `message_delta` with `stop_reason: "tool_use"`, `message_stop`): a
  `thinking` block with a signature (opaque to Confab, as Anthropic's are), a `text` block and a
  `tool_use` block whose input arrives as `input_json_delta` fragments.
- `responses_function_call`: OpenAI's Responses events (`response.created` to
  `response.completed`, each with its `sequence_number`): a `reasoning` item with a summary and
  `encrypted_content` (which only OpenAI could decrypt) and a `function_call` item whose
  arguments arrive as `function_call_arguments` deltas.
"""
from __future__ import annotations

import base64
import json
import os
import time

SUMMARY = "The user asked about the file; read it before answering."


def sse(events: list[dict]) -> bytes:
    """Server-sent events, each named by its `type` as both APIs name them."""
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def halves(text: str) -> list[str]:
    """A string in two fragments, as deltas arrive (a client must join them)."""
    middle = len(text) // 2
    return [text[:middle], text[middle:]]


def opaque(prefix: str) -> str:
    """A stand-in for a provider's signed or encrypted blob: base64 no local server can read."""
    return prefix + base64.b64encode(os.urandom(96)).decode()


def messages_tool_use(model: str, tool: str, tool_input: dict, tool_id: str, signature: str) -> bytes:
    """A streamed Messages reply that thinks (its block signed with `signature`), says a line
    and calls `tool` with `tool_input`."""
    message = {
        "id": "msg_scripted" + os.urandom(8).hex(), "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }
    events = [{"type": "message_start", "message": message}]
    events.append({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
    events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": part}} for part in halves(SUMMARY)]
    events.append({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": signature}})
    events.append({"type": "content_block_stop", "index": 0})
    events.append({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}})
    events.append({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Reading it."}})
    events.append({"type": "content_block_stop", "index": 1})
    events.append({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": tool_id, "name": tool, "input": {}}})
    events += [{"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": part}}
               for part in halves(json.dumps(tool_input))]
    events.append({"type": "content_block_stop", "index": 2})
    events.append({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 40}})
    events.append({"type": "message_stop"})
    return sse(events)


def responses_function_call(model: str, name: str, arguments: dict, call_id: str, encrypted: str) -> bytes:
    """A streamed Responses reply: a reasoning item (summary and `encrypted`), then a call of
    `name` with `arguments`."""
    response_id = "resp_scripted" + os.urandom(8).hex()
    created = int(time.time())
    sequence = iter(range(1_000))

    def event(kind: str, **fields) -> dict:
        return {"type": kind, "sequence_number": next(sequence), **fields}

    def response(status: str, output: list[dict], usage: dict | None) -> dict:
        return {"id": response_id, "object": "response", "created_at": created, "status": status, "error": None,
                "incomplete_details": None, "model": model, "output": output, "usage": usage,
                "parallel_tool_calls": True, "store": False, "tool_choice": "auto", "tools": []}

    reasoning_id, call_item_id = "rs_scripted" + os.urandom(8).hex(), "fc_scripted" + os.urandom(8).hex()
    reasoning = {"id": reasoning_id, "type": "reasoning", "summary": [], "encrypted_content": encrypted}
    part = {"type": "summary_text", "text": SUMMARY}
    done_reasoning = dict(reasoning, summary=[part])
    text = json.dumps(arguments)
    call = {"id": call_item_id, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call_id, "name": name}
    done_call = dict(call, status="completed", arguments=text)
    usage = {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 40,
             "output_tokens_details": {"reasoning_tokens": 20}, "total_tokens": 41}
    events = [
        event("response.created", response=response("in_progress", [], None)),
        event("response.in_progress", response=response("in_progress", [], None)),
        event("response.output_item.added", output_index=0, item=reasoning),
        event("response.reasoning_summary_part.added", item_id=reasoning_id, output_index=0, summary_index=0,
              part={"type": "summary_text", "text": ""}),
        *[event("response.reasoning_summary_text.delta", item_id=reasoning_id, output_index=0, summary_index=0, delta=d)
          for d in halves(SUMMARY)],
        event("response.reasoning_summary_text.done", item_id=reasoning_id, output_index=0, summary_index=0, text=SUMMARY),
        event("response.reasoning_summary_part.done", item_id=reasoning_id, output_index=0, summary_index=0, part=part),
        event("response.output_item.done", output_index=0, item=done_reasoning),
        event("response.output_item.added", output_index=1, item=call),
        *[event("response.function_call_arguments.delta", item_id=call_item_id, output_index=1, delta=d) for d in halves(text)],
        event("response.function_call_arguments.done", item_id=call_item_id, output_index=1, arguments=text),
        event("response.output_item.done", output_index=1, item=done_call),
        event("response.completed", response=response("completed", [done_reasoning, done_call], usage)),
    ]
    return sse(events)
