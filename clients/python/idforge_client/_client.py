"""The Python client of idforge's HTTP API; see the package docstring."""

from __future__ import annotations

import concurrent.futures
import datetime
import http.client
import json
import math
import re
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, TypeVar

from ._codes import CODES

DEFAULT_TIMEOUT = 5.0
"""Seconds one call may take by default, every attempt and retry included."""
DEFAULT_RETRIES = 2
"""How many times a failed call is retried, on the next node, by default."""
DEFAULT_REFILL_AT = 0.2
"""The share of a cached block left when the next block is fetched, by default."""
MAX_COUNT = 10_000
"""The most IDs or serials one request may ask a server for (idforge.MaxCount)."""

_COOL_DOWN = 30.0  # seconds a node that failed is passed over
_BACKOFF_MIN, _BACKOFF_MAX = 0.02, 0.5  # between rounds once every node failed
_REFETCH_PAUSE = 0.1  # a failed background fetch keeps the next from starting
_KEY_NAME = re.compile(r"[A-Za-z0-9._:-]{1,128}\Z")

T = TypeVar("T")


class IdForgeError(Exception):
    """The one exception of the client.

    ``code`` is a word of idforge's error vocabulary (``unknown_key``,
    ``retired``, ``unavailable``, ...), the HTTP API's ``error.code``; a word
    this client does not know (from a newer server) is ``internal``, the word
    kept in the message. ``retryable`` says whether the same call may succeed
    later or on another node (the client has already failed over as far as
    its retries allowed). ``http_status`` is the answer's status, 0 when no
    node answered; ``server`` the node that answered, None when none did.
    """

    def __init__(self, code: str, message: str, *, retryable: Optional[bool] = None,
                 http_status: int = 0, server: Optional[str] = None):
        if code not in CODES:
            message, code = f"{code}: {message}", "internal"
        self.code = code
        self.retryable = CODES[code][1] if retryable is None else retryable
        self.http_status = http_status
        self.server = server
        where = f" from {server}" if server else ""
        super().__init__(f"{message} ({code}{where})")


@dataclass(frozen=True)
class Explanation:
    """A snowflake ID decoded into its fields with the answering node's layout."""

    id: int
    layout: str
    time: datetime.datetime  # the start of the ID's tick, UTC
    ticks: int
    datacenter: int
    worker: int
    sequence: int
    expires: datetime.datetime  # when the layout's time bits run out


def _parse_time(s: str) -> datetime.datetime:
    # RFC 3339 as Go writes it; fromisoformat before 3.11 takes neither "Z"
    # nor more than six fractional digits.
    m = re.match(r"(.*?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", s)
    if not m:
        raise ValueError(f"time {s!r}")
    frac = (m.group(2) or "")[:6].ljust(6, "0")
    tz = "+00:00" if m.group(3) == "Z" else m.group(3)
    return datetime.datetime.fromisoformat(f"{m.group(1)}.{frac}{tz}")


def _check_key(key: str) -> None:
    if not isinstance(key, str) or not _KEY_NAME.match(key):
        raise IdForgeError("invalid_key", f"invalid key name {key!r}: 1 to 128 characters of A-Z a-z 0-9 . _ : -")


def _check_count(n: int) -> None:
    if n < 1:
        raise IdForgeError("invalid_count", f"invalid count: {n} (want at least 1)")


class _Node:
    __slots__ = ("base", "scheme", "host", "port", "prefix", "down_until")

    def __init__(self, url: str):
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname or u.query or u.fragment:
            raise ValueError(f"node {url!r} is not an http(s)://host:port URL")
        self.base = url.rstrip("/")
        self.scheme, self.host = u.scheme, u.hostname
        self.port = u.port or (443 if u.scheme == "https" else 80)
        self.prefix = u.path.rstrip("/")
        self.down_until = 0.0  # time.monotonic(); 0 while healthy


def _garbled(node: _Node, what: str) -> IdForgeError:
    return IdForgeError("unavailable", f"unreadable answer: {what}", retryable=True, http_status=200, server=node.base)


