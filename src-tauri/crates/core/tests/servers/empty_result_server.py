"""An MCP server over stdio, written by hand, that answers every method it does not know,
`server/discover` among them, with an empty result `{}` instead of a "method not found" error,
as several servers in the wild do. It speaks the 2025-11-25 protocol through `initialize`."""

import json
import sys

TOOLS = [
    {
        "name": "shout",
        "description": "Repeats the text in capitals.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    }
]


def reply(request_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if "id" not in message or "method" not in message:
        continue  # notifications and responses
    method, request_id = message["method"], message["id"]
    print(f"request: {method}", file=sys.stderr, flush=True)
    if method == "initialize":
        reply(request_id, {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "empty-result-server", "version": "1.0.0"},
        })
    elif method == "tools/list":
        reply(request_id, {"tools": TOOLS})
    elif method == "tools/call":
        text = message["params"]["arguments"]["text"]
        reply(request_id, {"content": [{"type": "text", "text": text.upper()}]})
    else:
        reply(request_id, {})
