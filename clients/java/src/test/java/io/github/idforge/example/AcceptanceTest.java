package io.github.idforge.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.idforge.client.IdForge;
import io.github.idforge.client.IdForgeException;
import io.github.idforge.client.Servers;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 28's acceptance: a program written from docs/clients.md alone (so
 * it lives outside the client's package and sees only its public API)
 * issues 100,000 IDs from two nodes with the range cache on 8 threads while
 * the preferred node is killed (SIGKILL) a quarter of the way in. No call
 * fails and no ID comes twice.
 */
class AcceptanceTest {
    @Test
    void hundredThousandIdsOnEightThreadsWhileANodeDies() throws Exception {
        final int total = 100_000;
        final int threads = 8;
        try (Servers servers = Servers.start(2);
             IdForge ids = IdForge.builder()
                     .nodes(servers.nodes.get(0).url, servers.nodes.get(1).url)
                     .token("conformance-issue")
                     .rangeCache(1000)
                     .build()) {
            Set<Long> seen = ConcurrentHashMap.newKeySet();
            AtomicInteger claimed = new AtomicInteger();
            AtomicInteger taken = new AtomicInteger();
            AtomicInteger duplicates = new AtomicInteger();
            AtomicInteger afterKill = new AtomicInteger();
            List<IdForgeException> errors = new ArrayList<>();
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Thread th = new Thread(() -> {
                    try {
                        while (claimed.incrementAndGet() <= total) {
                            long id = ids.nextId("conf-load");
                            if (!seen.add(id)) {
                                duplicates.incrementAndGet();
                            }
                            int n = taken.incrementAndGet();
                            if (n == total / 4) {
                                servers.nodes.get(0).kill();
                            } else if (n > total / 4) {
                                afterKill.incrementAndGet();
                            }
                        }
                    } catch (IdForgeException e) {
                        synchronized (errors) {
                            errors.add(e);
                        }
                    }
                });
                ts.add(th);
                th.start();
            }
            for (Thread th : ts) {
                th.join();
            }
            assertTrue(errors.isEmpty(), () -> "a call failed: " + errors);
            assertEquals(0, duplicates.get(), "IDs handed out twice");
            assertEquals(total, seen.size());
            assertTrue(afterKill.get() > 0);
            System.out.printf("acceptance: %d IDs on %d threads from 2 nodes, node 1 killed after %d: %d distinct%n",
                    total, threads, total / 4, seen.size());
        }
    }
}
