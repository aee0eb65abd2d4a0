"""The engine never waits for a client (issue 40): the window included, since a wait on the one
engine thread stalls every other row of the batch, the local server's requests among them.
The engine's runtime holds no primitive a client could hold it with (a condition variable, a
timed wait on something a caller sets, a sleep); its only blocking call is the engine thread's
own wait for the next command, when it has nothing to do."""

import pathlib
import re
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "crates" / "engine" / "src" / "runtime"

# What a wait on a client looks like in Rust's standard library.
WAITS = re.compile(r"\bCondvar\b|\bwait_timeout\w*\b|\.wait\(|thread::sleep|\bpark(_timeout)?\(|\bBarrier\b")
# The engine thread waiting for its next command while idle (engine.rs) is not a wait on a client.
ALLOWED = re.compile(r"commands\.recv(_timeout)?\(")


def waits_in(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if WAITS.search(line) and not ALLOWED.search(line)
            and not line.lstrip().startswith("//")]


class EngineWaitsForNoClient(unittest.TestCase):
    def test_the_runtime_has_no_wait_a_client_could_hold(self):
        found = {str(path.relative_to(ROOT)): waits_in(path.read_text()) for path in sorted(RUNTIME.rglob("*.rs"))}
        found = {path: lines for path, lines in found.items() if lines}
        self.assertEqual(found, {}, "the engine thread must never wait for a client (README, the window and the engine)")

    def test_finds_a_wait(self):
        self.assertEqual(waits_in("let (shown, _) = changed.wait_timeout_while(guard, at_most, |s| !*s);"),
                         ["let (shown, _) = changed.wait_timeout_while(guard, at_most, |s| !*s);"])
        self.assertEqual(len(waits_in("pub struct Shown(Arc<(Mutex<bool>, Condvar)>);")), 1)
        self.assertEqual(waits_in("match commands.recv_timeout(IDLE_PERSIST / 2) {"), [])
        self.assertEqual(waits_in("// a Condvar here would be wrong"), [])


if __name__ == "__main__":
    unittest.main()
