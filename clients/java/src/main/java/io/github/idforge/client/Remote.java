package io.github.idforge.client;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The nodes of one client and the rules of failing over between them, the
 * Go client's: a call goes to the most preferred node that has not failed
 * recently (sticky, so a segment key's IDs increase); a failure another
 * node may not have (no answer, or an answer whose code is retryable, or a
 * proxy's 502/503/504) sets the node aside for 30 s and the call is retried
 * on the next node, at most {@code retries} times, within the call's
 * timeout; any other answer is final. While another node is left to try an
 * attempt gets at most half the time left, so a node that hangs leaves time
 * for the next.
 */
final class Remote {
    static final long COOL_DOWN = TimeUnit.SECONDS.toNanos(30);
    static final long BACKOFF_MIN = TimeUnit.MILLISECONDS.toNanos(20);
    static final long BACKOFF_MAX = TimeUnit.MILLISECONDS.toNanos(500);

    /** One node and its health as this client sees it. */
    static final class Node {
        final String base;
        final long bit;
        volatile boolean down;
        volatile long downUntil; // System.nanoTime(); meaningful while down

        Node(String base, int index) {
            this.base = base;
            this.bit = 1L << index;
        }

        boolean healthy(long now) {
            return !down || downUntil - now <= 0;
        }
    }

    /** One attempt of a call against one node. */
    interface Attempt<T> {
        T run(Node node, long timeoutNanos);
    }

    private final Node[] nodes;
    private final HttpClient http;
    private final String auth;
    final long timeoutNanos;
    private final int retries;
    volatile boolean closed;

    Remote(String[] bases, String token, Duration timeout, int retries) {
        nodes = new Node[bases.length];
        for (int i = 0; i < bases.length; i++) {
            nodes[i] = new Node(bases[i], i);
        }
        auth = token == null || token.isEmpty() ? null : "Bearer " + token;
        timeoutNanos = timeout.toNanos();
        this.retries = retries;
        http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(timeout)
                .build();
    }

    /**
     * The node to try next: the first, in order of preference, not tried in
     * this call and not failed recently; when every untried node failed
     * recently, the one whose time out ends first; null when every node was
     * tried.
     */
    private Node pick(long tried) {
        long now = System.nanoTime();
        Node best = null;
        for (Node n : nodes) {
            if ((tried & n.bit) != 0) {
                continue;
            }
            if (n.healthy(now)) {
                return n;
            }
            if (best == null || n.downUntil - best.downUntil < 0) {
                best = n;
            }
        }
        return best;
    }

    /** Runs op against the nodes until one succeeds or a rule says stop. */
    <T> T call(Attempt<T> op) {
        if (closed) {
            throw closedError();
        }
        long deadline = System.nanoTime() + timeoutNanos;
        long tried = 0;
        long backoff = BACKOFF_MIN;
        IdForgeException last = null;
        for (int attempt = 0; ; attempt++) {
            Node n = pick(tried);
            if (n == null) { // every node failed in this round
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                sleep(Math.min(backoff, left));
                backoff = Math.min(2 * backoff, BACKOFF_MAX);
                tried = 0;
                n = pick(tried);
            }
            tried |= n.bit;
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            boolean more = attempt < retries && pick(tried) != null;
            try {
                T v = op.run(n, more ? left / 2 : left);
                if (n.down) {
                    n.down = false;
                }
                return v;
            } catch (IdForgeException e) {
                last = e;
                if (!e.retryable()) {
                    throw e;
                }
                n.downUntil = System.nanoTime() + COOL_DOWN;
                n.down = true;
                if (attempt >= retries || closed) {
                    break;
                }
            }
        }
        if (System.nanoTime() - deadline >= 0) {
            String why = last == null ? "" : "; last error: " + last.getMessage();
            throw new IdForgeException(ErrorCode.TIMEOUT, true, 0, null,
                    "no answer within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms" + why, last);
        }
        throw last;
    }

    private static void sleep(long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IdForgeException(ErrorCode.CANCELED, false, 0, null, "interrupted", e);
        }
    }

    static IdForgeException closedError() {
        return new IdForgeException(ErrorCode.SHUTTING_DOWN, false, 0, null, "client closed", null);
    }

    /** GET base+path on n: the body of a 200 answer, or the node's error. */
    String get(Node n, String path, long timeoutNanos) {
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(n.base + path))
                .timeout(Duration.ofNanos(timeoutNanos))
                .header("Accept", "application/json")
                .GET();
        if (auth != null) {
            req.header("Authorization", auth);
        }
        HttpResponse<String> resp;
        try {
            resp = http.send(req.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IdForgeException(ErrorCode.UNAVAILABLE, true, 0, n.base, "no answer: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IdForgeException(ErrorCode.CANCELED, false, 0, n.base, "interrupted", e);
        }
        if (resp.statusCode() == 200) {
            return resp.body();
        }
        throw errorOf(n, resp.statusCode(), resp.body());
    }

    /** GET base+path on n, its answer parsed as a JSON object. */
    Map<String, Object> getObject(Node n, String path, long timeoutNanos) {
        String body = get(n, path, timeoutNanos);
        try {
            return Json.object(body);
        } catch (IllegalArgumentException e) {
            throw garbled(n, e.getMessage());
        }
    }

    /** An answer a node may not give: another node may do better. */
    static IdForgeException garbled(Node n, String what) {
        return new IdForgeException(ErrorCode.UNAVAILABLE, true, 200, n.base, "unreadable answer: " + what, null);
    }

    /**
     * Reads an error answer: {"error":{"code","message"}} from idforge,
     * anything else from whatever stands in between (a proxy's 502 is
     * retryable, as the Go client takes it).
     */
    static IdForgeException errorOf(Node n, int status, String body) {
        try {
            Object e = Json.object(body).get("error");
            if (e instanceof Map) {
                Object word = ((Map<?, ?>) e).get("code");
                Object msg = ((Map<?, ?>) e).get("message");
                if (word instanceof String && !((String) word).isEmpty()) {
                    ErrorCode code = ErrorCode.of((String) word);
                    String text = String.valueOf(msg);
                    if (code == ErrorCode.INTERNAL && !word.equals(code.wire())) {
                        text = word + ": " + text;
                    }
                    return new IdForgeException(code, code.retryable(), status, n.base, text, null);
                }
            }
        } catch (IllegalArgumentException notJson) {
            // not idforge's answer
        }
        boolean retry = status == 502 || status == 503 || status == 504;
        String text = body.strip();
        if (text.length() > 200) {
            text = text.substring(0, 200) + "...";
        }
        if (text.isEmpty()) {
            text = "HTTP " + status;
        }
        return new IdForgeException(retry ? ErrorCode.UNAVAILABLE : ErrorCode.INTERNAL, retry, status, n.base, text, null);
    }
}