class _Remote:
    """The nodes of one client and the rules of failing over between them,
    the Go client's: a call goes to the most preferred node that has not
    failed recently (sticky, so a segment key's IDs increase); a failure
    another node may not have (no answer, an answer whose code is retryable,
    a proxy's 502/503/504) sets the node aside for 30 s and the call is
    retried on the next node, at most ``retries`` times, within the call's
    timeout; any other answer is final. While another node is left to try an
    attempt gets at most half the time left, so that a node that hangs leaves
    time for the next."""

    def __init__(self, nodes: Sequence[str], token: Optional[str], timeout: float, retries: int,
                 ssl_context: Optional[ssl.SSLContext]):
        self.nodes = [_Node(u) for u in nodes]
        self.auth = f"Bearer {token}" if token else None
        self.timeout = timeout
        self.retries = retries
        self.ssl_context = ssl_context
        self.closed = False
        self._local = threading.local()  # per thread: node base -> connection
        self._conns: set = set()  # every thread's, for close
        self._conns_lock = threading.Lock()

    def _pick(self, tried: set) -> Optional[_Node]:
        now = time.monotonic()
        best = None
        for n in self.nodes:
            if n.base in tried:
                continue
            if n.down_until <= now:
                return n
            if best is None or n.down_until < best.down_until:
                best = n
        return best

    def call(self, op: Callable[[_Node, float], T]) -> T:
        if self.closed:
            raise _closed()
        deadline = time.monotonic() + self.timeout
        tried: set = set()
        backoff = _BACKOFF_MIN
        last: Optional[IdForgeError] = None
        attempt = 0
        while True:
            n = self._pick(tried)
            if n is None:  # every node failed in this round
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                time.sleep(min(backoff, left))
                backoff = min(2 * backoff, _BACKOFF_MAX)
                tried = set()
                n = self._pick(tried)
            tried.add(n.base)
            left = deadline - time.monotonic()
            if left <= 0:
                break
            more = attempt < self.retries and self._pick(tried) is not None
            try:
                v = op(n, left / 2 if more else left)
                n.down_until = 0.0
                return v
            except IdForgeError as e:
                last = e
                if not e.retryable:
                    raise
                n.down_until = time.monotonic() + _COOL_DOWN
                if attempt >= self.retries or self.closed:
                    break
            attempt += 1
        if time.monotonic() >= deadline:
            why = f"; last error: {last}" if last else ""
            raise IdForgeError("timeout", f"no answer within {self.timeout} s{why}", retryable=True)
        raise last

    def _conn(self, n: _Node, timeout: float, fresh: bool) -> http.client.HTTPConnection:
        conns = getattr(self._local, "conns", None)
        if conns is None:
            conns = self._local.conns = {}
        c = None if fresh else conns.get(n.base)
        if c is None:
            if n.scheme == "https":
                c = http.client.HTTPSConnection(n.host, n.port, timeout=timeout, context=self.ssl_context)
            else:
                c = http.client.HTTPConnection(n.host, n.port, timeout=timeout)
            conns[n.base] = c
            with self._conns_lock:
                self._conns.add(c)
        c.timeout = timeout
        if c.sock is not None:
            c.sock.settimeout(timeout)
        return c

    def _drop(self, n: _Node) -> None:
        c = getattr(self._local, "conns", {}).pop(n.base, None)
        if c is not None:
            c.close()
            with self._conns_lock:
                self._conns.discard(c)

    def get(self, n: _Node, path: str, timeout: float) -> dict:
        """GET on n: the JSON object of a 200 answer, or the node's error."""
        headers = {"Accept": "application/json"}
        if self.auth:
            headers["Authorization"] = self.auth
        reused = getattr(self._local, "conns", {}).get(n.base) is not None
        for fresh in (False, True):
            c = self._conn(n, timeout, fresh)
            try:
                c.request("GET", n.prefix + path, headers=headers)
                resp = c.getresponse()
                status, body = resp.status, resp.read()
                break
            except (OSError, http.client.HTTPException) as e:
                self._drop(n)
                # A kept-alive connection the node closed meanwhile: once more
                # on a new one (a lost answer is a gap, never a duplicate).
                stale = isinstance(e, (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError))
                if fresh or not reused or not stale:
                    raise IdForgeError("unavailable", f"no answer: {e!r}", retryable=True, server=n.base) from e
        if status != 200:
            raise _error_of(n, status, body)
        try:
            answer = json.loads(body)
        except ValueError as e:
            raise _garbled(n, str(e)) from None
        if not isinstance(answer, dict):
            raise _garbled(n, "not an object")
        return answer

    def close(self) -> None:
        self.closed = True
        with self._conns_lock:
            conns, self._conns = self._conns, set()
        for c in conns:
            c.close()


