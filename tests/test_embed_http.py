"""OpenAIEmbedder against a real local HTTP server with scripted behaviours."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from memlab.embed import EmbeddingError, HashingEmbedder, OpenAIEmbedder

DIM = 16
REFERENCE = HashingEmbedder(DIM)

# A behaviour answers one request: it gets the parsed request body and returns
# (status, body bytes, delay seconds before answering) or None to drop the connection.
Behaviour = Callable[[dict[str, Any]], "tuple[int, bytes, float] | None"]


def ok(request: dict[str, Any], *, reverse: bool = True) -> tuple[int, bytes, float]:
    """A correct OpenAI answer computed by the hashing embedder; items listed in reverse so
    that the client has to sort by index."""
    vecs = REFERENCE.embed_documents(request["input"])
    data = [
        {"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)
    ]
    if reverse:
        data.reverse()
    body = {"object": "list", "data": data, "model": request["model"]}
    return 200, json.dumps(body).encode(), 0.0


def status(code: int, message: str = "boom") -> Behaviour:
    return lambda req: (code, json.dumps({"error": {"message": message}}).encode(), 0.0)


def raw(body: bytes | Callable[[dict[str, Any]], bytes]) -> Behaviour:
    return lambda req: (200, body(req) if callable(body) else body, 0.0)


@dataclass
class Server:
    url: str
    script: list[Behaviour] = field(default_factory=list)
    default: Behaviour = ok
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_behaviour(self) -> Behaviour:
        with self.lock:
            return self.script.pop(0) if self.script else self.default


@pytest.fixture
def server() -> Iterator[Server]:
    state: dict[str, Server] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            srv = state["server"]
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length))
            with srv.lock:
                srv.requests.append({"path": self.path, **request})
                srv.headers.append({k.lower(): v for k, v in self.headers.items()})
            answer = srv.next_behaviour()(request)
            if answer is None:
                self.close_connection = True
                return  # no status line: the client sees the connection closed
            code, body, delay = answer
            time.sleep(delay)
            try:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    host, port = httpd.server_address[:2]
    state["server"] = Server(url=f"http://{host}:{port}/v1")
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield state["server"]
    finally:
        httpd.shutdown()
        httpd.server_close()


class SleepRecorder:
    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def client(server: Server, **kwargs: Any) -> tuple[OpenAIEmbedder, SleepRecorder]:
    rec = SleepRecorder()
    kwargs.setdefault("sleep", rec)
    kwargs.setdefault("timeout", 5.0)
    return OpenAIEmbedder(server.url, **kwargs), rec


TEXTS = [f"memory note {i}: alice met bob about project {i % 5}" for i in range(10)]


# -- normal operation ----------------------------------------------------------------------


def test_vectors_equal_reference_and_order_kept(server: Server) -> None:
    emb, rec = client(server, model="text-embedding-3-small")
    vecs = emb.embed_documents(TEXTS)
    assert vecs.dtype == np.float32 and vecs.shape == (10, DIM)
    np.testing.assert_allclose(vecs, REFERENCE.embed_documents(TEXTS), atol=1e-6)
    assert emb.dimensions == DIM, "the first response fixes the dimension"
    assert len(server.requests) == 1 and rec.delays == []
    req = server.requests[0]
    assert req["path"] == "/v1/embeddings"
    assert req["model"] == "text-embedding-3-small" and req["input"] == TEXTS


def test_query_trimmed_and_blank_texts_not_sent(server: Server) -> None:
    emb, _ = client(server)
    q = emb.embed_query("  alice and bob \n")
    assert server.requests[-1]["input"] == ["alice and bob"]
    np.testing.assert_allclose(q, REFERENCE.embed_query("alice and bob"), atol=1e-6)
    vecs = emb.embed_documents(["alpha", "", "  \n", "beta"])
    assert server.requests[-1]["input"] == ["alpha", "beta"]
    assert not vecs[1].any() and not vecs[2].any()
    np.testing.assert_allclose(
        vecs[[0, 3]], REFERENCE.embed_documents(["alpha", "beta"]), atol=1e-6
    )
    n = len(server.requests)
    assert emb.embed_documents(["", " "]).shape == (2, DIM)
    assert len(server.requests) == n, "all-blank input needs no request once dims are known"


def test_headers_sent(server: Server) -> None:
    emb, _ = client(server, api_key="sk-test-123", headers={"X-Org": "lab", "X-Trace": "7"})
    emb.embed_documents(["hello"])
    sent = server.headers[-1]
    assert sent["authorization"] == "Bearer sk-test-123"
    assert sent["x-org"] == "lab" and sent["x-trace"] == "7"
    assert sent["content-type"] == "application/json"
    anon, _ = client(server)
    anon.embed_documents(["hello"])
    assert "authorization" not in server.headers[-1]


def test_batching_by_count_and_chars(server: Server) -> None:
    emb, _ = client(server, batch_size=3)
    vecs = emb.embed_documents(TEXTS)
    assert [len(r["input"]) for r in server.requests] == [3, 3, 3, 1]
    assert [t for r in server.requests for t in r["input"]] == TEXTS
    np.testing.assert_allclose(vecs, REFERENCE.embed_documents(TEXTS), atol=1e-6)

    server.requests.clear()
    texts = ["x" * 100 + str(i) for i in range(5)] + ["y" * 1000]
    emb2, _ = client(server, max_batch_chars=250)
    vecs2 = emb2.embed_documents(texts)
    assert [len(r["input"]) for r in server.requests] == [2, 2, 1, 1]
    assert all(sum(map(len, r["input"])) <= 250 for r in server.requests[:3])
    np.testing.assert_allclose(vecs2, REFERENCE.embed_documents(texts), atol=1e-6)


def test_dimension_probe_when_unknown(server: Server) -> None:
    emb, _ = client(server)
    assert emb.dimensions == DIM
    assert server.requests[0]["input"] == ["dimension probe"]
    assert emb.embed_documents([]).shape == (0, DIM)
    assert len(server.requests) == 1


def test_non_finite_numbers_are_zeroed(server: Server) -> None:
    body = b'{"data": [{"index": 0, "embedding": [NaN, 3.0, Infinity, 4.0]}]}'
    server.script = [raw(body)]
    emb, _ = client(server)
    np.testing.assert_allclose(emb.embed_documents(["a"])[0], [0.0, 0.6, 0.0, 0.8], rtol=1e-6)


# -- retries -------------------------------------------------------------------------------


def test_429_then_success_with_backoff(server: Server) -> None:
    server.script = [status(429, "Rate limit reached"), status(429, "slow down")]
    emb, rec = client(server)
    vecs = emb.embed_documents(TEXTS[:2])
    np.testing.assert_allclose(vecs, REFERENCE.embed_documents(TEXTS[:2]), atol=1e-6)
    assert len(server.requests) == 3
    assert len(rec.delays) == 2
    for k, delay in enumerate(rec.delays):
        expected = 0.5 * 2**k
        assert expected * 0.8 - 1e-9 <= delay <= expected * 1.2 + 1e-9, (k, delay)


def test_500_storm_exhausts_retries(server: Server) -> None:
    server.default = status(500, "internal error")
    emb, rec = client(server, base_delay=3.0, max_delay=8.0)
    with pytest.raises(EmbeddingError) as info:
        emb.embed_documents(["a"])
    assert len(server.requests) == 4, "1 attempt + 3 retries"
    msg = str(info.value)
    assert msg.startswith("openai:") and "HTTP 500" in msg and "after 4 attempts" in msg
    # 3, 6, then min(8, 12) = 8 seconds, each within ±20 %.
    for delay, expected in zip(rec.delays, (3.0, 6.0, 8.0), strict=True):
        assert expected * 0.8 - 1e-9 <= delay <= expected * 1.2 + 1e-9


def test_max_retries_zero_and_jitter_zero(server: Server) -> None:
    server.default = status(503)
    emb, rec = client(server, max_retries=0)
    with pytest.raises(EmbeddingError, match="after 1 attempt"):
        emb.embed_documents(["a"])
    assert len(server.requests) == 1 and rec.delays == []
    server.requests.clear()
    emb2, rec2 = client(server, jitter=0.0, base_delay=0.25)
    with pytest.raises(EmbeddingError, match="HTTP 503"):
        emb2.embed_documents(["a"])
    assert rec2.delays == [0.25, 0.5, 1.0]


@pytest.mark.parametrize("code", [400, 401, 404, 422])
def test_client_errors_not_retried(server: Server, code: int) -> None:
    server.default = status(code, "bad input")
    emb, rec = client(server)
    with pytest.raises(EmbeddingError) as info:
        emb.embed_documents(["a"])
    assert len(server.requests) == 1 and rec.delays == []
    assert f"HTTP {code}" in str(info.value) and "after 1 attempt" in str(info.value)
    assert "bad input" in str(info.value)


def test_rate_limit_text_in_error_body_is_retried(server: Server) -> None:
    server.script = [status(400, "Rate limit exceeded for requests per minute")]
    emb, rec = client(server)
    emb.embed_documents(["a"])
    assert len(server.requests) == 2 and len(rec.delays) == 1


def test_dropped_connection_is_retried(server: Server) -> None:
    server.script = [lambda req: None]
    emb, rec = client(server)
    vecs = emb.embed_documents(["a b"])
    np.testing.assert_allclose(vecs, REFERENCE.embed_documents(["a b"]), atol=1e-6)
    assert len(server.requests) == 2 and len(rec.delays) == 1


def test_timeout_is_retried_then_fails(server: Server) -> None:
    server.default = lambda req: (*ok(req)[:2], 1.0)
    emb, rec = client(server, timeout=0.2, max_retries=2)
    start = time.monotonic()
    with pytest.raises(EmbeddingError) as info:
        emb.embed_documents(["a"])
    assert time.monotonic() - start < 3.0
    assert "timed out" in str(info.value) and "after 3 attempts" in str(info.value)
    assert len(rec.delays) == 2
    assert len(server.requests) == 3


def test_unreachable_server_fails_cleanly() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # Nothing listens on `port` now: connection refused, retried, then EmbeddingError.
    rec = SleepRecorder()
    emb = OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", sleep=rec, timeout=2.0)
    with pytest.raises(EmbeddingError, match="after 4 attempts"):
        emb.embed_documents(["a"])
    assert len(rec.delays) == 3


# -- malformed responses -------------------------------------------------------------------


def _with(mutate: Callable[[dict[str, Any]], Any]) -> Behaviour:
    def behaviour(req: dict[str, Any]) -> tuple[int, bytes, float]:
        body = json.loads(ok(req)[1])
        mutate(body)
        return 200, json.dumps(body).encode(), 0.0

    return behaviour


def _nan_strings(body: dict[str, Any]) -> None:
    body["data"][0]["embedding"] = ["NaN"] * DIM


def _ragged(body: dict[str, Any]) -> None:
    body["data"][0]["embedding"] = body["data"][0]["embedding"][:-1]


def _bad_index(body: dict[str, Any]) -> None:
    body["data"][0]["index"] = 5


MALFORMED: dict[str, Behaviour] = {
    "not json": raw(b"<html>gateway</html>"),
    "missing data": raw(b'{"object": "list"}'),
    "data not a list": raw(b'{"data": {"embedding": [1, 2]}}'),
    "wrong count": _with(lambda b: b["data"].pop()),
    "NaN strings": _with(_nan_strings),
    "ragged dimensions": _with(_ragged),
    "bad index": _with(_bad_index),
    "embedding missing": _with(lambda b: b["data"][0].pop("embedding")),
    "nested lists": _with(lambda b: b["data"][0].update(embedding=[[1.0, 2.0]])),
    "error object": raw(b'{"error": {"message": "model not found"}}'),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_responses(server: Server, case: str) -> None:
    server.default = MALFORMED[case]
    emb, rec = client(server)
    with pytest.raises(EmbeddingError, match=r"^openai: malformed response .* after 1 attempt"):
        emb.embed_documents(["one", "two"])
    assert len(server.requests) == 1 and rec.delays == [], "malformed bodies are not retried"


def test_wrong_dimension(server: Server) -> None:
    emb, _ = client(server, dimensions=DIM + 1)
    with pytest.raises(EmbeddingError, match=f"expected dimension {DIM + 1}, got {DIM}"):
        emb.embed_documents(["a"])
    # Without a configured dimension the first answer fixes it; a later change is an error.
    emb2, _ = client(server)
    emb2.embed_documents(["a"])
    server.default = lambda req: (200, json.dumps({"data": [{"embedding": [1.0] * 8}]}).encode(), 0)
    with pytest.raises(EmbeddingError, match=f"expected dimension {DIM}, got 8"):
        emb2.embed_documents(["b"])


# -- construction --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"base_url": "localhost:8080"}, "base_url must be an http"),
        ({"batch_size": 0}, "batch_size must be a finite integer > 0"),
        ({"max_retries": -1}, "max_retries must be a finite integer >= 0"),
        ({"timeout": 0}, "timeout must be a finite number > 0"),
        ({"jitter": 1.5}, r"jitter must be in \[0, 1\]"),
        ({"dimensions": 0}, "dimensions must be a finite integer > 0"),
        ({"headers": {"X-A": 1}}, "headers must map str to str"),
    ],
)
def test_constructor_validation(kwargs: dict[str, Any], message: str) -> None:
    args = {"base_url": "http://127.0.0.1:1/v1", **kwargs}
    with pytest.raises(ValueError, match=message):
        OpenAIEmbedder(**args)
