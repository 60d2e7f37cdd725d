"""Writes tests/data/tools.json: the tool lists the retrieval evaluation ranks.

Every server, Perch's bundled ones and the third-party ones, is asked for its real tool list over
stdio. Run from the repository root with the project venv (it has the `mcp` package and
mcp-server-time), after building the bundled servers:
    /root/.cache/perch/venv/bin/python src-tauri/crates/retrieval/tests/data/dump_tools.py
"""

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[5]
VENV_BIN = Path(sys.executable).parent
OUT = Path(__file__).with_name("tools.json")

# name -> (command, args): the servers installed locally by `make deps`.
THIRD_PARTY = {
    "everything": (str(ROOT / "node_modules/.bin/mcp-server-everything"), ["stdio"]),
    "files": (str(ROOT / "node_modules/.bin/mcp-server-filesystem"), ["/tmp"]),
    "time": (str(VENV_BIN / "mcp-server-time"), []),
}

# Perch's own servers, as built by `make app-debug` (or `cargo build -p perch-mcp-...`).
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/perch/target")) / "debug"
BUNDLED = {
    "demo": (str(TARGET / "perch-mcp-demo"), []),
    "filesystem": (str(TARGET / "perch-mcp-filesystem"), ["--root", "/tmp"]),
    "review": (str(TARGET / "perch-mcp-review"), []),
}


async def dump(server, command, args):
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.list_tools()
            return [
                {
                    "server": server,
                    "name": t.name,
                    "description": (t.description or "").strip(),
                    "args": sorted((t.input_schema or {}).get("properties", {}).keys()),
                }
                for t in result.tools
            ]


async def main():
    tools = []
    for server, (command, args) in {**BUNDLED, **THIRD_PARTY}.items():
        listed = await dump(server, command, args)
        print(f"{server}: {len(listed)} tools", file=sys.stderr)
        tools.extend(listed)
    OUT.write_text(json.dumps(tools, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(tools)} tools to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main())
