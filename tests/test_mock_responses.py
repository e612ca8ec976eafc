"""The scripted Responses-API server (tests/mock_api/openai_responses.py): the SSE stream in the API's order, usage
counted from what was sent, reasoning sent back counted at its reported size, the log without the key."""

from __future__ import annotations

import json
import urllib.request

from mock_api.openai_responses import (
    MOCK_KEY, ResponsesServer, Turn, exec_command, reasoning, render_request, text, tokens)


def _post(url: str, body: dict) -> list[tuple[str, dict]]:
    request = urllib.request.Request(url + "/responses", json.dumps(body).encode(), method="POST", headers={
        "content-type": "application/json", "authorization": f"Bearer {MOCK_KEY}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        raw = response.read().decode()
    events = []
    for chunk in raw.strip().split("\n\n"):
        name, data = chunk.split("\n", 1)
        events.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return events


BODY = {"model": "gpt-5.5", "stream": True, "prompt_cache_key": "k", "tools": [
    {"type": "function", "name": "exec_command", "description": "Run a command",
     "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}],
    "input": [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]},
              {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "List files"}]}]}


def test_a_turn_streams_in_the_apis_order_with_counted_usage():
    with ResponsesServer() as server:
        server.add(Turn(reasoning("Plan", tokens=77), exec_command("ls"), exec_command("pwd")))
        events = _post(server.url, BODY)
        names = [n for n, _ in events]
        assert names[:2] == ["response.created", "response.in_progress"] and names[-1] == "response.completed"
        assert names[2:9] == ["response.output_item.added", "response.reasoning_summary_part.added",
                              "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done",
                              "response.reasoning_summary_part.done", "response.output_item.done",
                              "response.output_item.added"]
        assert names.count("response.function_call_arguments.done") == 2
        assert [d["sequence_number"] for _, d in events] == list(range(len(events)))
        final = events[-1][1]["response"]
        usage = final["usage"]
        assert usage["input_tokens"] == render_request(BODY, {}).total
        assert usage["output_tokens_details"]["reasoning_tokens"] == 77
        assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
        assert [i["type"] for i in final["output"]] == ["reasoning", "function_call", "function_call"]
        [exchange] = server.exchanges
        assert "authorization" not in exchange.headers and MOCK_KEY not in json.dumps(server.log)
        assert exchange.body == BODY  # as received

        # the next request sends the reasoning back: it counts at the 77 tokens its response reported
        calls = final["output"]
        follow = dict(BODY, input=BODY["input"] + calls + [
            {"type": "function_call_output", "call_id": c["call_id"], "output": "a.txt"} for c in calls[1:]])
        server.add(Turn(text("Two files.")))
        usage2 = _post(server.url, follow)[-1][1]["response"]["usage"]
        without = render_request(dict(follow, input=[i for i in follow["input"] if i["type"] != "reasoning"]), {})
        assert usage2["input_tokens"] - without.total == 77 + 6  # the reasoning and its message framing
        assert usage2["input_tokens_details"]["cached_tokens"] % 128 == 0


def test_unscripted_requests_fail_loudly_and_are_logged():
    with ResponsesServer() as server:
        try:
            _post(server.url, BODY)
        except urllib.error.HTTPError as exc:
            assert exc.code == 500
        else:
            raise AssertionError("expected a 500")
        assert server.exchanges[0].status == 500


def test_tokens_is_o200k():
    assert tokens("hello world") == 2 and tokens("") == 0
