"""A minimal HTTP/1.1 client connection for the live scheduler's request/answer calls.

Why not ``http.client``: per request it builds headers one ``putheader`` call at a time, sends headers and body in
two writes, and parses the answer's headers into an ``email.message.Message`` -- together about half of the client
CPU of a binding, measured on ``berth bench schedule --live``. The API server's answers need none of that: a status
line, a few headers of which three matter (``Content-Length``, ``Transfer-Encoding``, ``Connection``) and a JSON
body. This module sends one write per request and reads exactly those headers.

What it supports: requests on a kept-alive connection (plain or TLS), one at a time or pipelined (several sent in
one write, their answers read in order: :meth:`Connection.pipeline`), bodies with ``Content-Length``, ``chunked``
bodies (trailers skipped), bodies delimited by the connection closing, interim 1xx answers (skipped).
Not supported, and never sent by berth: ``Expect: 100-continue``, compression. Errors are the socket's
(``OSError``; :class:`ConnectionError` when the server closed the connection before answering, which the caller
may retry once on a reused connection) or :class:`ProtocolError` for a malformed answer.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO

MAX_LINE = 65536
MAX_HEADERS = 200


Request = tuple[str, str, dict[str, str], bytes | None]
"""method, target, headers (without Host and Content-Length), body."""


class ProtocolError(ValueError):
    """The server's answer is not valid HTTP/1.1."""


@dataclass(frozen=True)
class Response:
    status: int
    reason: str
    body: bytes
    will_close: bool  # the server closes the connection after this answer


