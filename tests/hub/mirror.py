"""A loopback stand-in for the Hugging Face hub: the part of its API Confab uses, with faults
on demand. Listens on 127.0.0.1 only; nothing here reaches the network.

    GET /api/models/{owner}/{name}?blobs=true    info: sha, siblings (size, blobId, lfs.sha256), config, gated
    GET /api/models?search=Q&limit=N             search
    GET /{owner}/{name}/resolve/{rev}/{file}     302 to /cdn/... (as the hub redirects to its CDN)
    GET /cdn/{owner}/{name}/{file}               the bytes, with Range (206) support

Faults (attributes of Mirror, changeable while it runs): `drop_every` closes the connection after
that many bytes of each answer; `corrupt` maps a file name to how many answers of it come with a
flipped byte; `gated` repos need `token` (401 without one, 403 with another); `delay` sleeps
between 64 KiB chunks. `served` counts the bytes sent per file (`served_from` per file and offset asked for), `ranges`
the offsets asked for.
"""

import collections
import hashlib
import json
import os
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNK = 64 * 1024
# As the hub stores them: weights in LFS (identified by SHA-256), the rest in git (blob SHA-1).
LFS_SUFFIXES = (".safetensors", ".gguf", ".bin")


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Mirror:
    def __init__(self, repos: dict[str, dict[str, bytes]]):
        """`repos`: repo id -> {file name -> bytes}."""
        self.repos = repos
        self.drop_every: int | None = None
        self.corrupt: dict[str, int] = {}
        self.gated: set[str] = set()
        self.token = "hf_test_token"
        self.delay = 0.0
        self.served: collections.Counter = collections.Counter()
        # Bytes sent per (file, offset asked for): one answer's worth, whenever it was written.
        self.served_from: collections.Counter = collections.Counter()
        self.ranges: list[tuple[str, int]] = []
        self.auth_seen: list[str | None] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    @staticmethod
    def commit(files: dict[str, bytes]) -> str:
        digest = hashlib.sha1()
        for name in sorted(files):
            digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
        return digest.hexdigest()

    def info(self, repo: str) -> dict:
        files = self.repos[repo]
        siblings = []
        for name, data in sorted(files.items()):
            entry = {"rfilename": name, "size": len(data), "blobId": git_blob_id(data)}
            if name.endswith(LFS_SUFFIXES):
                entry["lfs"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
            siblings.append(entry)
        info = {"id": repo, "sha": self.commit(files), "siblings": siblings,
                "gated": "manual" if repo in self.gated else False, "tags": ["safetensors"]}
        if "config.json" in files:
            config = json.loads(files["config.json"])
            info["config"] = {"model_type": config.get("model_type"), "architectures": config.get("architectures")}
        return info

    def _handler(self):
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def answer(self, status: int, body: bytes = b"", headers: dict | None = None):
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def error(self, status: int, code: str, message: str):
                self.answer(status, json.dumps({"error": message}).encode(),
                            {"Content-Type": "application/json", "X-Error-Code": code})

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                parts = [urllib.parse.unquote(p) for p in url.path.strip("/").split("/")]
                if parts[:2] == ["api", "models"] and len(parts) == 2:
                    return self.search(urllib.parse.parse_qs(url.query))
                if parts[:2] == ["api", "models"] and len(parts) == 4:
                    repo = "/".join(parts[2:4])
                    if repo not in mirror.repos:
                        return self.error(404, "RepoNotFound", "Repository not found")
                    return self.answer(200, json.dumps(mirror.info(repo)).encode(), {"Content-Type": "application/json"})
                if len(parts) >= 5 and parts[2] == "resolve":
                    return self.resolve("/".join(parts[:2]), "/".join(parts[4:]))
                if parts[0] == "cdn" and len(parts) >= 4:
                    return self.blob("/".join(parts[1:3]), "/".join(parts[3:]))
                self.error(404, "NotFound", "no such route")

            def search(self, query: dict):
                needle = query.get("search", [""])[0].lower()
                limit = int(query.get("limit", ["20"])[0])
                hits = [{"id": repo, "downloads": 1, "likes": 0, "tags": ["safetensors"], "pipeline_tag": "text-generation"}
                        for repo in sorted(mirror.repos) if needle in repo.lower()]
                self.answer(200, json.dumps(hits[:limit]).encode(), {"Content-Type": "application/json"})

            def resolve(self, repo: str, name: str):
                auth = self.headers.get("Authorization")
                with mirror.lock:
                    mirror.auth_seen.append(auth)
                if repo not in mirror.repos:
                    return self.error(404, "RepoNotFound", "Repository not found")
                if repo in mirror.gated:
                    if auth is None:
                        return self.error(401, "GatedRepo", "Access to this model is restricted: log in")
                    if auth != f"Bearer {mirror.token}":
                        return self.error(403, "GatedRepo", "You have not accepted the licence")
                if name not in mirror.repos[repo]:
                    return self.error(404, "EntryNotFound", "Entry not found")
                self.answer(302, b"", {"Location": f"{mirror.endpoint}/cdn/{repo}/{urllib.parse.quote(name)}",
                                       "X-Repo-Commit": mirror.commit(mirror.repos[repo])})

            def blob(self, repo: str, name: str):
                data = mirror.repos.get(repo, {}).get(name)
                if data is None:
                    return self.error(404, "EntryNotFound", "Entry not found")
                start = 0
                header = self.headers.get("Range")
                if header:
                    start = int(header.removeprefix("bytes=").split("-")[0])
                    if start >= len(data):
                        return self.answer(416, b"", {"Content-Range": f"bytes */{len(data)}"})
                with mirror.lock:
                    mirror.ranges.append((name, start))
                    corrupt = mirror.corrupt.get(name, 0) > 0
                    if corrupt:
                        mirror.corrupt[name] -= 1
                body = data[start:]
                if corrupt:
                    body = bytes([body[0] ^ 0xFF]) + body[1:]
                self.send_response(206 if header else 200)
                if header:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Accept-Ranges", "bytes")
                self.end_headers()
                limit = mirror.drop_every if mirror.drop_every else len(body)
                sent = 0
                while sent < len(body):
                    piece = body[sent:sent + min(CHUNK, limit - sent)]
                    if not piece:
                        # The promised length is not reached: the client sees a dropped connection.
                        self.close_connection = True
                        self.wfile.flush()
                        self.connection.shutdown(2)
                        return
                    try:
                        self.wfile.write(piece)
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return
                    sent += len(piece)
                    with mirror.lock:
                        mirror.served[name] += len(piece)
                        mirror.served_from[(name, start)] += len(piece)
                    if mirror.delay:
                        time.sleep(mirror.delay)

        return Handler


def fixture_repo(folder: str) -> dict[str, bytes]:
    """A repository's files from a model folder (e.g. the tiny llama fixture), plus the files a
    real repository has that a model pull leaves behind."""
    files = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            files[name] = f.read()
    files["README.md"] = b"# a tiny test model\n"
    files[".gitattributes"] = b"*.safetensors filter=lfs diff=lfs merge=lfs -text\n"
    return files
