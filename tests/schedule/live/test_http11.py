"""The minimal HTTP/1.1 client: what it sends, and every answer framing it reads (against canned answers)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import pytest

from berth.schedule.live import http11


class Canned:
    """A one-connection TCP server that records what it received and answers with canned bytes, one per request."""

    def __init__(self, answers: list[bytes]) -> None:
        self.answers = answers
        self.received: list[bytes] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):  # the test closed the connection or the listener first
            self._answer()

    def _answer(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            buf = b""
            for answer in self.answers:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, rest = buf.partition(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    ),
                    0,
                )
                while len(rest) < length:
                    rest += conn.recv(65536)
                self.received.append(head + b"\r\n\r\n" + rest[:length])
                buf = rest[length:]
                conn.sendall(answer)

    def close(self) -> None:
        self.listener.close()


@pytest.fixture()
def serve() -> Iterator[list[Canned]]:
    servers: list[Canned] = []
    yield servers
    for s in servers:
        s.close()


def connect(serve: list[Canned], *answers: bytes) -> tuple[Canned, http11.Connection]:
    server = Canned(list(answers))
    serve.append(server)
    return server, http11.Connection("127.0.0.1", server.port)


@pytest.mark.parametrize(
    ("answer", "body", "closes"),
    [
        pytest.param(
            b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}", b"{}", False, id="content-length"
        ),
        pytest.param(
            b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\n{"a\r\n4\r\n": 1\r\n1\r\n}\r\n0\r\nX-T: 1\r\n\r\n',
            b'{"a": 1}',
            False,
            id="chunked-with-extension-and-trailer",
        ),
        pytest.param(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx",
            b"x",
            False,
            id="interim",
        ),
        pytest.param(b"HTTP/1.1 204 No Content\r\n\r\n", b"", False, id="no-content"),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", b"x", True, id="close"
        ),
        pytest.param(b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", b"x", True, id="http-1.0"),
    ],
)
def test_answer_framings(serve: list[Canned], answer: bytes, body: bytes, closes: bool) -> None:
    _, conn = connect(serve, answer)
    resp = conn.request("GET", "/x", {"Accept": "application/json"}, None, 5.0)
    assert (resp.body, resp.will_close) == (body, closes)
    conn.close()


def test_one_write_per_request_and_kept_alive(serve: list[Canned]) -> None:
    ok = b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
    server, conn = connect(serve, ok, ok)
    first = conn.request("POST", "/api/v1/x", {"Authorization": "Bearer t"}, b'{"k":1}', 5.0)
    second = conn.request("PATCH", "/api/v1/y", {}, None, 5.0)
    assert (first.status, first.reason, second.status) == (201, "Created", 201)
    assert server.received[0] == (
        b"POST /api/v1/x HTTP/1.1\r\nHost: 127.0.0.1:"
        + str(server.port).encode()
        + b'\r\nAuthorization: Bearer t\r\nContent-Length: 7\r\n\r\n{"k":1}'
    )
    assert server.received[1].endswith(b"\r\nContent-Length: 0\r\n\r\n")  # same connection, empty body
    conn.close()


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        pytest.param(b"", ConnectionError, id="closed-before-answering"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", ConnectionError, id="cut-short"),
        pytest.param(b"garbage\r\n\r\n", http11.ProtocolError, id="bad-status-line"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", http11.ProtocolError, id="bad-length"),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            http11.ProtocolError,
            id="bad-chunk",
        ),
    ],
)
def test_broken_answers_raise(serve: list[Canned], answer: bytes, error: type[Exception]) -> None:
    server = Canned([answer])
    serve.append(server)
    conn = http11.Connection("127.0.0.1", server.port)
    with pytest.raises(error):
        # the canned server closes after its one answer, so a short answer ends in EOF
        conn.request("GET", "/", {}, None, 5.0)
    conn.close()


def test_header_injection_is_refused(serve: list[Canned]) -> None:
    _, conn = connect(serve, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    with pytest.raises(ValueError, match="line break"):
        conn.request("GET", "/", {"Authorization": "Bearer t\r\nX-Evil: 1"}, None, 5.0)
    conn.close()


def test_pipelined_requests_leave_in_one_write_and_answers_come_in_order(serve: list[Canned]) -> None:
    created = b"HTTP/1.1 201 Created\r\nContent-Length: 7\r\n\r\n" + b'{"n":1}'
    conflict = b"HTTP/1.1 409 Conflict\r\nContent-Length: 2\r\n\r\n{}"
    server, conn = connect(serve, created, conflict, created)
    answers = conn.pipeline(
        [("POST", f"/b/{i}", {"Content-Type": "application/json"}, b'{"i":%d}' % i) for i in range(3)], 5.0
    )
    assert [(a.status, a.body) for a in answers] == [(201, b'{"n":1}'), (409, b"{}"), (201, b'{"n":1}')]
    assert [r.split(b" ")[1] for r in server.received] == [b"/b/0", b"/b/1", b"/b/2"]
    conn.close()


def test_a_pipeline_ends_at_an_answer_that_closes_the_connection(serve: list[Canned]) -> None:
    """The server reads no request after an answer with ``Connection: close``: the rest come back unanswered (a
    shorter list), for the caller to send again on a new connection."""
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
    closing = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    _, conn = connect(serve, ok, closing)
    answers = conn.pipeline([("GET", f"/{i}", {}, None) for i in range(4)], 5.0)
    assert [a.will_close for a in answers] == [False, True]
    conn.close()


def test_a_pipeline_cut_midway_keeps_the_answers_it_read(serve: list[Canned]) -> None:
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    _, conn = connect(serve, ok)  # the server answers one request, then closes
    with pytest.raises(ConnectionError):
        conn.pipeline([("GET", f"/{i}", {}, None) for i in range(3)], 5.0)
    assert [a.status for a in conn.answered] == [200]
    conn.close()


@pytest.mark.parametrize(
    ("answer", "lines"),
    [
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b'7\r\n{"a":1}\r\n1\r\n\n\r\n11\r\n{"b":2}\n{"c":3}\r\n\r\n3;x=y\r\n\n\n\n\r\n0\r\n\r\n',
            [b'{"a":1}', b'{"b":2}', b'{"c":3}', b"", b"", b""],
            id="chunked: a line across chunks, lines in one chunk, CRLF and empty lines",
        ),
        pytest.param(
            b'HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n{"a":1}\n{"b":2}\nextra',
            [b'{"a":1}', b'{"b":2}'],
            id="content-length",
        ),
        pytest.param(b'HTTP/1.1 200 OK\r\n\r\n{"a":1}\n{"b"', [b'{"a":1}', b'{"b"'], id="until-closed"),
    ],
)
def test_streamed_answers_come_as_lines(serve: list[Canned], answer: bytes, lines: list[bytes]) -> None:
    _, conn = connect(serve, answer)
    resp, got = conn.stream("GET", "/w?watch=true", {}, 5.0)
    assert (resp.status, resp.body) == (200, b"")
    assert list(got) == lines
    conn.close()


def test_a_streamed_error_answer_is_read_whole_and_a_cut_stream_raises(serve: list[Canned]) -> None:
    _, conn = connect(serve, b'HTTP/1.1 410 Gone\r\nContent-Length: 11\r\n\r\n{"code":41}')
    resp, got = conn.stream("GET", "/w", {}, 5.0)
    assert (resp.status, resp.body, list(got)) == (410, b'{"code":41}', [])
    conn.close()
    _, conn = connect(serve, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n{}\n")
    _, got = conn.stream("GET", "/w", {}, 5.0)
    with pytest.raises(ConnectionError):
        list(got)
    conn.close()
    _, conn = connect(serve, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
    _, got = conn.stream("GET", "/w", {}, 5.0)
    with pytest.raises(http11.ProtocolError):
        list(got)
    conn.close()
