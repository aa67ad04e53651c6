"""The Python client against real nodes, and its error mapping against stub answers."""

import http.server
import json
import re
import socket
import threading
import unittest

from idforge_client import CODES, IdForge, IdForgeError

from .servers import Servers

TOKEN = "conformance-issue"


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.servers = Servers(2)

    @classmethod
    def tearDownClass(cls):
        cls.servers.close()

    def client(self, **kw):
        return IdForge(self.servers.urls(), token=TOKEN, **kw)

    def test_unique_across_threads_and_range_switches(self):
        """8 threads take IDs through a cache of small blocks, meeting at many
        range switches: no ID twice, each thread's IDs increase."""
        threads, per_thread = 8, 2000
        got, errors = [], []
        with self.client(range_cache=50) as ids:
            def work(which):
                mine = []
                try:
                    while len(mine) < per_thread:
                        if (len(mine) + which) % 5 == 0 and per_thread - len(mine) >= 3:
                            mine.extend(ids.next_ids("conf-cache", 3))
                        else:
                            mine.append(ids.next_id("conf-cache"))
                except IdForgeError as e:
                    errors.append(e)
                got.append(mine)

            ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            fetches = ids._cache.keys["conf-cache"].fetches
        self.assertEqual([], errors)
        seen = set()
        for mine in got:
            self.assertEqual(per_thread, len(mine))
            for i, v in enumerate(mine):
                self.assertNotIn(v, seen)
                seen.add(v)
                if i:
                    self.assertGreater(v, mine[i - 1])
        self.assertGreaterEqual(fetches, threads * per_thread // 50)

    def test_serial_with_parameters(self):
        with self.client() as ids:
            self.assertRegex(ids.next_serial("conf-job", {"area": "021"}), r"^021-[0-9]{6}$")
            many = ids.next_serials("conf-job", 5, {"area": "10"})
            self.assertEqual(5, len(set(many)))
            for s in many:
                self.assertRegex(s, r"^10-[0-9]{6}$")
            with self.assertRaises(IdForgeError) as cm:
                ids.next_serial("conf-job")
            self.assertEqual("invalid_argument", cm.exception.code)

    def test_explain_an_issued_snowflake_id(self):
        with self.client() as ids:
            i = ids.next_id("conf-snow")
            e = ids.explain(i)
            self.assertEqual(i, e.id)
            self.assertIn(e.worker, (1, 2))
            self.assertGreater(e.expires, e.time)

    def test_a_hanging_node_times_out_and_the_next_answers(self):
        with socket.socket() as hang:
            hang.bind(("127.0.0.1", 0))
            hang.listen(16)  # accepts connections (the kernel does), never answers
            hanging = "http://127.0.0.1:%d" % hang.getsockname()[1]
            with IdForge([hanging, self.servers.nodes[0].url], token=TOKEN, timeout=2) as ids:
                self.assertGreater(ids.next_id("conf-seg"), 0)
            with IdForge([hanging], token=TOKEN, timeout=0.5) as ids:
                with self.assertRaises(IdForgeError) as cm:
                    ids.next_id("conf-seg")
                self.assertEqual("timeout", cm.exception.code)
                self.assertTrue(cm.exception.retryable)

    def test_closed_client_refuses_calls(self):
        ids = self.client(range_cache=100)
        self.assertGreater(ids.next_id("conf-seg"), 0)
        ids.close()
        ids.close()
        with self.assertRaises(IdForgeError) as cm:
            ids.next_id("conf-seg")
        self.assertEqual("shutting_down", cm.exception.code)
        self.assertFalse(cm.exception.retryable)

    def test_bad_settings(self):
        for kw in ({"range_cache": -1}, {"range_cache": 10001}, {"refill_at": 1.0}, {"retries": -1}, {"timeout": 0}):
            with self.assertRaises(ValueError, msg=kw):
                IdForge(["http://a"], **kw)
        with self.assertRaises(ValueError):
            IdForge(["ftp://a"])
        with self.assertRaises(ValueError):
            IdForge([])


class _Stub(http.server.BaseHTTPRequestHandler):
    """Answers /NODE/... with what answers[NODE] says, counting hits."""

    answers, hits = {}, {}
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 - the handler's name
        node = self.path.split("/")[1]
        _Stub.hits[node] = _Stub.hits.get(node, 0) + 1
        status, body = _Stub.answers.get(node, (200, '{"key":"k","ids":["42"]}'))
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class ErrorCodeTest(unittest.TestCase):
    """Every code of the vocabulary, answered by a node, reaches the caller as
    itself with its retryability, and only retryable ones are retried on the
    next node. A real server cannot be made to answer every code on demand
    (lease_lost, clock_moved_backwards, ...): these answers come from a stub;
    the conformance suite covers the codes a real node gives."""

    def setUp(self):
        self.stub = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
        threading.Thread(target=self.stub.serve_forever, daemon=True).start()
        self.base = "http://127.0.0.1:%d" % self.stub.server_address[1]

    def tearDown(self):
        self.stub.shutdown()
        self.stub.server_close()

    def test_every_error_code_mapped(self):
        for n, (code, (status, retryable)) in enumerate(CODES.items()):
            a, b = f"a{n}", f"b{n}"
            _Stub.answers[a] = (status, json.dumps({"error": {"code": code, "message": "m"}}))
            with IdForge([f"{self.base}/{a}", f"{self.base}/{b}"]) as ids:
                if retryable:
                    self.assertEqual(42, ids.next_id("k"), code)
                    self.assertEqual(1, _Stub.hits.get(b), f"{code} was not retried on the next node")
                else:
                    with self.assertRaises(IdForgeError) as cm:
                        ids.next_id("k")
                    e = cm.exception
                    self.assertEqual((code, False, status, f"{self.base}/{a}"),
                                     (e.code, e.retryable, e.http_status, e.server))
                    self.assertIsNone(_Stub.hits.get(b), f"{code} was retried")
            with IdForge([f"{self.base}/{a}"], retries=0) as ids:
                with self.assertRaises(IdForgeError) as cm:
                    ids.next_id("k")
                self.assertEqual((code, retryable), (cm.exception.code, cm.exception.retryable))

    def test_answers_from_in_between(self):
        for n, (status, body, code, retryable) in enumerate([
            (409, '{"error":{"code":"some_new_code","message":"m"}}', "internal", False),
            (502, "<html>bad gateway</html>", "unavailable", True),
            (504, "", "unavailable", True),
            (400, "<html>bad request</html>", "internal", False),
            (200, '{"ids":', "unavailable", True),
            (200, '{"key":"k","ids":["1","2"]}', "unavailable", True),
        ]):
            _Stub.answers[f"x{n}"] = (status, body)
            with IdForge([f"{self.base}/x{n}"], retries=0) as ids:
                with self.assertRaises(IdForgeError) as cm:
                    ids.next_id("k")
                self.assertEqual((code, retryable), (cm.exception.code, cm.exception.retryable), body)
                if code == "internal" and "some_new_code" in body:
                    self.assertTrue(re.search("some_new_code", str(cm.exception)))
