"""A minimal MCP server on stdio (JSON-RPC 2.0, one message a line) for the lab's MCP scenarios: two tools, so an
agent that loads it sends their schemas (`mcp__lab__<tool>`) to the model. No dependencies; runs as
`python3 mcp_server.py`."""

import json
import sys

TOOLS = [
    {"name": "lookup_ticket", "description": "Look up a support ticket by its number and return its title and state.",
     "inputSchema": {"type": "object", "properties": {"number": {"type": "integer", "description": "Ticket number"}},
                     "required": ["number"]}},
    {"name": "list_queues", "description": "List the support queues and how many open tickets each holds.",
     "inputSchema": {"type": "object", "properties": {}}},
]
ANSWERS = {"lookup_ticket": "Ticket 42: 'Login page times out' (open, assigned to the web team).",
           "list_queues": "web: 3 open; billing: 1 open."}


def answer(request: dict) -> dict | None:
    method, rid = request.get("method"), request.get("id")
    if rid is None:  # a notification
        return None
    if method == "initialize":
        result = {"protocolVersion": request.get("params", {}).get("protocolVersion", "2025-06-18"),
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "lab", "version": "1.0.0"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        name = request.get("params", {}).get("name")
        text = ANSWERS.get(name, f"no tool {name}")
        result = {"content": [{"type": "text", "text": text}], "isError": name not in ANSWERS}
    else:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"method {method} not found"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


for line in sys.stdin:
    if line.strip():
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
