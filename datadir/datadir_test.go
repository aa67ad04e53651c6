package datadir

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
)

func TestLockIsExclusive(t *testing.T) {
	path := t.TempDir()
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	if !errors.Is(err, idforge.ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), "process ") {
		t.Errorf("message %q does not name the holder", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	d2, err := Open(path)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	d2.Close()
}

// A lock held by another process is seen too, and a killed holder leaves
// no stale lock behind.
func TestLockAcrossProcesses(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) not installed")
	}
	path := t.TempDir()
	if err := os.WriteFile(filepath.Join(path, LockFile), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	holder := exec.Command("flock", "--exclusive", "--no-fork", filepath.Join(path, LockFile), "sleep", "60")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, err := Open(path)
		if errors.Is(err, idforge.ErrLocked) {
			break
		}
		if err == nil {
			d.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("lock held by flock(1) not seen: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	holder.Process.Kill()
	holder.Wait()
	d, err := Open(path)
	if err != nil {
		t.Fatalf("Open after the holder was killed: %v", err)
	}
	d.Close()
}

func TestTimeFence(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	f := d.TimeFence()
	got, err := f.Load()
	if err != nil || !got.IsZero() {
		t.Fatalf("Load on a new directory = %v, %v; want zero, nil", got, err)
	}
	at := time.Date(2026, 11, 21, 12, 0, 0, 500_000, time.UTC) // 0.5 ms past a millisecond
	if err := f.Store(at); err != nil {
		t.Fatal(err)
	}
	got, err = d.TimeFence().Load()
	if err != nil {
		t.Fatal(err)
	}
	if want := at.Truncate(time.Millisecond).Add(time.Millisecond); !got.Equal(want) {
		t.Fatalf("Load = %v, want %v (rounded up, never down)", got, want)
	}
	if err := os.WriteFile(d.File(TimeFenceFile), []byte("garbage"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Load(); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("Load of a corrupt fence: %v, want an error saying so", err)
	}
}
