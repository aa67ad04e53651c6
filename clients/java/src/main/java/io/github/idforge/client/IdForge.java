package io.github.idforge.client;

import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The Java client of idforge's HTTP API ({@code /v1/ids}, {@code /v1/serials},
 * {@code /v1/explain}), with fail-over across nodes and an optional local
 * range cache. It needs nothing beyond the JDK.
 *
 * <pre>{@code
 * try (IdForge ids = IdForge.builder()
 *         .nodes("http://10.0.0.1:8080", "http://10.0.0.2:8080")
 *         .token(System.getenv("IDFORGE_TOKEN"))
 *         .rangeCache(1000)
 *         .build()) {
 *     long orderId = ids.nextId("order");
 * }
 * }</pre>
 *
 * <p>Every call fails with {@link IdForgeException}, whose
 * {@link IdForgeException#code() code} is a word of idforge's error
 * vocabulary. Calls go to the first node of the list that has not failed
 * recently; a failure another node may not have is retried on the next one
 * (see {@link Builder#retries(int)}). A client is safe for concurrent use by
 * any number of threads; make one per process and share it.
 */
public final class IdForge implements AutoCloseable {
    /** This client's version, the idforge release it belongs to. */
    public static final String VERSION = "0.1.0";

    /** The default bound of one call, every attempt and retry included. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
    /** How many times a failed call is retried, on the next node, by default. */
    public static final int DEFAULT_RETRIES = 2;
    /** The share of a cached block left when the next block is fetched, by default. */
    public static final double DEFAULT_REFILL_AT = 0.2;
    /** The most IDs or serials one request may ask a server for (idforge.MaxCount). */
    public static final int MAX_COUNT = 10_000;

    private final Remote remote;
    private final RangeCache cache; // null without a range cache

    private IdForge(Builder b) {
        remote = new Remote(b.nodes.toArray(new String[0]), b.token, b.timeout, b.retries);
        cache = b.cacheBatch > 0 ? new RangeCache(remote, b.cacheBatch, b.refillAt) : null;
    }

    /** Starts configuring a client. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * One ID of key: from the range cache for a segment key when the client
     * has one, from a node otherwise.
     *
     * @throws IdForgeException {@code unknown_key}, {@code invalid_key},
     *     {@code wrong_strategy} (a key of UUIDs), {@code retired},
     *     {@code space_exhausted}, {@code unavailable}, ...
     */
    public long nextId(String key) {
        if (remote.closed) {
            throw Remote.closedError();
        }
        if (cache != null) {
            RangeCache.KeyCache kc = cache.lookup(key);
            if (kc != null) {
                return cache.next(kc);
            }
        } else {
            checkKey(key);
        }
        return fetchIds(key, 1)[0];
    }

    /**
     * A handle on one key, for a caller that takes many of its IDs:
     * {@link Key#nextId()} is {@link #nextId(String) nextId(name)} without
     * looking the key up each time, the fastest path to a cached ID. Nothing
     * is checked or asked until its first call.
     */
    public Key key(String name) {
        return new Key(name);
    }

    /** One key's IDs (see {@link IdForge#key(String)}); safe for concurrent use. */
    public final class Key {
        private final String name;
        private volatile RangeCache.KeyCache kc; // once known to be cached

        private Key(String name) {
            this.name = name;
        }

        /** The key's name. */
        public String name() {
            return name;
        }

        /** One ID, as {@link IdForge#nextId(String)}. */
        public long nextId() {
            RangeCache.KeyCache k = kc;
            if (k != null && !remote.closed) {
                return cache.next(k);
            }
            if (cache != null && !remote.closed && (k = cache.lookup(name)) != null) {
                kc = k;
                return cache.next(k);
            }
            return IdForge.this.nextId(name);
        }

        /** n IDs, as {@link IdForge#nextIds(String, int)}. */
        public long[] nextIds(int n) {
            return IdForge.this.nextIds(name, n);
        }
    }

    /**
     * n IDs of key (1 &lt;= n &lt;= {@link #MAX_COUNT}), strictly increasing for a
     * segment key, k-sorted for a snowflake key; fewer (at least one) when a
     * segment key runs out of space within the batch, and
     * {@code space_exhausted} once none is left. With a range cache, a batch
     * smaller than the cache's comes from the cache.
     */
    public long[] nextIds(String key, int n) {
        if (remote.closed) {
            throw Remote.closedError();
        }
        checkKey(key);
        checkCount(n);
        if (cache != null && n < cache.batch) {
            RangeCache.KeyCache kc = cache.lookup(key);
            if (kc != null) {
                return cache.next(kc, n);
            }
        }
        return fetchIds(key, n);
    }

    private long[] fetchIds(String key, int n) {
        String path = "/v1/ids/" + key + "?format=decimal" + (n == 1 ? "" : "&count=" + n);
        return remote.call((node, t) -> {
            List<?> strs = strings(node, remote.getObject(node, path, t), "ids", n);
            long[] ids = new long[strs.size()];
            for (int i = 0; i < ids.length; i++) {
                try {
                    ids[i] = Long.parseLong((String) strs.get(i));
                } catch (NumberFormatException e) {
                    throw Remote.garbled(node, "ID " + strs.get(i) + " is not a decimal int64");
                }
            }
            return ids;
        });
    }

    /**
     * One serial number of the serial definition name (a template the
     * server's configuration or {@code POST /v1/serials} defines); params fill
     * its {@code @{param:NAME}} fields and may be empty.
     *
     * @throws IdForgeException {@code unknown_key} for an unknown serial,
     *     {@code invalid_argument} for a missing or malformed parameter, ...
     */
    public String nextSerial(String name, Map<String, String> params) {
        return nextSerials(name, 1, params).get(0);
    }

    /**
     * n serial numbers (1 &lt;= n &lt;= {@link #MAX_COUNT}; fewer when the template's
     * width runs out within the batch) of the serial definition name. The range
     * cache never caches serials.
     */
    public List<String> nextSerials(String name, int n, Map<String, String> params) {
        checkKey(name);
        checkCount(n);
        StringBuilder path = new StringBuilder("/v1/serials/").append(name).append("?count=").append(n);
        if (params != null) {
            for (Map.Entry<String, String> p : params.entrySet()) {
                path.append("&param.").append(encode(p.getKey())).append('=').append(encode(p.getValue()));
            }
        }
        String p = path.toString();
        return remote.call((node, t) -> {
            List<String> out = new ArrayList<>();
            for (Object v : strings(node, remote.getObject(node, p, t), "values", n)) {
                out.add((String) v);
            }
            return Collections.unmodifiableList(out);
        });
    }

    /**
     * Decodes a snowflake ID with the layout of the (first answering) node.
     *
     * @throws IdForgeException {@code invalid_argument} for a negative ID or
     *     one the layout cannot have made
     */
    public Explanation explain(long id) {
        return remote.call((node, t) -> {
            Map<String, Object> a = remote.getObject(node, "/v1/explain/" + id, t);
            try {
                return new Explanation(id, a);
            } catch (RuntimeException e) {
                throw Remote.garbled(node, e.getMessage());
            }
        });
    }

    /** Stops the range cache's fetches and drops its IDs (gaps, never duplicates). Idempotent. */
    @Override
    public void close() {
        if (remote.closed) {
            return;
        }
        remote.closed = true;
        if (cache != null) {
            cache.close();
        }
    }

    /** The list field of an answer for at most n values: 1 to n strings. */
    private static List<?> strings(Remote.Node node, Map<String, Object> answer, String field, int n) {
        Object v = answer.get(field);
        if (!(v instanceof List) || ((List<?>) v).isEmpty() || ((List<?>) v).size() > n) {
            throw Remote.garbled(node, "asked for " + n + " values, got " + v);
        }
        for (Object s : (List<?>) v) {
            if (!(s instanceof String)) {
                throw Remote.garbled(node, "value " + s + " is not a string");
            }
        }
        return (List<?>) v;
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /**
     * Refuses a malformed key (or serial) name without asking a server:
     * 1 to 128 characters of A-Z a-z 0-9 . _ : -, as idforge.ValidateKeyName.
     */
    static void checkKey(String key) {
        if (key == null || key.isEmpty()) {
            throw new IdForgeException(ErrorCode.INVALID_KEY, "invalid key name: empty");
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == ':' || c == '-';
            if (!ok) {
                throw new IdForgeException(ErrorCode.INVALID_KEY, "invalid key name: character " + (i + 1)
                        + " '" + c + "' is not allowed; names use A-Z a-z 0-9 . _ : -");
            }
        }
        if (key.length() > 128) {
            throw new IdForgeException(ErrorCode.INVALID_KEY, "invalid key name: " + key.length()
                    + " characters long, at most 128 allowed");
        }
    }

    /** Refuses n &lt; 1 without asking a server; larger counts are the server's to refuse. */
    private static void checkCount(int n) {
        if (n < 1) {
            throw new IdForgeException(ErrorCode.INVALID_COUNT, "invalid count: " + n + " (want at least 1)");
        }
    }

    /** Configures an {@link IdForge} client. */
    public static final class Builder {
        private final List<String> nodes = new ArrayList<>();
        private String token;
        private Duration timeout = DEFAULT_TIMEOUT;
        private int retries = DEFAULT_RETRIES;
        private int cacheBatch;
        private double refillAt = DEFAULT_REFILL_AT;

        private Builder() {
        }

        /**
         * The nodes' base URLs ({@code http://host:port}, {@code https://...},
         * optionally with a path prefix), in order of preference: put the
         * nodes of the caller's own data center first. A client is sticky:
         * every call goes to the first node that has not failed in the last
         * 30 s. Give different clients the list in different orders to
         * spread them.
         */
        public Builder nodes(String... urls) {
            for (String u : urls) {
                URI uri;
                try {
                    uri = URI.create(Objects.requireNonNull(u, "node URL"));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("node " + u + ": " + e.getMessage(), e);
                }
                if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null
                        || uri.getRawQuery() != null || uri.getRawFragment() != null) {
                    throw new IllegalArgumentException("node " + u + " is not an http(s)://host:port URL");
                }
                nodes.add(u.replaceAll("/+$", ""));
            }
            return this;
        }

        /** The bearer token sent with every call ("Authorization: Bearer token"); use https to keep it secret. */
        public Builder token(String token) {
            this.token = token;
            return this;
        }

        /** Bounds each call, every attempt and retry included (default 5 s). */
        public Builder timeout(Duration timeout) {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout " + timeout + " is not positive");
            }
            this.timeout = timeout;
            return this;
        }

        /**
         * How many times a failed call is retried (default 2): each retry goes
         * to the next node that has not failed recently. Only failures another
         * node may not have are retried: no answer, or an answer whose code is
         * retryable ({@code unavailable}, {@code lease_lost}, ...). 0 turns
         * retries and fail-over off.
         */
        public Builder retries(int retries) {
            if (retries < 0) {
                throw new IllegalArgumentException("retries " + retries + " is negative");
            }
            this.retries = retries;
            return this;
        }

        /** {@link #rangeCache(int, double)} with refillAt {@link #DEFAULT_REFILL_AT}. */
        public Builder rangeCache(int batch) {
            return rangeCache(batch, DEFAULT_REFILL_AT);
        }

        /**
         * Caches IDs of segment keys in this client: batch IDs (1 to
         * {@link #MAX_COUNT}) are fetched at a time and handed out from
         * memory; the next block is fetched in the background once refillAt
         * (0 &lt; refillAt &lt; 1) of the block is left. Choose batch so that
         * refillAt·batch IDs last longer than a round trip at the peak rate.
         * Snowflake keys, segment keys in global order, serials and keys of
         * other strategies are never cached. Cached IDs are lost when the
         * client closes (gaps).
         */
        public Builder rangeCache(int batch, double refillAt) {
            if (batch < 1 || batch > MAX_COUNT) {
                throw new IllegalArgumentException("range cache batch " + batch + " out of range 1.." + MAX_COUNT);
            }
            if (!(refillAt > 0 && refillAt < 1)) {
                throw new IllegalArgumentException("range cache refillAt " + refillAt + " out of range (0, 1)");
            }
            this.cacheBatch = batch;
            this.refillAt = refillAt;
            return this;
        }

        /** Builds the client; it makes no request until the first call. */
        public IdForge build() {
            if (nodes.isEmpty()) {
                throw new IllegalArgumentException("no node URL");
            }
            if (nodes.size() > 64) {
                throw new IllegalArgumentException(nodes.size() + " nodes, at most 64 allowed");
            }
            return new IdForge(this);
        }
    }

    /** For tests: the range cache, null without one. */
    RangeCache cache() {
        return cache;
    }
}
