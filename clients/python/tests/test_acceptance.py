"""Issue 28's acceptance: a program written from docs/clients.md alone (the
package's public names only) issues 100,000 IDs from two nodes with the
range cache on 4 threads while the preferred node is killed (SIGKILL) a
quarter of the way in. No call fails and no ID comes twice."""

import threading
import unittest

from idforge_client import IdForge, IdForgeError

from .servers import Servers


class AcceptanceTest(unittest.TestCase):
    def test_hundred_thousand_ids_on_four_threads_while_a_node_dies(self):
        total, threads = 100_000, 4
        with Servers(2) as servers, IdForge(servers.urls(), token="conformance-issue", range_cache=1000) as ids:
            lock = threading.Lock()
            seen, errors = set(), []
            state = {"claimed": 0, "duplicates": 0}

            def work():
                try:
                    while True:
                        with lock:
                            state["claimed"] += 1
                            if state["claimed"] > total:
                                return
                        i = ids.next_id("conf-load")
                        with lock:
                            if i in seen:
                                state["duplicates"] += 1
                            seen.add(i)
                            kill = len(seen) == total // 4
                        if kill:
                            servers.nodes[0].kill()
                except IdForgeError as e:
                    errors.append(e)

            ts = [threading.Thread(target=work) for _ in range(threads)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        self.assertEqual([], errors)
        self.assertEqual(0, state["duplicates"])
        self.assertEqual(total, len(seen))
        print(f"\nacceptance: {total} IDs on {threads} threads from 2 nodes, node 1 killed after {total // 4}: "
              f"{len(seen)} distinct")
