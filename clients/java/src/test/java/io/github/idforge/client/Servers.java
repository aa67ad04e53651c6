package io.github.idforge.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Real idforge nodes for the tests: the binary built from this checkout
 * (IDFORGE_BINARY, which clients/test.sh sets), run as
 * {@code idforge serve --config CONFIG --data DIR --http 127.0.0.1:0
 * --store sqlite:///TMP/ids.db --worker i+1}, so the nodes share one SQLite
 * file. The configuration is clients/conformance/server.toml unless a test
 * gives its own.
 */
public final class Servers implements AutoCloseable {
    private static final Pattern SERVING = Pattern.compile("msg=\"idforge serving\" http=(\\S+)");

    /** One node process. */
    public static final class Node {
        private final Process process;
        /** The node's base URL, http://127.0.0.1:PORT. */
        public final String url;
        private final StringBuffer log;

        private Node(Process process, String url, StringBuffer log) {
            this.process = process;
            this.url = url;
            this.log = log;
        }

        /** Kills the process with SIGKILL and waits for it to die. */
        public void kill() {
            process.destroyForcibly();
            try {
                process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        public String log() {
            return log.toString();
        }
    }

    public final List<Node> nodes = new ArrayList<>();
    private final Path dir;

    private final Thread reaper = new Thread(this::killAll, "idforge-nodes-reaper");

    private Servers(Path dir) {
        this.dir = dir;
        Runtime.getRuntime().addShutdownHook(reaper); // a JVM stopped by a signal leaves no node behind
    }

    private void killAll() {
        nodes.forEach(Node::kill);
    }

    /** The directory of the conformance suite (IDFORGE_CONFORMANCE, default ../conformance). */
    public static Path conformanceDir() {
        String d = System.getenv("IDFORGE_CONFORMANCE");
        return Paths.get(d == null || d.isEmpty() ? "../conformance" : d).toAbsolutePath();
    }

    /** Starts n nodes with the conformance suite's configuration. */
    public static Servers start(int n) {
        return start(n, conformanceDir().resolve("server.toml"));
    }

    /** Starts n nodes with the configuration file config. */
    public static Servers start(int n, Path config) {
        String bin = System.getenv("IDFORGE_BINARY");
        if (bin == null || bin.isEmpty()) {
            throw new IllegalStateException("IDFORGE_BINARY is not set: build the server first "
                    + "(go build -o /tmp/idforge ./cmd/idforge) or run clients/test.sh");
        }
        Servers s;
        try {
            s = new Servers(Files.createTempDirectory("idforge-java-"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            for (int i = 0; i < n; i++) {
                s.nodes.add(s.startNode(bin, config, i));
            }
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    private Node startNode(String bin, Path config, int i) {
        ProcessBuilder pb = new ProcessBuilder(bin, "serve", "--config", config.toString(),
                "--data", dir.resolve("node" + i).toString(), "--http", "127.0.0.1:0",
                "--store", "sqlite://" + dir.resolve("ids.db"), "--worker", String.valueOf(i + 1));
        pb.environment().keySet().removeIf(k -> k.startsWith("IDFORGE_"));
        pb.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        StringBuffer log = new StringBuffer();
        CompletableFuture<String> addr = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    log.append(line).append('\n');
                    Matcher m = SERVING.matcher(line);
                    if (m.find()) {
                        addr.complete(m.group(1));
                    }
                }
            } catch (IOException ignored) {
                // the process died
            }
            addr.completeExceptionally(new IllegalStateException("idforge exited before serving:\n" + log));
        }, "idforge-node-" + i + "-log");
        reader.setDaemon(true);
        reader.start();
        try {
            return new Node(p, "http://" + addr.get(60, TimeUnit.SECONDS), log);
        } catch (Exception e) {
            p.destroyForcibly();
            throw new IllegalStateException("node " + i + " did not start: " + e.getMessage() + "\n" + log, e);
        }
    }

    /** The nodes' URLs, in order. */
    public String[] urls() {
        return nodes.stream().map(n -> n.url).toArray(String[]::new);
    }

    /** An http:// URL where nothing listens. */
    public static String deadUrl() {
        try (ServerSocket s = new ServerSocket(0)) {
            return "http://127.0.0.1:" + s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Sends an admin request to the first node; fails unless it answers 2xx. */
    public void send(String method, String path, String token, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(nodes.get(0).url + path))
                .header("Authorization", "Bearer " + token)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        try {
            HttpResponse<String> r = HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() / 100 != 2) {
                throw new IllegalStateException(method + " " + path + ": " + r.statusCode() + " " + r.body());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Kills every node and removes their files. */
    @Override
    public void close() {
        killAll();
        try {
            Runtime.getRuntime().removeShutdownHook(reaper);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory
        }
    }
}
