package worker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/idforge/idforge"
)

func TestStatic(t *testing.T) {
	ctx := context.Background()
	l, err := Static(7).Acquire(ctx, 31)
	if err != nil || l.ID() != 7 || l.Done() != nil {
		t.Fatalf("Static(7) = %v, %v", l, err)
	}
	for _, id := range []int64{-1, 32} {
		if _, err := Static(id).Acquire(ctx, 31); !errors.Is(err, idforge.ErrInvalidWorker) {
			t.Errorf("Static(%d): %v, want ErrInvalidWorker", id, err)
		}
	}
}

func TestFileChoosesOnceAndKeeps(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "worker-id")
	first, err := File(path).Acquire(ctx, 1023)
	if err != nil {
		t.Fatal(err)
	}
	if first.ID() < 0 || first.ID() > 1023 {
		t.Fatalf("chosen ID %d out of range", first.ID())
	}
	for range 5 {
		again, err := File(path).Acquire(ctx, 1023)
		if err != nil || again.ID() != first.ID() {
			t.Fatalf("restart got %v, %v; want the saved %d", again, err, first.ID())
		}
	}
}

func TestFileErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for name, content := range map[string]string{"garbage": "seven\n", "range": "4096\n", "negative": "-1"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := File(path).Acquire(ctx, 1023); !errors.Is(err, idforge.ErrInvalidWorker) {
			t.Errorf("%s: %v, want ErrInvalidWorker", name, err)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		spec string
		want string
		err  bool
	}{
		{"", "worker ID file /data/worker-id", false},
		{"7", "static worker ID 7", false},
		{"static://12", "static worker ID 12", false},
		{"file:///etc/idforge/worker", "worker ID file /etc/idforge/worker", false},
		{"file:rel/worker", "worker ID file rel/worker", false},
		{"static://x", "", true},
		{"file://", "", true},
		{"nosuch://127.0.0.1:2181/x", "", true},
		{"k8s://idforge-3", "Kubernetes StatefulSet ordinal of pod idforge-3", false},
		{"%zz", "", true},
	}
	for _, tt := range tests {
		p, err := Open(context.Background(), tt.spec, Options{DataDir: "/data"})
		if tt.err {
			if !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Errorf("Parse(%q) error = %v, want ErrInvalidArgument", tt.spec, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.spec, err)
			continue
		}
		if got := p.Describe(); got != tt.want {
			t.Errorf("Parse(%q) = %q, want %q", tt.spec, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "7", "static://3", "file:///x", "file:y", "nosuch://h/p", "k8s://web-2", "::", "static://-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		p, err := Open(context.Background(), spec, Options{DataDir: "/data"})
		if err != nil {
			if !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrInvalidArgument", spec, err)
			}
			return
		}
		if p.Describe() == "" {
			t.Fatalf("Parse(%q) gave a provider without a description", spec)
		}
	})
}

func TestKubernetes(t *testing.T) {
	ctx := context.Background()
	for spec, want := range map[string]int64{"k8s://idforge-0": 0, "k8s://idforge-7": 7, "k8s://a-b-c-12?offset=100": 112} {
		p, err := Open(ctx, spec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		l, err := p.Acquire(ctx, 1023)
		if err != nil || l.ID() != want {
			t.Errorf("%s: %v, %v; want %d", spec, l, err, want)
		}
	}
	for _, spec := range []string{"k8s://idforge", "k8s://idforge-x", "k8s://idforge-2000"} {
		p, _ := Open(ctx, spec, Options{})
		if _, err := p.Acquire(ctx, 1023); !errors.Is(err, idforge.ErrInvalidWorker) {
			t.Errorf("%s: %v, want ErrInvalidWorker", spec, err)
		}
	}
}
