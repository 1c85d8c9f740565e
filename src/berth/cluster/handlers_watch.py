"""Watch streams: chunked JSON lines, one event each, BOOKMARKs when asked, ended at ``timeoutSeconds``."""

from __future__ import annotations

import json
import time

from berth.cluster import errors as E
from berth.cluster import jsonfast, objmeta, request_warnings
from berth.cluster.api import ApiError, Watch
from berth.cluster.api.watch import RawObject
from berth.cluster.http_base import PARTIAL_MARK, TABLE_MARK, HandlerBase, partial_object, truthy
from berth.cluster.resources import ResourceType
from berth.kube.objects import Obj

DEFAULT_WATCH_TIMEOUT = 1800
BOOKMARK_EVERY = 60.0
FINAL_BOOKMARK_LEAD = 2.0
"""Seconds before a watch's timeout at which its last BOOKMARK goes out (upstream's cacher: 2 s)."""


class WatchHandlers(HandlerBase):
    def _watch(
        self, rt: ResourceType, version: str, namespace: str, name: str, query: dict[str, str], accept: str
    ) -> int:
        """Serve one watch request: parse its options, send the initial events or resume from a resourceVersion,
        then stream changes with bookmarks until the timeout. Past the size guide on purpose: the options interact
        (sendInitialEvents, resourceVersionMatch, allowWatchBookmarks, the 410 for a compacted version) in the
        order kube-apiserver checks them, and splitting the stream loop from that setup would pass a dozen locals."""
        api = self.server.api
        field_selector = query.get("fieldSelector", "")
        if name:
            field_selector = ",".join(filter(None, [field_selector, f"metadata.name={name}"]))
        send_initial = query.get("sendInitialEvents")
        initial: bool | None = None if send_initial is None else truthy(send_initial)
        bookmarks = truthy(query.get("allowWatchBookmarks"))
        if initial is not None:
            if query.get("resourceVersionMatch") != "NotOlderThan":
                raise E.invalid(
                    "ListOptions",
                    "",
                    [
                        E.forbidden_field(
                            "resourceVersionMatch",
                            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                        )
                    ],
                    "meta.k8s.io",
                )
            if initial and not bookmarks:
                raise E.invalid(
                    "ListOptions",
                    "",
                    [
                        E.forbidden_field(
                            "allowWatchBookmarks",
                            "sendInitialEvents requires setting allowWatchBookmarks to true",
                        )
                    ],
                    "meta.k8s.io",
                )
        try:
            timeout = float(query.get("timeoutSeconds") or DEFAULT_WATCH_TIMEOUT)
        except ValueError as exc:
            raise E.bad_request(f"invalid timeoutSeconds {query.get('timeoutSeconds')!r}") from exc
        compact_accept = accept.replace(" ", "")
        table = TABLE_MARK in compact_accept
        partial = not table and PARTIAL_MARK in compact_accept
        error: ApiError | None = None
        w: Watch | None = None
        try:
            w = api.do_watch(
                rt,
                namespace or None,
                query.get("resourceVersion"),
                query.get("labelSelector", ""),
                field_selector,
                send_initial_events=initial,
                version=version,
            )
            w.raw_text = True
        except ApiError as exc:
            if exc.code != 410:
                raise
            error = exc
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Transfer-Encoding", "chunked")
        # The connection ends with the stream. Said in a header, or a client that read the stream to its end puts
        # the connection back in its pool and its next request meets the close (RemoteDisconnected).
        self.send_header("Connection", "close")
        for text in request_warnings.current():
            self.send_header("Warning", request_warnings.header_value(text))
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        if error is not None or w is None:
            assert error is not None
            self._chunk(json.dumps({"type": "ERROR", "object": error.status()}).encode() + b"\n")
            self._chunk(b"")
            return 200
        deadline = time.monotonic() + timeout
        # As upstream's watch cache: with bookmarks asked for, one goes out shortly before the watch times out, so
        # the client resumes from the newest revision instead of the last event it saw.
        final_bookmark = deadline - FINAL_BOOKMARK_LEAD if bookmarks else float("inf")
        last_sent = time.monotonic()

        def send(typ: str, obj: Obj) -> None:
            if isinstance(obj, RawObject):  # the stored text, unchanged: no decode and re-encode per watcher
                self._chunk(b'{"type":"' + typ.encode() + b'","object":' + obj.encode() + b"}\n")
                return
            if partial:
                obj = partial_object(obj)
            self._chunk(jsonfast.dumps_bytes({"type": typ, "object": obj}) + b"\n")

        try:
            while not self.server.stopping.is_set():
                now = time.monotonic()
                left = deadline - now
                if left <= 0:
                    break
                if now >= final_bookmark and w.idle:
                    send("BOOKMARK", w.bookmark())
                    final_bookmark = float("inf")
                    last_sent = now
                try:
                    ev = w.next_event(max(0.0, min(left, 1.0, final_bookmark - now)))
                except ApiError as exc:
                    self._chunk(json.dumps({"type": "ERROR", "object": exc.status()}).encode() + b"\n")
                    break
                if ev is None:
                    if w.closed or self._client_gone():
                        break
                    if bookmarks and time.monotonic() - last_sent > BOOKMARK_EVERY:
                        send("BOOKMARK", w.bookmark())
                        last_sent = time.monotonic()
                    continue
                typ, obj = ev
                if typ == "BOOKMARK" and not bookmarks:
                    continue
                if isinstance(obj, RawObject) and (table or partial):
                    obj = objmeta.loads(obj)
                if table and typ != "BOOKMARK":
                    obj = self._table(
                        rt,
                        [obj],
                        str((obj.get("metadata") or {}).get("resourceVersion", "")),
                        "",
                        query,
                        version=version,
                    )
                send(typ, obj)
                last_sent = time.monotonic()
            self._chunk(b"")
        except (ConnectionError, BrokenPipeError, OSError):
            pass
        finally:
            w.close()
        return 200
