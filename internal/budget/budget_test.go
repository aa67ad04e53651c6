package budget

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestDeadline(t *testing.T) {
	c := New(context.Background(), 20*time.Millisecond)
	defer c.Release()
	if c.Err() != nil {
		t.Fatal("done before its deadline")
	}
	if d, ok := c.Deadline(); !ok || time.Until(d) > 20*time.Millisecond {
		t.Fatalf("deadline %v %v", d, ok)
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("not done after its deadline")
	}
	if !errors.Is(c.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(c), context.DeadlineExceeded) {
		t.Fatalf("Err %v, Cause %v", c.Err(), context.Cause(c))
	}
}

func TestDeadlinePassedBeforeDone(t *testing.T) {
	c := New(context.Background(), time.Millisecond)
	defer c.Release()
	time.Sleep(5 * time.Millisecond)
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err %v", c.Err())
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Err reported the deadline but Done is open")
	}
}

func TestParent(t *testing.T) {
	type k struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), k{}, "v"))
	c := New(parent, time.Hour)
	defer c.Release()
	if c.Value(k{}) != "v" {
		t.Fatal("parent's value lost")
	}
	cancel()
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("Err %v after the parent's cancel", c.Err())
	}
	<-c.Done()
	// A child context follows it.
	child, stop := context.WithCancel(New(parent, time.Hour))
	defer stop()
	<-child.Done()
}

func TestRelease(t *testing.T) {
	c := New(context.Background(), time.Hour)
	c.Release()
	<-c.Done()
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("Err %v after Release", c.Err())
	}
	w := New(context.Background(), time.Hour)
	done := w.Done()
	w.Release()
	<-done
}

func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		c := New(context.Background(), 5*time.Second)
		c.Release()
	}
}

func BenchmarkWithTimeout(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cancel()
	}
}
