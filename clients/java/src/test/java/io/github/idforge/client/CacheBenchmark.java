package io.github.idforge.client;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * IDs per second of the range cache on one thread, beside
 * AtomicLong.incrementAndGet (one atomic add, the floor) in the same run,
 * in interleaved rounds:
 *
 * <ul>
 *   <li>"nextId(key)" and "key handle" (IdForge.key(name).nextId(), which
 *       skips looking the key up): what a cached ID costs, taken from a
 *       block in memory through the client's own code (the key lookup, the
 *       atomic claim, the refill check). The block is one too large to run
 *       out, so no fetch interrupts the loop: a real block of 10,000 adds
 *       one refill (a lock and a task for the fetcher) per 8,000 IDs.
 *   <li>"sustained": one thread calling nextId on a key of a real node
 *       (IDFORGE_BINARY) without pause. The cache runs dry ("waits" counts
 *       the calls that waited for a block), and the rate is about one block
 *       per round trip: a figure of the network and the node, not of the
 *       cache.
 * </ul>
 *
 * <pre>
 * clients/test.sh builds the classes; by hand:
 * IDFORGE_BINARY=/tmp/idforge java -cp MAIN:TEST io.github.idforge.client.CacheBenchmark [ROUNDS]
 * </pre>
 */
public final class CacheBenchmark {
    private static final int N = 20_000_000; // calls per loop and round
    private static long sink;

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 9;
        Path config = Files.createTempFile("idforge-bench", ".toml");
        Files.writeString(config, "[segment]\nmax_step = 10000000\n\n[[keys]]\nname = \"bench\"\nstep = 10000000\n");
        try (Servers servers = Servers.start(1, config);
             IdForge ids = IdForge.builder().nodes(servers.urls()).rangeCache(IdForge.MAX_COUNT, 0.5).build()) {
            AtomicLong counter = new AtomicLong();
            ids.cache().preload("memory", new RangeCache.Block(new long[] {1}, new long[] {Long.MAX_VALUE / 2}));
            IdForge.Key memory = ids.key("memory");
            ids.nextId("bench");
            RangeCache.KeyCache bench = ids.cache().cacheOf("bench");
            for (int r = 0; r < 2; r++) { // warm up
                atomic(counter);
                byName(ids);
                byHandle(memory);
            }
            double[] byName = new double[rounds];
            double[] byHandle = new double[rounds];
            double[] sustained = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                double atomic = atomic(counter);
                byName[r] = byName(ids) / atomic;
                byHandle[r] = byHandle(memory) / atomic;
                long waits0 = waits(bench);
                long t0 = System.nanoTime();
                for (int i = 0; i < N / 10; i++) {
                    sink ^= ids.nextId("bench");
                }
                sustained[r] = N / 10 * 1e9 / (System.nanoTime() - t0);
                System.out.printf("round %d: AtomicLong.incrementAndGet %,.0f/s  nextId(key) %,.0f/s (%.2f)  key handle %,.0f/s (%.2f)"
                        + "  |  sustained %,.0f/s (%d waits)%n", r + 1, atomic, byName[r] * atomic, byName[r],
                        byHandle[r] * atomic, byHandle[r], sustained[r], waits(bench) - waits0);
            }
            Arrays.sort(byName);
            Arrays.sort(byHandle);
            Arrays.sort(sustained);
            System.out.printf("median ratio to AtomicLong.incrementAndGet: nextId(key) %.2f, key handle %.2f (goal >= 0.25);"
                    + " sustained from one node %,.0f IDs/s; java %s, %d CPUs%s%n", byName[rounds / 2], byHandle[rounds / 2],
                    sustained[rounds / 2], System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(),
                    sink == 42 ? "" : ".");
        } finally {
            Files.deleteIfExists(config);
        }
    }

    private static double atomic(AtomicLong counter) {
        long t0 = System.nanoTime();
        for (int i = 0; i < N; i++) {
            sink ^= counter.incrementAndGet();
        }
        return N * 1e9 / (System.nanoTime() - t0);
    }

    private static double byName(IdForge ids) {
        long t0 = System.nanoTime();
        for (int i = 0; i < N; i++) {
            sink ^= ids.nextId("memory");
        }
        return N * 1e9 / (System.nanoTime() - t0);
    }

    private static double byHandle(IdForge.Key key) {
        long t0 = System.nanoTime();
        for (int i = 0; i < N; i++) {
            sink ^= key.nextId();
        }
        return N * 1e9 / (System.nanoTime() - t0);
    }

    private static long waits(RangeCache.KeyCache kc) {
        synchronized (kc) {
            return kc.waits;
        }
    }
}
