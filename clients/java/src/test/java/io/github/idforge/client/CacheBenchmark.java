package io.github.idforge.client;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * IDs per second of the range cache's nextId on one thread, beside
 * AtomicLong.incrementAndGet in the same run (the floor: one atomic add),
 * in interleaved rounds against a real node (IDFORGE_BINARY).
 *
 * <p>"cached" is the cost of nextId while the cache holds IDs: the calls
 * run in chunks of 4,000, and before each chunk the benchmark waits,
 * untimed, until that many IDs are cached (blocks of 10,000, the next
 * fetched once half is left); the refills the chunks start (a lock and a
 * task handed to the fetcher) and the switches to the next block are
 * timed. AtomicLong runs in
 * the same chunks. "sustained" is one thread calling nextId without pause:
 * there the cache runs dry and the rate is about batch IDs per round trip
 * to the node ("waits" counts the calls that waited for a block), a
 * figure of the network and the node, not of the cache.
 *
 * <pre>
 * clients/test.sh builds the classes; by hand:
 * IDFORGE_BINARY=/tmp/idforge java -cp MAIN:TEST io.github.idforge.client.CacheBenchmark [ROUNDS]
 * </pre>
 */
public final class CacheBenchmark {
    private static final int CHUNK = 4_000;
    private static final int CHUNKS = 500; // 2,000,000 IDs per round and loop
    private static long sink;

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 7;
        Path config = Files.createTempFile("idforge-bench", ".toml");
        Files.writeString(config, "[segment]\nmax_step = 10000000\n\n[[keys]]\nname = \"bench\"\nstep = 10000000\n");
        try (Servers servers = Servers.start(1, config);
             IdForge ids = IdForge.builder().nodes(servers.urls()).rangeCache(IdForge.MAX_COUNT, 0.5).build()) {
            AtomicLong counter = new AtomicLong();
            ids.nextId("bench");
            RangeCache.KeyCache kc = ids.cache().cacheOf("bench");
            for (int r = 0; r < 3; r++) { // warm up
                atomic(counter);
                cached(ids, kc);
            }
            double[] ratios = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                double atomic = atomic(counter);
                double cached = cached(ids, kc);
                ratios[r] = cached / atomic;
                long waits0 = waits(kc);
                long t0 = System.nanoTime();
                for (int i = 0; i < CHUNK * CHUNKS; i++) {
                    sink ^= ids.nextId("bench");
                }
                double sustained = CHUNK * CHUNKS * 1e9 / (System.nanoTime() - t0);
                System.out.printf("round %d: AtomicLong.incrementAndGet %,.0f/s  nextId cached %,.0f/s  ratio %.2f"
                        + "  |  nextId sustained %,.0f/s (%d waits)%n",
                        r + 1, atomic, cached, ratios[r], sustained, waits(kc) - waits0);
            }
            Arrays.sort(ratios);
            System.out.printf("median ratio cached nextId / AtomicLong: %.2f (goal >= 0.25); java %s, %d CPUs%s%n",
                    ratios[rounds / 2], System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(),
                    sink == 42 ? "" : ".");
        } finally {
            Files.deleteIfExists(config);
        }
    }

    private static double atomic(AtomicLong counter) {
        long total = 0;
        for (int c = 0; c < CHUNKS; c++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < CHUNK; i++) {
                sink ^= counter.incrementAndGet();
            }
            total += System.nanoTime() - t0;
        }
        return CHUNK * CHUNKS * 1e9 / total;
    }

    private static double cached(IdForge ids, RangeCache.KeyCache kc) throws InterruptedException {
        long total = 0;
        for (int c = 0; c < CHUNKS; c++) {
            while (cachedIds(kc) < CHUNK) {
                Thread.sleep(0, 100_000);
            }
            long t0 = System.nanoTime();
            for (int i = 0; i < CHUNK; i++) {
                sink ^= ids.nextId("bench");
            }
            total += System.nanoTime() - t0;
        }
        return CHUNK * CHUNKS * 1e9 / total;
    }

    private static long cachedIds(RangeCache.KeyCache kc) {
        synchronized (kc) {
            return (kc.cur == null ? 0 : kc.cur.left()) + (kc.ahead == null ? 0 : kc.ahead.left());
        }
    }

    private static long waits(RangeCache.KeyCache kc) {
        synchronized (kc) {
            return kc.waits;
        }
    }
}
