// Package coord holds the small pieces the coordinated worker-ID
// providers (etcd, ZooKeeper, Redis, SQL) and the worker core share: host
// lists, owner strings and time formats. The flows they share (resuming
// from the cache, renewing a lease) are exported by package worker, for
// providers outside this module too.
package coord

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// Hosts splits the host part of a coordinator URL, "h1:2379,h2,[::1]",
// into host:port addresses, adding defaultPort where a host has none. It
// fails for an empty list or an empty host in it.
func Hosts(list, defaultPort string) ([]string, error) {
	if list == "" {
		return nil, errors.New("no host")
	}
	var hosts []string
	for h := range strings.SplitSeq(list, ",") {
		if h == "" {
			return nil, fmt.Errorf("empty host in %q", list)
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(strings.Trim(h, "[]"), defaultPort)
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}

// ProcessOwner returns an owner string no other process uses, for a
// provider given none: "host/pid-N/random".
func ProcessOwner() string {
	host, _ := os.Hostname()
	var b [6]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s/pid-%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// UnixMs returns t in unix milliseconds, 0 for the zero Time.
func UnixMs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// MsTime is the inverse of UnixMs: the zero Time for ms ≤ 0.
func MsTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// FormatTime renders t for messages: UTC with nanoseconds, or "none" for
// the zero Time.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.UTC().Format(time.RFC3339Nano)
}