def _closed() -> IdForgeError:
    return IdForgeError("shutting_down", "client closed", retryable=False)


def _error_of(n: _Node, status: int, body: bytes) -> IdForgeError:
    """An error answer: {"error":{"code","message"}} from idforge, anything
    else from whatever stands in between (a proxy's 502 is retryable)."""
    try:
        e = json.loads(body).get("error")
        if isinstance(e, dict) and isinstance(e.get("code"), str) and e["code"]:
            return IdForgeError(e["code"], str(e.get("message")), http_status=status, server=n.base)
    except (ValueError, AttributeError):
        pass
    retry = status in (502, 503, 504)
    text = body.decode("utf-8", "replace").strip()[:200] or f"HTTP {status}"
    return IdForgeError("unavailable" if retry else "internal", text, retryable=retry, http_status=status, server=n.base)


def _strings(n: _Node, answer: dict, field: str, count: int) -> List[str]:
    v = answer.get(field)
    if not isinstance(v, list) or not 1 <= len(v) <= count or not all(isinstance(s, str) for s in v):
        raise _garbled(n, f"asked for {count} values, got {v!r}")
    return v


class _Block:
    """A run of IDs the server issued, handed out in order (under the key's lock)."""

    __slots__ = ("ranges", "i", "off", "left")

    def __init__(self, ranges: List[List[int]]):
        self.ranges = ranges  # [start, count] each
        self.i = self.off = 0
        self.left = sum(c for _, c in ranges)

    @classmethod
    def of(cls, ids: List[int]) -> "_Block":
        ranges: List[List[int]] = []
        for i in ids:
            if ranges and i == ranges[-1][0] + ranges[-1][1]:
                ranges[-1][1] += 1
            else:
                ranges.append([i, 1])
        return cls(ranges)

    def take(self, k: int, out: List[int]) -> None:
        while k > 0 and self.left > 0:
            start, count = self.ranges[self.i]
            m = min(k, count - self.off)
            out.extend(range(start + self.off, start + self.off + m))
            self.off += m
            self.left -= m
            k -= m
            if self.off == count:
                self.i += 1
                self.off = 0


class _KeyCache:
    __slots__ = ("path", "cond", "cached", "cur", "ahead", "fetching", "completions", "failure", "failed_at",
                 "fetches")

    def __init__(self, path: str, cached: bool):
        self.path = path
        self.cond = threading.Condition()
        self.cached = cached
        self.cur: Optional[_Block] = None
        self.ahead: Optional[_Block] = None
        self.fetching = False
        self.completions = 0
        self.failure: Optional[IdForgeError] = None
        self.failed_at = 0.0
        self.fetches = 0


