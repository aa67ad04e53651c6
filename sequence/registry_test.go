package sequence_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/sequence"
	_ "github.com/idforge/idforge/sequence/all"
)

func TestSchemes(t *testing.T) {
	want := []string{"autoinc+mysql", "autoinc+postgres", "autoinc+postgresql", "autoinc+sqlite", "memcache", "mongodb", "mongodb+srv",
		"redis", "redis+cluster", "redis+sentinel", "rediss", "rediss+cluster", "rediss+sentinel",
		"sqlrow+mysql", "sqlrow+postgres", "sqlrow+postgresql", "sqlrow+sqlite", "tickets+mysql"}
	if got := sequence.Names(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Names() = %v\nwant %v", got, want)
	}
	wantC := []string{"mongodb", "mongodb+srv", "mysql", "postgres", "postgresql",
		"redis", "redis+cluster", "redis+sentinel", "rediss", "rediss+cluster", "rediss+sentinel", "sqlite"}
	if got := sequence.CounterNames(); strings.Join(got, " ") != strings.Join(wantC, " ") {
		t.Errorf("CounterNames() = %v\nwant %v", got, wantC)
	}
}

func TestOpenUnknown(t *testing.T) {
	ctx := context.Background()
	for _, raw := range []string{"nope://u:secret@host/x", "no scheme", "redis://u:secret@host:bad port/"} {
		_, err := sequence.Open(ctx, raw)
		if !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("Open(%q): %v, want ErrInvalidArgument", raw, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q) shows the password: %v", raw, err)
		}
	}
	_, err := sequence.OpenCounter(ctx, "ftp://u:secret@host/")
	if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "redis") || strings.Contains(err.Error(), "secret") {
		t.Errorf("OpenCounter(ftp): %v", err)
	}
}

func TestRegisterPanics(t *testing.T) {
	open := func(context.Context, *url.URL) (sequence.Source, error) { return nil, nil }
	for _, tc := range []struct {
		name   string
		scheme string
		open   sequence.Opener
	}{
		{"empty", "", open},
		{"upper case", "Redis", open},
		{"nil", "fresh", nil},
		{"taken", "redis", open},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			sequence.Register(sequence.Scheme{Name: tc.scheme}, tc.open)
		})
	}
}
