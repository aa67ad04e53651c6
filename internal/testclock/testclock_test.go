package testclock

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The clock applies the offset in its file, acknowledges it, and follows
// the file when it changes.
func TestWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clock")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// waitApplied waits for the acknowledgement of want: the clock polls,
	// so the test waits for the fact, not for a guess at its delay.
	waitApplied := func(want time.Duration) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if b, err := os.ReadFile(AppliedFile(path)); err == nil && string(b) == want.String() {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("offset %v not acknowledged", want)
			}
		}
	}
	write("-1h\n")
	c := Watch(path)
	waitApplied(-time.Hour)
	if behind := time.Until(c.Now()); behind > -59*time.Minute || behind < -61*time.Minute {
		t.Fatalf("with -1h the clock is %v from the real time", behind)
	}
	write("2h")
	waitApplied(2 * time.Hour)
	if ahead := time.Until(c.Now()); ahead < 119*time.Minute || ahead > 121*time.Minute {
		t.Fatalf("with 2h the clock is %v from the real time", ahead)
	}
	write("0s")
	waitApplied(0)
	if off := time.Until(c.Now()); off < -time.Minute || off > time.Minute {
		t.Fatalf("with 0s the clock is %v from the real time", off)
	}
}