class _RangeCache:
    """The range cache of segment keys, the Go client's WithRangeCache: a
    block of a key's IDs comes with one request (GET
    /v1/ids/{key}?count=batch&form=ranges) and is handed out from memory;
    once refill_at of it is left the next block is fetched in the
    background. Every ID handed out is one the server issued, handed out
    once (blocks are taken under the key's lock); IDs cached when the client
    closes or the process dies are lost: gaps, never duplicates."""

    def __init__(self, remote: _Remote, batch: int, refill_at: float):
        self.remote = remote
        self.batch = batch
        self.low = math.ceil(refill_at * batch)
        self.keys: Dict[str, _KeyCache] = {}
        self.lock = threading.Lock()
        # Reused threads, so that fetches reuse their connections.
        self.fetcher = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="idforge-range-cache")

    def lookup(self, key: str) -> Optional[_KeyCache]:
        kc = self.keys.get(key)
        if kc is None:
            _check_key(key)
            with self.lock:  # one strategy lookup per key at a time
                kc = self.keys.get(key)
                if kc is None:
                    answer = self.remote.call(lambda n, t: self.remote.get(n, f"/v1/keys/{key}", t))
                    path = f"/v1/ids/{key}?count={self.batch}&form=ranges"
                    # IDs of a key in global order, cached here, would be
                    # handed out after other clients got higher ones.
                    cacheable = answer.get("strategy") == "segment" and answer.get("order") != "global"
                    kc = self.keys[key] = _KeyCache(path, cacheable)
        return kc if kc.cached else None

    def take(self, kc: _KeyCache, n: int) -> List[int]:
        out: List[int] = []
        deadline = time.monotonic() + self.remote.timeout + 1.0
        with kc.cond:
            while True:
                while len(out) < n:
                    if kc.cur is not None and kc.cur.left > 0:
                        kc.cur.take(n - len(out), out)
                    elif kc.ahead is not None:
                        kc.cur, kc.ahead = kc.ahead, None
                    else:
                        break
                if len(out) == n:
                    self._refill(kc)
                    return out
                err = self._wait(kc, deadline)
                if err is not None and (kc.cur is None or kc.cur.left == 0) and kc.ahead is None:
                    if out:
                        kc.cur = _Block.of(out)  # taken but handed to no caller
                    raise err

    def _refill(self, kc: _KeyCache) -> None:
        left = kc.cur.left if kc.cur is not None else 0
        if (not kc.fetching and kc.ahead is None and left <= self.low
                and (kc.failure is None or time.monotonic() - kc.failed_at >= _REFETCH_PAUSE)):
            self._start_fetch(kc)

    def _start_fetch(self, kc: _KeyCache) -> bool:
        if self.remote.closed:
            return False
        try:
            self.fetcher.submit(self._fetch, kc)
        except RuntimeError:  # shut down
            return False
        kc.fetching = True
        return True

    def _fetch(self, kc: _KeyCache) -> None:
        block, err = None, None
        try:
            block = self.remote.call(lambda n, t: self._block(n, kc.path, t))
        except IdForgeError as e:
            err = e
        except Exception as e:  # noqa: BLE001 - a waiting caller must hear of it
            err = IdForgeError("internal", f"fetching a block: {e!r}")
        with kc.cond:
            kc.fetching = False
            kc.fetches += 1
            kc.completions += 1
            kc.failure = err
            if err is not None:
                kc.failed_at = time.monotonic()
            elif kc.cur is None or kc.cur.left == 0:
                kc.cur = block
            else:
                kc.ahead = block
            kc.cond.notify_all()

    def _block(self, n: _Node, path: str, timeout: float) -> _Block:
        ranges = self.remote.get(n, path, timeout).get("ranges")
        if not isinstance(ranges, list) or not ranges:
            raise _garbled(n, "no ranges")
        out, total = [], 0
        for r in ranges:
            try:
                start, count = int(r["start"]), r["count"]
            except (TypeError, KeyError, ValueError):
                raise _garbled(n, f"range {r!r}") from None
            if not isinstance(count, int) or not 1 <= count <= self.batch - total or start + count - 1 > 2**63 - 1:
                raise _garbled(n, f"range {r!r} in an answer for {self.batch} IDs")
            out.append([start, count])
            total += count
        return _Block(out)

    def _wait(self, kc: _KeyCache, deadline: float) -> Optional[IdForgeError]:
        """Waits for the running fetch (starting one if none runs); returns its failure. Holds kc.cond."""
        if not kc.fetching and not self._start_fetch(kc):
            return _closed()
        seen = kc.completions
        while kc.completions == seen:
            left = deadline - time.monotonic()
            if left <= 0:
                return IdForgeError("timeout", "no block of IDs arrived in time")
            kc.cond.wait(left)
        return kc.failure


