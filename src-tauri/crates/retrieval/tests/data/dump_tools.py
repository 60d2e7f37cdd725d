"""Writes tests/data/tools.json: the tool lists the retrieval evaluation ranks.

Third-party servers are asked for their real tool lists over stdio; Perch's bundled servers are
listed by hand below (keep them in step with mcp_servers/*/src/main.rs). Run from the repository
root with the project venv (it has the `mcp` package and mcp-server-time):
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

BUNDLED = [
    ("demo", "add", "Add two numbers and return the sum.", ["a", "b"]),
    ("demo", "divide", "Divide a by b and return the quotient. b must not be zero.", ["a", "b"]),
    ("filesystem", "list_directory", "List the files and folders in a directory, with their sizes and whether each is a file or a folder.", ["path"]),
    ("filesystem", "read_file", "Read a text file and return its contents.", ["path"]),
    ("filesystem", "write_file", "Write text to a file, creating it or replacing what it held.", ["path", "content"]),
    ("filesystem", "create_folder", "Create a new folder (directory), with any missing parent folders.", ["path"]),
    ("filesystem", "move_file", "Move a file or folder to another location.", ["source", "destination"]),
    ("filesystem", "rename_file", "Rename a file or folder, keeping it in the same directory.", ["path", "new_name"]),
    (
        "review",
        "present_review",
        "Show a code review in Perch's review panel, beside the user's editor. Write markdown: first a brief "
        "summary suitable for a commit message, then sections with findings and concrete suggestions. Reference "
        "code rustdoc-style, like [`src/auth.rs:45`][] or [`src/auth.rs:45-60`][], with paths relative to baseUri; "
        "the user clicks them to open the file at that line. Use mode replace for a new review, append to add to "
        "it, and update-section with section to rewrite one part. The answer lists references that do not resolve "
        "to a file, so you can fix them.",
        ["content", "mode", "section", "baseUri"],
    ),
    (
        "review",
        "get_selection",
        "Get the text the user has selected in Perch's review or chat view, for example a passage of the review "
        "they want to discuss. Returns a note when nothing is selected.",
        [],
    ),
]


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
    tools = [{"server": s, "name": n, "description": d, "args": a} for s, n, d, a in BUNDLED]
    for server, (command, args) in THIRD_PARTY.items():
        listed = await dump(server, command, args)
        print(f"{server}: {len(listed)} tools", file=sys.stderr)
        tools.extend(listed)
    OUT.write_text(json.dumps(tools, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(tools)} tools to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main())
