package io.github.idforge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The Java client's run of the conformance suite (clients/conformance/*.json,
 * described in docs/clients.md, "Conformance"), each file against nodes of
 * its own.
 */
class ConformanceTest {
    private static final String TOKEN = "conformance-issue";
    private static final List<Servers> started = Collections.synchronizedList(new ArrayList<>());

    @AfterAll
    static void stop() {
        started.forEach(Servers::close);
    }

    @TestFactory
    List<DynamicNode> conformance() throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.list(Servers.conformanceDir())) {
            files = s.filter(p -> p.toString().endsWith(".json")).sorted().collect(Collectors.toList());
        }
        assertTrue(!files.isEmpty(), "no conformance files in " + Servers.conformanceDir());
        List<DynamicNode> out = new ArrayList<>();
        for (Path f : files) {
            Map<String, Object> file = Json.object(Files.readString(f, StandardCharsets.UTF_8));
            out.add(DynamicContainer.dynamicContainer(f.getFileName().toString(), cases(file)));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static List<DynamicTest> cases(Map<String, Object> file) {
        Servers servers = Servers.start(((Long) file.get("nodes")).intValue());
        started.add(servers);
        for (Object o : (List<Object>) file.getOrDefault("setup", List.of())) {
            Map<String, Object> s = (Map<String, Object>) o;
            Object body = s.get("body");
            servers.send((String) s.get("method"), (String) s.get("path"), (String) s.get("token"),
                    body == null ? null : toJson(body));
        }
        String dead = Servers.deadUrl();
        Map<String, Map<String, String>> seen = new HashMap<>();
        AtomicBoolean failed = new AtomicBoolean();
        List<DynamicTest> tests = new ArrayList<>();
        for (Object o : (List<Object>) file.get("cases")) {
            Map<String, Object> c = (Map<String, Object>) o;
            String name = (String) c.get("name");
            tests.add(DynamicTest.dynamicTest(name, () -> {
                if (failed.get()) {
                    fail("an earlier case failed, and later cases build on it");
                }
                try {
                    runCase(c, servers, dead, seen);
                } catch (Throwable t) {
                    failed.set(true);
                    throw t;
                }
            }));
        }
        return tests;
    }

    @SuppressWarnings("unchecked")
    private static void runCase(Map<String, Object> c, Servers servers, String dead, Map<String, Map<String, String>> seen) {
        Map<String, Object> cl = (Map<String, Object>) c.getOrDefault("client", Map.of());
        Map<String, Object> x = (Map<String, Object>) c.get("expect");
        IdForge.Builder b = IdForge.builder();
        if (cl.containsKey("nodes")) {
            for (Object n : (List<Object>) cl.get("nodes")) {
                b.nodes(n instanceof String ? dead : servers.nodes.get(((Long) n).intValue()).url);
            }
        } else {
            b.nodes(servers.urls());
        }
        b.token(cl.containsKey("token") ? (String) cl.get("token") : TOKEN);
        if (cl.containsKey("cache")) {
            b.rangeCache(((Long) cl.get("cache")).intValue());
        }
        List<String> vals = new ArrayList<>();
        IdForgeException err = null;
        try (IdForge client = b.build()) {
            if ("load".equals(c.get("op"))) {
                load(client, c, servers, vals);
            } else {
                long repeat = (Long) c.getOrDefault("repeat", 1L);
                for (long i = 0; i < repeat; i++) {
                    vals.addAll(once(client, c));
                }
            }
        } catch (IdForgeException e) {
            err = e;
        }
        check(x, vals, err);
        if (!"explain".equals(c.get("op"))) {
            Map<String, String> mine = seen.computeIfAbsent((String) c.get("key"), k -> new HashMap<>());
            for (String v : vals) {
                String other = mine.put(v, (String) c.get("name"));
                if (other != null) {
                    fail(c.get("key") + " " + v + " was handed out twice: also in case " + other);
                }
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static List<String> once(IdForge client, Map<String, Object> c) {
        String key = (String) c.get("key");
        Long count = (Long) c.get("count");
        switch ((String) c.get("op")) {
            case "next_id":
                return List.of(String.valueOf(client.nextId(key)));
            case "next_ids":
                return decimals(client.nextIds(key, count == null ? 1 : count.intValue()));
            case "next_serial": {
                Map<String, String> params = (Map<String, String>) (Map<?, ?>) c.getOrDefault("params", Map.of());
                if (count == null) {
                    return List.of(client.nextSerial(key, params));
                }
                return client.nextSerials(key, count.intValue(), params);
            }
            case "explain": {
                Explanation e = client.explain(Long.parseLong((String) c.get("id")));
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("time", e.time().toString());
                m.put("unix_ms", e.time().toEpochMilli());
                m.put("datacenter", e.datacenter());
                m.put("worker", e.worker());
                m.put("sequence", e.sequence());
                return List.of(toJson(m));
            }
            default:
                throw new IllegalArgumentException("unknown op " + c.get("op"));
        }
    }

    /** Takes c.ids IDs on c.threads threads, killing node c.kill once a quarter were taken. */
    private static void load(IdForge client, Map<String, Object> c, Servers servers, List<String> vals) {
        String key = (String) c.get("key");
        long ids = (Long) c.get("ids");
        Long kill = (Long) c.get("kill");
        AtomicLong claimed = new AtomicLong();
        AtomicLong taken = new AtomicLong();
        AtomicBoolean killed = new AtomicBoolean();
        List<IdForgeException> errors = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (long t = 0; t < (Long) c.get("threads"); t++) {
            Thread th = new Thread(() -> {
                List<String> mine = new ArrayList<>();
                try {
                    while (claimed.incrementAndGet() <= ids) {
                        mine.add(String.valueOf(client.nextId(key)));
                        if (taken.incrementAndGet() >= ids / 4 && kill != null && !killed.getAndSet(true)) {
                            servers.nodes.get(kill.intValue()).kill();
                        }
                    }
                } catch (IdForgeException e) {
                    errors.add(e);
                }
                synchronized (vals) {
                    vals.addAll(mine);
                }
            });
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            try {
                th.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        if (!errors.isEmpty()) {
            throw errors.get(0);
        }
    }

    private static List<String> decimals(long[] ids) {
        List<String> out = new ArrayList<>(ids.length);
        for (long id : ids) {
            out.add(String.valueOf(id));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static void check(Map<String, Object> x, List<String> vals, IdForgeException err) {
        String wantErr = (String) x.get("error");
        if (wantErr == null && err != null) {
            fail("unexpected error after " + vals.size() + " values: " + err.getMessage(), err);
        }
        if (wantErr != null && err == null) {
            fail("no error, want " + wantErr + " (got " + vals.size() + " values)");
        }
        if (err != null) {
            assertEquals(wantErr, err.code().wire(), "error code of " + err.getMessage());
            if (x.containsKey("retryable")) {
                assertEquals(x.get("retryable"), err.retryable(), "retryable of " + err.getMessage());
            }
        }
        if (x.containsKey("count")) {
            assertEquals(((Long) x.get("count")).intValue(), vals.size(), "number of values");
        }
        if (x.containsKey("first")) {
            assertEquals(x.get("first"), vals.isEmpty() ? null : vals.get(0), "first value");
        }
        if (x.containsKey("last")) {
            assertEquals(x.get("last"), vals.isEmpty() ? null : vals.get(vals.size() - 1), "last value");
        }
        if (Boolean.TRUE.equals(x.get("increasing"))) {
            for (int i = 1; i < vals.size(); i++) {
                assertTrue(Long.parseLong(vals.get(i)) > Long.parseLong(vals.get(i - 1)),
                        "value " + i + " (" + vals.get(i) + ") does not follow " + vals.get(i - 1));
            }
        }
        if (x.containsKey("match")) {
            Pattern re = Pattern.compile((String) x.get("match"));
            for (String v : vals) {
                assertTrue(re.matcher(v).find(), v + " does not match " + re);
            }
        }
        if (x.containsKey("explain")) {
            Map<String, Object> want = (Map<String, Object>) x.get("explain");
            assertEquals(1, vals.size());
            Map<String, Object> got = Json.object(vals.get(0));
            for (Map.Entry<String, Object> e : want.entrySet()) {
                Object g = got.get(e.getKey());
                if ("time".equals(e.getKey())) {
                    assertEquals(Instant.parse((String) e.getValue()), Instant.parse((String) g), "time");
                } else {
                    assertEquals(e.getValue(), g, e.getKey());
                }
            }
        }
    }

    /** A JSON text of a value made of maps, lists, strings, numbers and booleans. */
    static String toJson(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof String) {
            StringBuilder b = new StringBuilder("\"");
            for (char ch : ((String) v).toCharArray()) {
                if (ch == '"' || ch == '\\') {
                    b.append('\\').append(ch);
                } else if (ch < 0x20) {
                    b.append(String.format("\\u%04x", (int) ch));
                } else {
                    b.append(ch);
                }
            }
            return b.append('"').toString();
        }
        if (v instanceof Map) {
            return ((Map<?, ?>) v).entrySet().stream()
                    .map(e -> toJson(String.valueOf(e.getKey())) + ":" + toJson(e.getValue()))
                    .collect(Collectors.joining(",", "{", "}"));
        }
        if (v instanceof List) {
            return ((List<?>) v).stream().map(ConformanceTest::toJson).collect(Collectors.joining(",", "[", "]"));
        }
        return String.valueOf(v);
    }
}
