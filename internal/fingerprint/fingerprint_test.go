package fingerprint

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/memstore"
)

func TestMemberURLLeavesPasswordsOut(t *testing.T) {
	a := MemberURL("redis://app:old@10.0.0.1:6379/0?key=orders&password=x&timeout=1s")
	b := MemberURL("redis://app:new@10.0.0.1:6379/0?timeout=1s&key=orders&password=y")
	if a != b || strings.Contains(a, "old") || strings.Contains(a, "password") {
		t.Fatalf("MemberURL: %q and %q, want one form without passwords", a, b)
	}
	if MemberURL("redis://10.0.0.2:6379/0?key=orders") == MemberURL("redis://10.0.0.1:6379/0?key=orders") {
		t.Fatal("two servers have one form")
	}
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	d := Source("s", []string{"redis://h1/0?key=a", "redis://h2/0?key=a"}, 2)
	for range 2 {
		if err := Check(ctx, st, d); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := st.Definition(ctx, Kind, "source/s")
	if err != nil || !strings.Contains(rec.Spec, "sha256:") || !strings.Contains(rec.Spec, "balanced over 2 members") {
		t.Fatalf("recorded %+v, %v", rec, err)
	}
	secret := Format("k", "feistel:bits=40+base62", []byte("a very secret key!"))
	if err := Check(ctx, st, secret); err != nil {
		t.Fatal(err)
	}
	if rec, _ := st.Definition(ctx, Kind, "format/k"); strings.Contains(rec.Spec, "very secret") {
		t.Fatalf("the secret is stored: %s", rec.Spec)
	}
	err = Check(ctx, st, Source("s", []string{"redis://h2/0?key=a", "redis://h1/0?key=a"}, 2))
	if !errors.Is(err, idforge.ErrUnsafeChange) || !strings.Contains(err.Error(), "in their order") {
		t.Fatalf("members swapped: %v", err)
	}
	if err := Check(ctx, nil, d); err != nil {
		t.Fatalf("no definition store: %v", err)
	}
	if err := Absent(ctx, st, Format("k", "", nil)); !errors.Is(err, idforge.ErrUnsafeChange) {
		t.Fatalf("format removed: %v", err)
	}
	if err := Absent(ctx, st, Format("other", "", nil)); err != nil {
		t.Fatalf("never recorded: %v", err)
	}
}
