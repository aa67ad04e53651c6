package io.github.idforge.client;

import java.time.Instant;
import java.util.Map;

/** A snowflake ID decoded into its fields with the answering node's layout (Vesta's expId). */
public final class Explanation {
    private final long id;
    private final String layout;
    private final Instant time;
    private final long ticks;
    private final long datacenter;
    private final long worker;
    private final long sequence;
    private final Instant expires;

    Explanation(long id, Map<String, Object> a) {
        this.id = id;
        this.layout = String.valueOf(a.get("layout"));
        this.time = Instant.parse(String.valueOf(a.get("time")));
        this.ticks = number(a, "ticks");
        this.datacenter = number(a, "datacenter");
        this.worker = number(a, "worker");
        this.sequence = number(a, "sequence");
        this.expires = Instant.parse(String.valueOf(a.get("expires")));
    }

    private static long number(Map<String, Object> a, String name) {
        Object v = a.get(name);
        if (!(v instanceof Long)) {
            throw new IllegalArgumentException("field " + name + " is not an integer: " + v);
        }
        return (Long) v;
    }

    /** The decoded ID. */
    public long id() {
        return id;
    }

    /** The layout's spec, e.g. "time:41,datacenter:5,worker:5,sequence:12,unit=1ms,epoch=...". */
    public String layout() {
        return layout;
    }

    /** The start of the ID's tick. */
    public Instant time() {
        return time;
    }

    /** The time field: ticks since the layout's epoch. */
    public long ticks() {
        return ticks;
    }

    public long datacenter() {
        return datacenter;
    }

    public long worker() {
        return worker;
    }

    public long sequence() {
        return sequence;
    }

    /** When the layout's time bits run out. */
    public Instant expires() {
        return expires;
    }

    @Override
    public String toString() {
        return "Explanation{id=" + id + ", time=" + time + ", datacenter=" + datacenter + ", worker=" + worker
                + ", sequence=" + sequence + ", layout=" + layout + "}";
    }
}