class IdForge:
    """A client of idforge's HTTP API; see the package docstring.

    ``nodes`` are the nodes' base URLs (``http://host:port``, ``https://...``,
    optionally with a path prefix) in order of preference: put the nodes of
    the caller's own data center first. ``token`` is sent as
    ``Authorization: Bearer``. ``timeout`` bounds each call in seconds, every
    attempt and retry included; ``retries`` is how many times a failed call is
    retried on the next node (only failures another node may not have: no
    answer, or a retryable code); 0 turns fail-over off. ``range_cache``
    (a batch size, 1 to MAX_COUNT) caches IDs of segment keys in the client
    (not those in global order), the next block fetched in the background once ``refill_at`` of a block is
    left. A client is safe for use by any number of threads: make one per
    process and share it.
    """

    def __init__(self, nodes: Sequence[str], *, token: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT,
                 retries: int = DEFAULT_RETRIES, range_cache: int = 0, refill_at: float = DEFAULT_REFILL_AT,
                 ssl_context: Optional[ssl.SSLContext] = None):
        if isinstance(nodes, str):
            nodes = [nodes]
        if not nodes or len(nodes) > 64:
            raise ValueError(f"{len(nodes)} nodes: give 1 to 64")
        if not timeout > 0:
            raise ValueError(f"timeout {timeout} is not positive")
        if retries < 0:
            raise ValueError(f"retries {retries} is negative")
        if range_cache and not 1 <= range_cache <= MAX_COUNT:
            raise ValueError(f"range_cache {range_cache} out of range 1..{MAX_COUNT}")
        if not 0 < refill_at < 1:
            raise ValueError(f"refill_at {refill_at} out of range (0, 1)")
        self._remote = _Remote(nodes, token, timeout, retries, ssl_context)
        self._cache = _RangeCache(self._remote, range_cache, refill_at) if range_cache else None

    def next_id(self, key: str) -> int:
        """One ID of key: from the range cache for a segment key when the client
        has one, from a node otherwise. Raises IdForgeError: unknown_key,
        invalid_key, wrong_strategy (a key of UUIDs), retired, space_exhausted,
        unavailable, ..."""
        if self._remote.closed:
            raise _closed()
        if self._cache is not None:
            kc = self._cache.lookup(key)
            if kc is not None:
                return self._cache.take(kc, 1)[0]
        else:
            _check_key(key)
        return self._ids(key, 1)[0]

    def next_ids(self, key: str, n: int) -> List[int]:
        """n IDs of key (1 <= n <= MAX_COUNT), strictly increasing for a segment
        key, k-sorted for a snowflake key; fewer (at least one) when a segment
        key runs out of space within the batch, and space_exhausted once none
        is left. With a range cache, a batch smaller than the cache's comes
        from the cache."""
        if self._remote.closed:
            raise _closed()
        _check_key(key)
        _check_count(n)
        if self._cache is not None and n < self._cache.batch:
            kc = self._cache.lookup(key)
            if kc is not None:
                return self._cache.take(kc, n)
        return self._ids(key, n)

    def _ids(self, key: str, n: int) -> List[int]:
        path = f"/v1/ids/{key}?format=decimal" + ("" if n == 1 else f"&count={n}")

        def op(node: _Node, t: float) -> List[int]:
            strs = _strings(node, self._remote.get(node, path, t), "ids", n)
            try:
                return [int(s) for s in strs]
            except ValueError:
                raise _garbled(node, f"IDs {strs[:3]!r} are not decimal") from None

        return self._remote.call(op)

    def next_serial(self, name: str, params: Optional[Mapping[str, str]] = None) -> str:
        """One serial number of the serial definition name (a template the
        server's configuration or POST /v1/serials defines); params fill its
        @{param:NAME} fields. Raises IdForgeError: unknown_key for an unknown
        serial, invalid_argument for a missing or malformed parameter, ..."""
        return self.next_serials(name, 1, params)[0]

    def next_serials(self, name: str, n: int, params: Optional[Mapping[str, str]] = None) -> List[str]:
        """n serial numbers (1 <= n <= MAX_COUNT; fewer when the template's width
        runs out within the batch). The range cache never caches serials."""
        _check_key(name)
        _check_count(n)
        query = [("count", str(n))] + [("param." + k, v) for k, v in (params or {}).items()]
        path = f"/v1/serials/{name}?" + urllib.parse.urlencode(query)
        return self._remote.call(lambda node, t: _strings(node, self._remote.get(node, path, t), "values", n))

    def explain(self, id: int) -> Explanation:  # noqa: A002 - the API's word
        """Decodes a snowflake ID with the layout of the (first answering)
        node; invalid_argument for a negative ID or one the layout cannot have
        made."""

        def op(node: _Node, t: float) -> Explanation:
            a = self._remote.get(node, f"/v1/explain/{int(id)}", t)
            try:
                return Explanation(id=int(id), layout=str(a["layout"]), time=_parse_time(a["time"]),
                                   ticks=int(a["ticks"]), datacenter=int(a["datacenter"]), worker=int(a["worker"]),
                                   sequence=int(a["sequence"]), expires=_parse_time(a["expires"]))
            except (KeyError, TypeError, ValueError) as e:
                raise _garbled(node, repr(e)) from None

        return self._remote.call(op)

    def close(self) -> None:
        """Stops the range cache's fetches and drops its IDs (gaps, never
        duplicates). Calls after close fail with shutting_down."""
        self._remote.close()
        if self._cache is not None:
            self._cache.fetcher.shutdown(wait=False)

    def __enter__(self) -> "IdForge":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
