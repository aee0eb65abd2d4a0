"""A native drag source for end-to-end tests: a small GTK 3 window offering files as text/uri-list.

The harness starts it, then presses the mouse on it and moves to the app with xdotool, so the
app receives a real X11 (XDND) drop, the same as one from a file manager:

    python3 drag_source.py --x 1200 --y 20 FILE...

It prints one line when it is on screen, `READY <x> <y> <width> <height>` (root coordinates of
the area to press on), then `DATA-GET` when the target asks for the data, and `DRAG-END` or
`DRAG-FAILED <reason>` when the drag finishes. It exits after the drag or after --timeout seconds.
Needs python3-gi and gir1.2-gtk-3.0 (scripts/setup.sh installs both).
"""
import argparse
import pathlib
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402


def say(line: str) -> None:
    print(line, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="files to offer")
    parser.add_argument("--x", type=int, default=1250)
    parser.add_argument("--y", type=int, default=20)
    parser.add_argument("--width", type=int, default=120)
    parser.add_argument("--height", type=int, default=80)
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    uris = [pathlib.Path(f).resolve().as_uri() for f in args.files]

    window = Gtk.Window(title="confab-e2e-drag-source")
    window.set_decorated(False)
    window.set_default_size(args.width, args.height)
    window.move(args.x, args.y)
    box = Gtk.EventBox()
    box.add(Gtk.Label(label=f"drag {len(uris)} file(s)"))
    window.add(box)

    box.drag_source_set(Gdk.ModifierType.BUTTON1_MASK, [], Gdk.DragAction.COPY)
    box.drag_source_add_uri_targets()

    def data_get(_widget, _context, selection, _info, _time):
        say("DATA-GET")
        selection.set_uris(uris)

    def drag_end(_widget, _context):
        say("DRAG-END")
        GLib.timeout_add(300, Gtk.main_quit)

    def drag_failed(_widget, _context, result):
        say(f"DRAG-FAILED {result.value_nick if hasattr(result, 'value_nick') else result}")
        return False

    box.connect("drag-data-get", data_get)
    box.connect("drag-end", drag_end)
    box.connect("drag-failed", drag_failed)

    def mapped(*_):
        # Wait for the X server to place the window, then report where to press.
        def report():
            gdk_window = box.get_window()
            if gdk_window is None:
                return True
            _, x, y = gdk_window.get_origin()
            alloc = box.get_allocation()
            say(f"READY {x} {y} {alloc.width} {alloc.height}")
            return False

        GLib.timeout_add(200, report)

    window.connect("map-event", mapped)
    window.connect("destroy", Gtk.main_quit)
    GLib.timeout_add(int(args.timeout * 1000), lambda: (say("TIMEOUT"), Gtk.main_quit()))
    window.show_all()
    Gtk.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