class Connection:
    """One connection to ``host:port`` (TLS when ``context`` is given), opened on first use."""

    def __init__(self, host: str, port: int, context: ssl.SSLContext | None = None) -> None:
        self.host = host
        self.port = port
        self.context = context
        self._host_header = host if port in (80, 443) else f"{host}:{port}"
        if ":" in host and not host.startswith("["):  # an IPv6 literal
            self._host_header = f"[{host}]:{port}"
        self.sock: socket.socket | None = None
        self._rfile: BinaryIO | None = None
        self.answered: list[Response] = []  # the answers the last pipeline() read (kept when it failed)

    def connect(self, timeout: float | None) -> None:
        sock = socket.create_connection((self.host, self.port), timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.context is not None:
            try:
                sock = self.context.wrap_socket(sock, server_hostname=self.host)
            except BaseException:
                sock.close()
                raise
        self.sock = sock
        self._rfile = sock.makefile("rb")

    def close(self) -> None:
        rfile, sock = self._rfile, self.sock
        self._rfile = self.sock = None
        if rfile is not None:
            rfile.close()
        if sock is not None:
            sock.close()

    def request(
        self,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes | None,
        timeout: float | None,
    ) -> Response:
        """Send one request and read its whole answer."""
        return self.pipeline([(method, target, headers, body)], timeout)[0]

    def pipeline(self, requests: Sequence[Request], timeout: float | None) -> list[Response]:
        """Send several requests in one write and read their answers, in order (HTTP/1.1 pipelining: the server
        answers each in turn on this connection; one TLS record and one round trip for all of them).

        Answers read before a failure are kept in :attr:`answered` (the failure is raised: the requests after
        them may or may not have been carried out). An answer that closes the connection ends the batch there:
        the server read no request after it, so the rest come back unsent, as a shorter list."""
        if self.sock is None:
            self.connect(timeout)
        assert self.sock is not None
        self.sock.settimeout(timeout)
        answers: list[Response] = []
        self.answered = answers
        self.sock.sendall(b"".join(self._encode(*request) for request in requests))
        for method, *_ in requests:
            answer = self._read_response(method)
            answers.append(answer)
            if answer.will_close:
                break
        return answers

    def _encode(self, method: str, target: str, headers: dict[str, str], body: bytes | None) -> bytes:
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self._host_header}"]
        for key, value in headers.items():
            if "\r" in value or "\n" in value or "\r" in key or "\n" in key:
                raise ValueError(f"header {key!r} contains a line break")
            lines.append(f"{key}: {value}")
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body or b'')}")
        message = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        return message + body if body else message

    def _readline(self) -> bytes:
        assert self._rfile is not None
        line = self._rfile.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise ProtocolError("answer line too long")
        return line

    def stream(
        self, method: str, target: str, headers: dict[str, str], timeout: float | None
    ) -> tuple[Response, Iterator[bytes]]:
        """Send one request whose answer streams (a watch): its status line and headers (``body`` empty) when it
        succeeded (2xx), and an iterator over the lines of its body as they arrive, without their line ends --
        de-chunked from whatever the socket holds per read, so a burst of events costs one read, not three per
        event. An error answer (not 2xx) is read whole, body included, and the iterator is empty. The iterator
        ends when the body does (or raises as a read does: ``OSError``, :class:`ProtocolError`). The connection
        is not reused afterwards (``will_close``)."""
        if self.sock is None:
            self.connect(timeout)
        assert self.sock is not None
        self.sock.settimeout(timeout)
        self.sock.sendall(self._encode(method, target, headers, None))
        status, reason, length, chunked, _ = self._read_head()
        if not 200 <= status <= 299 or method == "HEAD" or status in (204, 304):
            return Response(status, reason, self._read_body(method, status, length, chunked), True), iter(())
        return Response(status, reason, b"", True), self._lines(length, chunked)

    def _lines(self, length: int | None, chunked: bool) -> Iterator[bytes]:
        """The lines of a streamed body (without their line ends), each as soon as it has arrived whole."""
        rest = b""  # body bytes not yet cut into lines
        for piece in self._dechunked() if chunked else self._sized(length):
            rest += piece
            if b"\n" in rest:
                *lines, rest = rest.split(b"\n")
                yield from (line.rstrip(b"\r") for line in lines)
        if rest:
            yield rest

    def _sized(self, length: int | None) -> Iterator[bytes]:
        """A body of ``length`` bytes (None: until the server closes), as the reads bring it."""
        read1 = self._rfile.read1  # type: ignore[union-attr]
        left = length
        while left is None or left > 0:
            more = read1(65536)
            if not more:
                if left is not None:
                    raise ConnectionError("answer cut short inside a streamed body")
                return
            if left is not None:
                more = more[:left]
                left -= len(more)
            yield more

    def _dechunked(self) -> Iterator[bytes]:
        """A chunked body's chunks, de-chunked from whatever each read holds (a burst of chunks is one read); ends
        at the last chunk (its trailers are not read: the connection is not reused)."""
        read1 = self._rfile.read1  # type: ignore[union-attr]
        data = b""  # bytes read, not yet de-chunked
        while True:
            more = read1(65536)
            if not more:
                raise ConnectionError("answer cut short inside a streamed body")
            data += more
            pos = 0
            while (nl := data.find(b"\r\n", pos)) >= 0:
                size = _chunk_size(data[pos:nl])
                if size == 0:
                    return
                end = nl + 2 + size
                if len(data) < end + 2:
                    break  # the chunk's end is still to come
                yield data[nl + 2 : end]
                pos = end + 2
            else:
                if len(data) - pos > MAX_LINE:
                    raise ProtocolError("chunk size line too long")
            data = data[pos:]

    def _read_response(self, method: str) -> Response:
        status, reason, length, chunked, close = self._read_head()
        data = self._read_body(method, status, length, chunked)
        if length is None and not chunked and method != "HEAD" and status not in (204, 304):
            close = True  # a body delimited by the connection closing
        return Response(status, reason, data, close)

    def _read_head(self) -> tuple[int, str, int | None, bool, bool]:
        """The answer's status, reason, Content-Length (None: none), whether chunked and whether the server
        closes the connection after it; interim 1xx answers skipped."""
        while True:
            line = self._readline()
            if not line:
                raise ConnectionError("the server closed the connection without answering")
            version, _, rest = line.decode("latin-1").rstrip("\r\n").partition(" ")
            code, _, reason = rest.partition(" ")
            if not version.startswith("HTTP/") or not code.isdigit():
                raise ProtocolError(f"malformed status line {line[:80]!r}")
            status = int(code)
            length: int | None = None
            chunked = False
            close = version == "HTTP/1.0"
            for _ in range(MAX_HEADERS + 1):
                header = self._readline()
                if header in (b"\r\n", b"\n", b""):
                    break
                name, _, value = header.decode("latin-1").partition(":")
                name, value = name.strip().lower(), value.strip()
                if name == "content-length":
                    if not value.isdigit():
                        raise ProtocolError(f"bad Content-Length {value!r}")
                    length = int(value)
                elif name == "transfer-encoding":
                    chunked = value.lower().endswith("chunked")
                elif name == "connection":
                    tokens = {t.strip().lower() for t in value.split(",")}
                    close = "close" in tokens or (close and "keep-alive" not in tokens)
            else:
                raise ProtocolError("too many headers")
            if 100 <= status < 200 and status != 101:
                continue  # an interim answer: the real one follows
            return status, reason, length, chunked, close

    def _read_body(self, method: str, status: int, length: int | None, chunked: bool) -> bytes:
        rfile = self._rfile
        assert rfile is not None
        if method == "HEAD" or status in (204, 304):
            return b""
        if chunked:
            return self._read_chunked()
        if length is not None:
            data = rfile.read(length)
            if len(data) < length:
                raise ConnectionError(f"answer cut short: {len(data)} of {length} bytes")
            return data
        return rfile.read()

    def _read_chunked(self) -> bytes:
        rfile = self._rfile
        assert rfile is not None
        parts: list[bytes] = []
        while True:
            size_line = self._readline()
            if not size_line:
                raise ConnectionError("answer cut short inside a chunked body")
            size = _chunk_size(size_line)
            if size == 0:
                while self._readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
            chunk = rfile.read(size)
            if len(chunk) < size:
                raise ConnectionError("answer cut short inside a chunk")
            parts.append(chunk)
            self._readline()  # the CRLF after the chunk


def _chunk_size(line: bytes) -> int:
    """The size a chunk's size line gives (hexadecimal; extensions after ``;`` ignored)."""
    size_text = line.split(b";", 1)[0].strip()
    try:
        return int(size_text, 16)
    except ValueError as exc:
        raise ProtocolError(f"bad chunk size {size_text[:20]!r}") from exc
