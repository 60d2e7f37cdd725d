#!/usr/bin/python3
"""A real GTK text field for the dictate-anywhere tests: a window titled by the first argument
with one single-line entry that has the focus; the second argument, if any, is its program name
(its WM_CLASS: "xterm" makes it a window Perch takes for a terminal). It prints `ready <pid>`
once shown, then `text <json>` each time the entry's text changes and `activate` each time
Return is pressed in it, and reads commands on stdin: `set <json>`, `select-all`, `deselect`,
`clipboard <json>` (sets the clipboard), `get-clipboard` (answers `clipboard <json>`), `quit`.

Run with the system Python (`/usr/bin/python3`), which has PyGObject (python3-gi).
"""
import json
import os
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

title = sys.argv[1] if len(sys.argv) > 1 else "Perch test field"
# Its WM_CLASS ("perch-test-field", "Perch-test-field"), which the never-type list matches.
GLib.set_prgname(sys.argv[2] if len(sys.argv) > 2 else "perch-test-field")
window = Gtk.Window(title=title)
window.set_default_size(420, 60)
entry = Gtk.Entry()
window.add(entry)


def say(line):
    print(line, flush=True)


entry.connect("changed", lambda e: say("text " + json.dumps(e.get_text(), ensure_ascii=False)))
# Return in a single-line field: what sends a chat message or submits a form.
entry.connect("activate", lambda _e: say("activate"))
window.connect("destroy", Gtk.main_quit)


def on_map(*_):
    entry.grab_focus()
    say(f"ready {os.getpid()}")


window.connect("map-event", on_map)


pending = b""


def on_stdin(source, _condition):
    # Read what arrived and run every whole line: two commands may come in one read.
    global pending
    chunk = os.read(source.fileno(), 65536)
    if not chunk:
        Gtk.main_quit()
        return False
    pending += chunk
    *lines, pending = pending.split(b"\n")
    for line in lines:
        run(line.decode())
    return True


def run(line):
    command, _, arg = line.strip().partition(" ")
    clipboard = Gtk.Clipboard.get(Gdk.SELECTION_CLIPBOARD)
    if command == "quit":
        Gtk.main_quit()
    elif command == "set":
        entry.set_text(json.loads(arg))
    elif command == "deselect":
        entry.set_position(-1)
    elif command == "select-all":
        entry.grab_focus()
        entry.select_region(0, -1)
    elif command == "clipboard":
        clipboard.set_text(json.loads(arg), -1)
        clipboard.store()
    elif command == "get-clipboard":
        clipboard.request_text(lambda _c, text: say("clipboard " + json.dumps(text, ensure_ascii=False)))


GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, on_stdin)
window.show_all()
Gtk.main()
