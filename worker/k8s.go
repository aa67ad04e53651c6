package worker

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
)

func init() {
	open := func(_ context.Context, u *url.URL, _ Options) (Provider, error) { return Kubernetes(u), nil }
	for _, scheme := range []string{"k8s", "kubernetes"} {
		Register(Scheme{Name: scheme, Form: scheme + "://?offset=0", Doc: "the ordinal of this StatefulSet pod ($POD_NAME or $HOSTNAME), plus offset"}, open)
	}
}

// Kubernetes returns a Provider that takes the worker ID from the ordinal
// of a StatefulSet pod: pod "idforge-3" is worker 3. A StatefulSet never
// runs two pods with one ordinal, so the IDs are distinct without a
// coordinator. The pod name comes from the URL's host (k8s://idforge-3,
// for tests), else $POD_NAME, else $HOSTNAME (which Kubernetes sets to
// the pod name). The query parameter offset=N adds N, so that several
// StatefulSets can share one layout (e.g. one per datacenter).
func Kubernetes(u *url.URL) Provider {
	return k8s{u: u}
}

type k8s struct{ u *url.URL }

func (k k8s) Describe() string { return "Kubernetes StatefulSet ordinal of pod " + k.pod() }

func (k k8s) pod() string {
	for _, name := range []string{k.u.Host, os.Getenv("POD_NAME"), os.Getenv("HOSTNAME")} {
		if name != "" {
			return name
		}
	}
	return ""
}

func (k k8s) Acquire(ctx context.Context, max int64) (Lease, error) {
	pod := k.pod()
	dash := strings.LastIndexByte(pod, '-')
	ordinal, err := strconv.ParseInt(pod[dash+1:], 10, 64)
	if pod == "" || dash < 0 || err != nil {
		return nil, fmt.Errorf("%w: pod name %q does not end in a StatefulSet ordinal (name-N); set POD_NAME", idforge.ErrInvalidWorker, pod)
	}
	q := dsn.NewQuery(k.u, "k8s worker URL")
	id := ordinal + q.Int("offset", 0, 0, math.MaxInt64-ordinal)
	if err := q.Err(); err != nil {
		return nil, err
	}
	if id > max {
		return nil, fmt.Errorf("%w: pod %s gives worker ID %d, the layout allows 0..%d", idforge.ErrInvalidWorker, pod, id, max)
	}
	return fixedLease(id), nil
}
