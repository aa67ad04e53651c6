package holder

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/worker"
)

type fakeProvider struct{ worker.Provider }

// A failing open answers a nil Provider, which callers may compare with
// nil, not a nil *P wrapped in the interface.
func TestOpenerFailureIsNil(t *testing.T) {
	bad := errors.New("bad URL")
	open := Opener(func(*url.URL, worker.Options) (*fakeProvider, error) { return nil, bad })
	p, err := open(context.Background(), &url.URL{}, worker.Options{})
	if err != bad || p != nil {
		t.Fatalf("open = %v, %v; want a nil Provider and the error", p, err)
	}
}

// Defaults fills in the provider's defaults and refuses a TTL under 1ms
// or a negative timeout with the provider's words.
func TestDefaults(t *testing.T) {
	h := Holder{Who: "test worker"}
	if err := h.Defaults("stale_after", 30*time.Second, 5*time.Second); err != nil || h.TTL != 30*time.Second || h.Timeout != 5*time.Second {
		t.Fatalf("zero values: err %v, TTL %s, Timeout %s; want the defaults", err, h.TTL, h.Timeout)
	}
	for _, h := range []*Holder{
		{Who: "test worker", TTL: time.Microsecond},
		{Who: "test worker", Timeout: -time.Second},
	} {
		err := h.Defaults("stale_after", 30*time.Second, 5*time.Second)
		if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "test worker: ") {
			t.Errorf("TTL %s, Timeout %s: err %v; want an invalid-argument error of test worker", h.TTL, h.Timeout, err)
		}
	}
	if err := (&Holder{Who: "test worker", TTL: time.Microsecond}).Defaults("stale_after", time.Second, time.Second); !strings.Contains(err.Error(), "stale_after 1µs") {
		t.Errorf("err %v; want the TTL named stale_after", err)
	}
}
