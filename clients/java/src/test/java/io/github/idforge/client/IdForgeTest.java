package io.github.idforge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The Java client against real nodes (Servers), and its error mapping against stub answers. */
class IdForgeTest {
    private static final String TOKEN = "conformance-issue";
    private static Servers servers;

    @BeforeAll
    static void start() {
        servers = Servers.start(2);
    }

    @AfterAll
    static void stop() {
        servers.close();
    }

    private static IdForge.Builder client() {
        return IdForge.builder().nodes(servers.urls()).token(TOKEN);
    }

    /**
     * 16 threads take IDs of one key through a range cache of small blocks,
     * so that they meet at many range switches: no ID twice, and each
     * thread's IDs increase (the blocks come from one node, in order).
     */
    @Test
    void uniqueAcross16ThreadsAndRangeSwitches() throws Exception {
        final int threads = 16;
        final int perThread = 4000;
        try (IdForge ids = client().rangeCache(50).build()) {
            IdForge.Key handle = ids.key("conf-cache");
            List<long[]> got = Collections.synchronizedList(new ArrayList<>());
            List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int which = t;
                Thread th = new Thread(() -> {
                    long[] mine = new long[perThread];
                    try {
                        for (int i = 0; i < perThread; ) {
                            if ((i + which) % 5 == 0 && perThread - i >= 3) { // batches too
                                for (long id : ids.nextIds("conf-cache", 3)) {
                                    mine[i++] = id;
                                }
                            } else if (which % 2 == 0) {
                                mine[i++] = ids.nextId("conf-cache");
                            } else {
                                mine[i++] = handle.nextId(); // the same cache, without the lookup
                            }
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                    got.add(mine);
                });
                ts.add(th);
                th.start();
            }
            for (Thread th : ts) {
                th.join();
            }
            assertTrue(errors.isEmpty(), () -> "errors: " + errors);
            Set<Long> all = new HashSet<>();
            for (long[] mine : got) {
                for (int i = 0; i < mine.length; i++) {
                    assertTrue(all.add(mine[i]), "ID " + mine[i] + " handed out twice");
                    if (i > 0) {
                        assertTrue(mine[i] > mine[i - 1], "a thread's IDs went back: " + mine[i - 1] + ", " + mine[i]);
                    }
                }
            }
            RangeCache.KeyCache kc = ids.cache().cacheOf("conf-cache");
            synchronized (kc) {
                assertTrue(kc.fetches >= threads * perThread / 50, "only " + kc.fetches + " blocks fetched");
            }
        }
    }

    /** A serial with parameters, one and several at a time. */
    @Test
    void serialWithParameters() {
        try (IdForge ids = client().build()) {
            String one = ids.nextSerial("conf-job", Map.of("area", "021"));
            assertTrue(one.matches("021-[0-9]{6}"), one);
            List<String> many = ids.nextSerials("conf-job", 5, Map.of("area", "10"));
            assertEquals(5, many.size());
            assertEquals(5, new HashSet<>(many).size());
            for (String s : many) {
                assertTrue(s.matches("10-[0-9]{6}"), s);
            }
            IdForgeException e = assertThrows(IdForgeException.class, () -> ids.nextSerial("conf-job", Map.of()));
            assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        }
    }

    /** explain decodes a snowflake ID the node issued. */
    @Test
    void explainsAnIssuedSnowflakeId() {
        try (IdForge ids = client().build()) {
            long id = ids.nextId("conf-snow");
            Explanation e = ids.explain(id);
            assertEquals(id, e.id());
            assertTrue(e.worker() == 1 || e.worker() == 2, e.toString());
            assertTrue(e.expires().isAfter(e.time()), e.toString());
        }
    }

    /** A node that takes the connection and never answers leaves time for the next node. */
    @Test
    void aHangingNodeTimesOutAndTheNextAnswers() throws Exception {
        try (ServerSocket hang = new ServerSocket(0)) {
            List<Socket> held = Collections.synchronizedList(new ArrayList<>());
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        held.add(hang.accept());
                    }
                } catch (IOException closed) {
                    // the test is over
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            String hanging = "http://127.0.0.1:" + hang.getLocalPort();
            try (IdForge ids = IdForge.builder().nodes(hanging, servers.nodes.get(0).url).token(TOKEN)
                    .timeout(Duration.ofSeconds(2)).build()) {
                assertTrue(ids.nextId("conf-seg") > 0);
            }
            try (IdForge ids = IdForge.builder().nodes(hanging).token(TOKEN).timeout(Duration.ofMillis(500)).build()) {
                IdForgeException e = assertThrows(IdForgeException.class, () -> ids.nextId("conf-seg"));
                assertEquals(ErrorCode.TIMEOUT, e.code(), e.getMessage());
                assertTrue(e.retryable());
            }
            for (Socket s : held) {
                s.close();
            }
        }
    }

