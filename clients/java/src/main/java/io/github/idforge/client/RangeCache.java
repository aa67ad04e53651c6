package io.github.idforge.client;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The range cache of segment keys (the Go client's WithRangeCache, Tinyid's
 * segment client): a block of a key's IDs is fetched with one request
 * ({@code GET /v1/ids/{key}?count=batch&form=ranges}) and handed out from
 * memory, one atomic add per ID; once {@code low} IDs are left the next
 * block is fetched in the background, so a caller waits for the network only
 * when the cache is empty. Every ID handed out is one the server issued,
 * handed out once: a block's IDs are claimed by an atomic index, and a block
 * is replaced only once that index has passed its end. IDs cached when the
 * client closes or the process dies are lost: gaps, never duplicates.
 * Keys other than segment keys, and segment keys in global order (asked
 * once per key with {@code GET /v1/keys/{key}}), are not cached.
 */
final class RangeCache {
    /** How long a failed background fetch keeps the next from starting while IDs are left. */
    private static final long REFETCH_PAUSE = TimeUnit.MILLISECONDS.toNanos(100);

    private final Remote remote;
    final int batch;
    private final int low;
    private final ConcurrentHashMap<String, KeyCache> keys = new ConcurrentHashMap<>();
    private final ExecutorService fetcher = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "idforge-range-cache");
        t.setDaemon(true);
        return t;
    });

    RangeCache(Remote remote, int batch, double refillAt) {
        this.remote = remote;
        this.batch = batch;
        this.low = (int) Math.ceil(refillAt * batch);
    }

    /** A run of IDs the server issued, handed out in order. */
    static final class Block {
        private static final VarHandle POS;

        static {
            try {
                POS = MethodHandles.lookup().findVarHandle(Block.class, "pos", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final long first; // starts[0], for the common one-range block
        private final long[] starts;
        private final long[] ends; // ends[i]: IDs in ranges 0..i
        final long total;
        @SuppressWarnings("unused") // through POS
        private volatile long pos; // index of the next ID to hand out; may pass total

        Block(long[] starts, long[] counts) {
            this.starts = starts;
            this.ends = new long[counts.length];
            long sum = 0;
            for (int i = 0; i < counts.length; i++) {
                sum += counts[i];
                ends[i] = sum;
            }
            this.first = starts[0];
            this.total = sum;
        }

        /** A block of IDs given one by one (runs of consecutive IDs become ranges). */
        static Block of(long[] ids, int n) {
            int runs = 0;
            long[] starts = new long[n];
            long[] counts = new long[n];
            for (int i = 0; i < n; i++) {
                if (runs > 0 && ids[i] == starts[runs - 1] + counts[runs - 1]) {
                    counts[runs - 1]++;
                } else {
                    starts[runs] = ids[i];
                    counts[runs++] = 1;
                }
            }
            return new Block(java.util.Arrays.copyOf(starts, runs), java.util.Arrays.copyOf(counts, runs));
        }

        /** Claims k IDs: returns the index of the first; those below total are the caller's alone. */
        long claim(long k) {
            return (long) POS.getAndAdd(this, k);
        }

        /** The ID at index p (p < total). */
        long at(long p) {
            if (starts.length == 1) {
                return first + p;
            }
            int i = 0;
            while (p >= ends[i]) {
                i++;
            }
            return starts[i] + p - (i == 0 ? 0 : ends[i - 1]);
        }

        long left() {
            return Math.max(total - (long) POS.getVolatile(this), 0);
        }
    }

    /** One key's cache: the block being handed out and the one fetched ahead. */
    static final class KeyCache {
        static final int UNDECIDED = 0, CACHED = 1, DIRECT = 2;

        final String key;
        final String blockPath;
        volatile int state;
        volatile Block cur; // the block being handed out; null before the first
        volatile boolean busy; // a fetch runs or a block waits in ahead
        // Guarded by this:
        Block ahead;
        boolean fetching;
        long completions; // fetches finished, for waiters
        IdForgeException failure; // of the last fetch, null when it succeeded
        long failedAt;
        long fetches, waits; // for tests

        KeyCache(String key, int batch) {
            this.key = key;
            this.blockPath = "/v1/ids/" + key + "?count=" + batch + "&form=ranges";
        }

        void setBusyLocked() {
            busy = fetching || ahead != null;
        }
    }

    /**
     * key's cache when key is a segment key, null otherwise (a call goes to
     * the server). Kept small, so that it inlines into the hot path; the
     * first use of a key goes to decide.
     */
    KeyCache lookup(String key) {
        KeyCache kc = keys.get(key);
        if (kc != null) {
            int state = kc.state;
            if (state == KeyCache.CACHED) {
                return kc;
            }
            if (state == KeyCache.DIRECT) {
                return null;
            }
        }
        return decide(key);
    }

    /** Asks a node for key's strategy, once per key. */
    private KeyCache decide(String key) {
        IdForge.checkKey(key);
        KeyCache kc = keys.computeIfAbsent(key, k -> new KeyCache(k, batch));
        synchronized (kc) {
            if (kc.state == KeyCache.UNDECIDED) {
                Map<String, Object> a;
                try {
                    a = remote.call((n, t) -> remote.getObject(n, "/v1/keys/" + key, t));
                } catch (IdForgeException e) {
                    keys.remove(key, kc); // an unknown key leaves nothing behind
                    throw e;
                }
                // IDs of a key in global order, cached here, would be handed
                // out after other clients got higher ones.
                boolean cacheable = "segment".equals(a.get("strategy")) && !"global".equals(a.get("order"));
                kc.state = cacheable ? KeyCache.CACHED : KeyCache.DIRECT;
            }
        }
        return kc.state == KeyCache.CACHED ? kc : null;
    }

    /** One ID of kc's key. */
    long next(KeyCache kc) {
        Block b = kc.cur;
        if (b != null) {
            long p = b.claim(1);
            if (p < b.total) {
                if (b.total - p <= low + 1 && !kc.busy) {
                    claimed(kc, b);
                }
                return b.at(p);
            }
        }
        return take(kc, new long[1], 0)[0];
    }

    /** n IDs of kc's key (1 <= n < batch). */
    long[] next(KeyCache kc, int n) {
        long[] out = new long[n];
        int got = 0;
        Block b = kc.cur;
        if (b != null) {
            got = claimInto(b, out, 0);
            if (got == n) {
                if (!kc.busy && b.left() <= low) {
                    claimed(kc, b);
                }
                return out;
            }
        }
        return take(kc, out, got);
    }

    /** Claims IDs from b into out from index got on; returns the new count. */
    private static int claimInto(Block b, long[] out, int got) {
        int want = out.length - got;
        long p = b.claim(want);
        if (p >= b.total) {
            return got;
        }
        long end = Math.min(p + want, b.total);
        for (long i = p; i < end; i++) {
            out[got++] = b.at(i);
        }
        return got;
    }

    /** After IDs were taken from b on the fast path: start a fetch when it runs low. */
    private void claimed(KeyCache kc, Block b) {
        synchronized (kc) {
            refillLocked(kc);
        }
    }

    private void refillLocked(KeyCache kc) {
        Block cur = kc.cur;
        if (!kc.fetching && kc.ahead == null && (cur == null || cur.left() <= low)
                && (kc.failure == null || System.nanoTime() - kc.failedAt >= REFETCH_PAUSE)) {
            startFetchLocked(kc);
        }
    }

    /** Starts fetching a block in the background; false once closed. */
    private boolean startFetchLocked(KeyCache kc) {
        if (remote.closed) {
            return false;
        }
        kc.fetching = true;
        kc.setBusyLocked();
        try {
            fetcher.execute(() -> fetch(kc));
        } catch (RejectedExecutionException closing) {
            kc.fetching = false;
            kc.setBusyLocked();
            return false;
        }
        return true;
    }

    private void fetch(KeyCache kc) {
        Block nb = null;
        IdForgeException err = null;
        try {
            nb = remote.call((n, t) -> block(n, kc.blockPath, t));
        } catch (IdForgeException e) {
            err = e;
        } catch (RuntimeException e) {
            err = new IdForgeException(ErrorCode.INTERNAL, false, 0, null, "fetching a block: " + e, e);
        }
        synchronized (kc) {
            kc.fetching = false;
            kc.fetches++;
            kc.completions++;
            kc.failure = err;
            if (err != null) {
                kc.failedAt = System.nanoTime();
            } else if (kc.cur == null || kc.cur.left() == 0) {
                kc.cur = nb; // nobody can take from a used-up block any more
            } else {
                kc.ahead = nb;
            }
            kc.setBusyLocked();
            kc.notifyAll();
        }
    }

    /** Reads a form=ranges answer of at most batch IDs. */
    private Block block(Remote.Node n, String path, long timeoutNanos) {
        Object rs = remote.getObject(n, path, timeoutNanos).get("ranges");
        if (!(rs instanceof List) || ((List<?>) rs).isEmpty()) {
            throw Remote.garbled(n, "no ranges");
        }
        List<?> list = (List<?>) rs;
        long[] starts = new long[list.size()];
        long[] counts = new long[list.size()];
        long total = 0;
        for (int i = 0; i < list.size(); i++) {
            Map<?, ?> r = list.get(i) instanceof Map ? (Map<?, ?>) list.get(i) : Map.of();
            Object start = r.get("start");
            Object count = r.get("count");
            try {
                starts[i] = Long.parseLong(String.valueOf(start));
            } catch (NumberFormatException e) {
                throw Remote.garbled(n, "range start " + start);
            }
            if (!(count instanceof Long) || (Long) count < 1 || (Long) count > batch - total
                    || starts[i] > Long.MAX_VALUE - (Long) count + 1) {
                throw Remote.garbled(n, "range " + r + " in an answer for " + batch + " IDs");
            }
            counts[i] = (Long) count;
            total += counts[i];
        }
        return new Block(starts, counts);
    }

    /**
     * Completes out from index got on, waiting for fetches while the cache
     * is empty. On failure, the IDs taken go back to the cache, not lost.
     */
    private long[] take(KeyCache kc, long[] out, int got) {
        long deadline = System.nanoTime() + remote.timeoutNanos + TimeUnit.SECONDS.toNanos(1);
        synchronized (kc) {
            for (boolean waited = false; ; waited = true) {
                while (got < out.length) {
                    Block b = kc.cur;
                    if (b != null) {
                        int before = got;
                        got = claimInto(b, out, got);
                        if (got > before) {
                            continue;
                        }
                    }
                    if (kc.ahead == null) {
                        break;
                    }
                    kc.cur = kc.ahead;
                    kc.ahead = null;
                    kc.setBusyLocked();
                }
                if (got == out.length) {
                    refillLocked(kc);
                    return out;
                }
                if (!waited) {
                    kc.waits++;
                }
                IdForgeException err = waitLocked(kc, deadline);
                if (err != null && (kc.cur == null || kc.cur.left() == 0) && kc.ahead == null) {
                    if (got > 0) {
                        kc.cur = Block.of(out, got); // taken but handed to no caller
                    }
                    throw err;
                }
            }
        }
    }

    /** Waits for the running fetch (starting one if none runs); returns its failure. Holds kc. */
    private IdForgeException waitLocked(KeyCache kc, long deadline) {
        if (!kc.fetching && !startFetchLocked(kc)) {
            return Remote.closedError();
        }
        long seen = kc.completions;
        try {
            while (kc.completions == seen) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return new IdForgeException(ErrorCode.TIMEOUT, "no block of IDs arrived in time");
                }
                TimeUnit.NANOSECONDS.timedWait(kc, left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new IdForgeException(ErrorCode.CANCELED, false, 0, null, "interrupted", e);
        }
        return kc.failure;
    }

    /** Stops the background fetches; cached IDs are dropped (gaps). */
    void close() {
        fetcher.shutdownNow();
        try {
            fetcher.awaitTermination(remote.timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * For the benchmark: a cache for key holding b as if it had been
     * fetched, so that taking IDs costs what it costs, and no node is asked.
     */
    KeyCache preload(String key, Block b) {
        KeyCache kc = new KeyCache(key, batch);
        kc.cur = b;
        kc.state = KeyCache.CACHED;
        keys.put(key, kc);
        return kc;
    }

    /** For tests: key's cache. */
    KeyCache cacheOf(String key) {
        return keys.get(key);
    }
}
