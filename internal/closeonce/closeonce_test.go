package closeonce

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// Only one of many concurrent closers may do the shutdown work.
func TestFirstExactlyOnce(t *testing.T) {
	var mu sync.Mutex
	var closed bool
	var wins sync.WaitGroup
	var n int
	var nmu sync.Mutex
	for range 50 {
		wins.Go(func() {
			if First(&mu, &closed) {
				nmu.Lock()
				n++
				nmu.Unlock()
			}
		})
	}
	wins.Wait()
	if n != 1 {
		t.Fatalf("%d closers won, want 1", n)
	}
	mu.Lock() // First must leave the lock free
	mu.Unlock()
}

// Claim holds the lock for the winner only.
func TestClaimHoldsLockForWinner(t *testing.T) {
	var mu sync.RWMutex
	var closed bool
	if !Claim(&mu, &closed) {
		t.Fatal("first Claim lost")
	}
	if mu.TryLock() {
		t.Fatal("winner's lock is not held")
	}
	mu.Unlock()
	if Claim(&mu, &closed) {
		t.Fatal("second Claim won")
	}
	if !mu.TryLock() {
		t.Fatal("loser left the lock held")
	}
}

type countCloser struct{ n *int }

func (c countCloser) Close() error { *c.n++; return nil }

// CloseAll closes what it owns on the first call only.
func TestCloseAllOnce(t *testing.T) {
	var closed atomic.Bool
	var n int
	cs := []countCloser{{&n}, {&n}}
	for range 3 {
		if err := CloseAll(&closed, cs); err != nil {
			t.Fatal(err)
		}
	}
	if n != 2 {
		t.Fatalf("%d closes, want 2", n)
	}
}

// A failed build closes the client at once and hands it to no one; a
// successful one hands it over, closed once by the owner's Close.
func TestAdopt(t *testing.T) {
	var n int
	var o Owned
	failed := errors.New("bad config")
	if err := Adopt(failed, Func(func() error { n++; return nil }), func() *Owned { return &o }); err != failed || n != 1 || o.Close() != nil || n != 1 {
		t.Fatalf("failed build: err %v, %d closes; want the build's error, 1 close, nothing owned", err, n)
	}
	if err := Adopt(nil, countCloser{&n}, func() *Owned { return &o }); err != nil || n != 1 {
		t.Fatalf("good build: err %v, %d closes; want nil, no close", err, n)
	}
	for range 2 {
		if err := o.Close(); err != nil || n != 2 {
			t.Fatalf("owner's Close: err %v, %d closes; want the client closed once", err, n)
		}
	}
}