    /** Calls after close fail at once, and close is idempotent. */
    @Test
    void closedClientRefusesCalls() {
        IdForge ids = client().rangeCache(100).build();
        assertTrue(ids.nextId("conf-seg") > 0);
        ids.close();
        ids.close();
        IdForgeException e = assertThrows(IdForgeException.class, () -> ids.nextId("conf-seg"));
        assertEquals(ErrorCode.SHUTTING_DOWN, e.code());
        assertFalse(e.retryable());
    }

    @Test
    void builderRefusesBadSettings() {
        assertThrows(IllegalArgumentException.class, () -> IdForge.builder().build());
        assertThrows(IllegalArgumentException.class, () -> IdForge.builder().nodes("ftp://x"));
        assertThrows(IllegalArgumentException.class, () -> IdForge.builder().nodes("http://a").rangeCache(0));
        assertThrows(IllegalArgumentException.class, () -> IdForge.builder().nodes("http://a").rangeCache(10, 1.0));
        assertThrows(IllegalArgumentException.class, () -> IdForge.builder().nodes("http://a").retries(-1));
        assertThrows(IllegalArgumentException.class, () -> IdForge.builder().nodes("http://a").timeout(Duration.ZERO));
    }

    /**
     * Every code of the vocabulary, answered by a node, reaches the caller
     * as itself with its retryability, and only the retryable ones are
     * retried on the next node. A real server cannot be made to answer
     * every code on demand (lease_lost, clock_moved_backwards, ...): these
     * answers come from a stub; the conformance suite covers the codes a
     * real node gives.
     */
    @Test
    void everyErrorCodeMapped() throws Exception {
        Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();
        Map<String, String[]> answers = new ConcurrentHashMap<>(); // path -> {status, body}
        HttpServer stub = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        stub.createContext("/", ex -> {
            String node = ex.getRequestURI().getPath().split("/")[1];
            hits.computeIfAbsent(node, k -> new AtomicInteger()).incrementAndGet();
            String[] a = answers.getOrDefault(node, new String[] {"200", "{\"key\":\"k\",\"ids\":[\"42\"]}"});
            byte[] body = a[1].getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(Integer.parseInt(a[0]), body.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(body);
            }
        });
        stub.start();
        String base = "http://127.0.0.1:" + stub.getAddress().getPort();
        try {
            int n = 0;
            for (ErrorCode code : ErrorCode.values()) {
                String a = "a" + n, b = "b" + n++;
                answers.put(a, new String[] {String.valueOf(code.httpStatus()),
                        "{\"error\":{\"code\":\"" + code.wire() + "\",\"message\":\"m\"}}"});
                try (IdForge ids = IdForge.builder().nodes(base + "/" + a, base + "/" + b).build()) {
                    if (code.retryable()) {
                        assertEquals(42, ids.nextId("k"), code.wire());
                        assertEquals(1, hits.get(b).get(), code.wire() + " was not retried on the next node");
                    } else {
                        IdForgeException e = assertThrows(IdForgeException.class, () -> ids.nextId("k"));
                        assertEquals(code, e.code());
                        assertFalse(e.retryable(), code.wire());
                        assertEquals(code.httpStatus(), e.httpStatus());
                        assertEquals(base + "/" + a, e.server());
                        assertEquals(null, hits.get(b), code.wire() + " was retried");
                    }
                }
                try (IdForge ids = IdForge.builder().nodes(base + "/" + a).retries(0).build()) {
                    IdForgeException e = assertThrows(IdForgeException.class, () -> ids.nextId("k"));
                    assertEquals(code, e.code());
                    assertEquals(code.retryable(), e.retryable(), code.wire());
                }
                assertEquals(code, ErrorCode.of(code.wire()));
            }
            // A word from a newer server, and answers from something in between.
            String[][] others = {
                {"409", "{\"error\":{\"code\":\"some_new_code\",\"message\":\"m\"}}", "INTERNAL", "false"},
                {"502", "<html>bad gateway</html>", "UNAVAILABLE", "true"},
                {"504", "", "UNAVAILABLE", "true"},
                {"400", "<html>bad request</html>", "INTERNAL", "false"},
                {"200", "{\"ids\":", "UNAVAILABLE", "true"},
                {"200", "{\"key\":\"k\",\"ids\":[\"1\",\"2\"]}", "UNAVAILABLE", "true"},
            };
            for (String[] o : others) {
                String a = "x" + n++;
                answers.put(a, new String[] {o[0], o[1]});
                try (IdForge ids = IdForge.builder().nodes(base + "/" + a).retries(0).build()) {
                    IdForgeException e = assertThrows(IdForgeException.class, () -> ids.nextId("k"));
                    assertEquals(ErrorCode.valueOf(o[2]), e.code(), o[1]);
                    assertEquals(Boolean.parseBoolean(o[3]), e.retryable(), o[1]);
                }
            }
            assertTrue(ErrorCode.of("some_new_code") == ErrorCode.INTERNAL);
        } finally {
            stub.stop(0);
        }
    }
}
