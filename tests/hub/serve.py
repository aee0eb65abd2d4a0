"""The loopback mirror (mirror.py) as a process, for tests outside Python (the app's Rust tests,
the end-to-end suite): serves the tiny llama fixture as confab-test/tiny-llama, prints its
endpoint on the first line of stdout, and runs until stdin closes; then prints the byte offsets
each file was asked from (JSON) and exits.

    python3 tests/hub/serve.py [--delay SECONDS] [--gated] [--drop-every BYTES]

--delay sleeps between 64 KiB chunks (a download slow enough to watch or pause); --gated makes
the repository need the token `hf_test_token`; --drop-every closes each answer after that many
bytes (a connection that keeps dropping). Listens on 127.0.0.1 only.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mirror import Mirror, fixture_repo  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY_LLAMA = os.path.join(ROOT, "tests", "reference", "fixtures", "tiny", "llama")
REPO = "confab-test/tiny-llama"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--gated", action="store_true")
    parser.add_argument("--drop-every", type=int, default=None)
    args = parser.parse_args()
    files = fixture_repo(TINY_LLAMA)
    # The reference outputs are the test suite's, not the model's.
    files.pop("reference.json", None)
    with Mirror({REPO: files}) as mirror:
        mirror.delay = args.delay
        mirror.drop_every = args.drop_every
        if args.gated:
            mirror.gated.add(REPO)
        print(mirror.endpoint, flush=True)
        sys.stdin.read()
        print(json.dumps(mirror.ranges), flush=True)


if __name__ == "__main__":
    main()
