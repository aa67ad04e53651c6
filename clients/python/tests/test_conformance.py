"""The Python client's run of the conformance suite
(clients/conformance/*.json, described in docs/clients.md, "Conformance"),
each file against nodes of its own."""

import datetime
import json
import re
import threading
import unittest

from idforge_client import IdForge, IdForgeError

from .servers import Servers, conformance_dir, dead_url

TOKEN = "conformance-issue"


def run_case(c, servers, dead):
    """Runs the case's calls: the values returned, as strings, and the error of the last call."""
    cl = c.get("client", {})
    nodes = [dead if n == "down" else servers.nodes[n].url for n in cl["nodes"]] if "nodes" in cl else servers.urls()
    vals, err = [], None
    client = IdForge(nodes, token=cl.get("token", TOKEN), range_cache=cl.get("cache", 0))
    try:
        if c["op"] == "load":
            load(client, c, servers, vals)
        else:
            for _ in range(c.get("repeat", 1)):
                vals.extend(once(client, c))
    except IdForgeError as e:
        err = e
    finally:
        client.close()
    return vals, err


def once(client, c):
    key, count = c.get("key"), c.get("count")
    op = c["op"]
    if op == "next_id":
        return [str(client.next_id(key))]
    if op == "next_ids":
        return [str(i) for i in client.next_ids(key, 1 if count is None else count)]
    if op == "next_serial":
        if count is None:
            return [client.next_serial(key, c.get("params"))]
        return client.next_serials(key, count, c.get("params"))
    if op == "explain":
        e = client.explain(int(c["id"]))
        return [json.dumps({"time": e.time.isoformat(), "unix_ms": int(e.time.timestamp() * 1000 + 0.5),
                            "datacenter": e.datacenter, "worker": e.worker, "sequence": e.sequence})]
    raise ValueError("unknown op " + op)


def load(client, c, servers, vals):
    """Takes c.ids IDs on c.threads threads, killing node c.kill once a quarter were taken."""
    lock = threading.Lock()
    state = {"claimed": 0, "taken": 0, "killed": False}
    errors = []

    def work():
        mine = []
        try:
            while True:
                with lock:
                    state["claimed"] += 1
                    if state["claimed"] > c["ids"]:
                        break
                mine.append(str(client.next_id(c["key"])))
                with lock:
                    state["taken"] += 1
                    kill = "kill" in c and not state["killed"] and state["taken"] >= c["ids"] // 4
                    state["killed"] |= kill
                if kill:
                    servers.nodes[c["kill"]].kill()
        except IdForgeError as e:
            errors.append(e)
        with lock:
            vals.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(c["threads"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


class ConformanceTest(unittest.TestCase):
    def check(self, x, vals, err):
        if "error" not in x and err is not None:
            self.fail(f"unexpected error after {len(vals)} values: {err}")
        if "error" in x:
            self.assertIsNotNone(err, f"no error, want {x['error']} (got {len(vals)} values)")
            self.assertEqual(x["error"], err.code, str(err))
            if "retryable" in x:
                self.assertEqual(x["retryable"], err.retryable, str(err))
        if "count" in x:
            self.assertEqual(x["count"], len(vals), "number of values")
        if "first" in x:
            self.assertEqual(x["first"], vals[0] if vals else None)
        if "last" in x:
            self.assertEqual(x["last"], vals[-1] if vals else None)
        if x.get("increasing"):
            for i in range(1, len(vals)):
                self.assertGreater(int(vals[i]), int(vals[i - 1]), f"value {i}")
        if "match" in x:
            for v in vals:
                self.assertRegex(v, x["match"])
        if "explain" in x:
            self.assertEqual(1, len(vals))
            got = json.loads(vals[0])
            for k, want in x["explain"].items():
                if k == "time":
                    want = datetime.datetime.fromisoformat(want.replace("Z", "+00:00"))
                    self.assertEqual(want, datetime.datetime.fromisoformat(got[k]), k)
                else:
                    self.assertEqual(want, got[k], k)

    def run_file(self, path):
        f = json.loads(path.read_text())
        with Servers(f["nodes"]) as servers:
            for s in f.get("setup", []):
                servers.send(s["method"], s["path"], s["token"], s.get("body"))
            dead = dead_url()
            seen = {}
            for c in f["cases"]:
                with self.subTest(c["name"]):
                    vals, err = run_case(c, servers, dead)
                    self.check(c["expect"], vals, err)
                    if c["op"] != "explain":
                        mine = seen.setdefault(c["key"], {})
                        for v in vals:
                            self.assertNotIn(v, mine, f"{c['key']} {v} handed out twice: also in case {mine.get(v)}")
                            mine[v] = c["name"]


def _add_files():
    for path in sorted(conformance_dir().glob("*.json")):
        name = "test_" + re.sub(r"\W", "_", path.stem)
        setattr(ConformanceTest, name, lambda self, p=path: self.run_file(p))


_add_files()
