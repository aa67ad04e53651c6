package rotate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/sequence"
)

func TestRotor(t *testing.T) {
	ctx := context.Background()
	r := New("src", 4, time.Hour)
	var calls []int
	failing := map[int]error{1: errors.New("down"), 2: Exhausted(errors.New("used up"))}
	do := func() (int, error) {
		got := -1
		err := r.Do(ctx, func(_ context.Context, i int) error {
			calls = append(calls, i)
			if err := failing[i]; err != nil {
				return err
			}
			got = i
			return nil
		})
		return got, err
	}
	var served []int
	for range 6 {
		i, err := do()
		if err != nil {
			t.Fatal(err)
		}
		served = append(served, i)
	}
	for _, i := range served {
		if i == 1 || i == 2 {
			t.Fatalf("served by failing member %d: %v", i, served)
		}
	}
	// Member 1 is aside, member 2 gone: neither is called again while the
	// others answer.
	tried := map[int]int{}
	for _, i := range calls {
		tried[i]++
	}
	if tried[1] != 1 || tried[2] != 1 {
		t.Fatalf("calls per member %v: failing members were retried", tried)
	}
	// Everything failing: members aside are tried once more, used-up ones
	// never; the errors come back joined.
	failing[0], failing[3] = errors.New("down"), errors.New("down")
	calls = nil
	if _, err := do(); err == nil {
		t.Fatal("no error with every member failing")
	}
	for _, i := range calls {
		if i == 2 {
			t.Fatal("a used-up member was tried again")
		}
	}
	// A recovered member is found at once by the second pass.
	delete(failing, 1)
	if i, err := do(); err != nil || i != 1 {
		t.Fatalf("recovered member: %d, %v", i, err)
	}
	// All used up.
	all := New("src", 1, time.Hour)
	all.Do(ctx, func(context.Context, int) error { return Exhausted(idforge.ErrSpaceExhausted) })
	if err := all.Do(ctx, func(context.Context, int) error { return nil }); !errors.Is(err, idforge.ErrSpaceExhausted) {
		t.Fatalf("every member used up: %v", err)
	}
	// A cancelled context stops at once.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := New("src", 2, time.Hour).Do(cctx, func(context.Context, int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// Next: closed, a value from a member that answers, ErrSpaceExhausted
// only when every member is used up, ErrUnavailable (keeping the codes of
// the members' errors) when one that is not used up fails.
func TestNext(t *testing.T) {
	ctx := context.Background()
	if _, err := New("src", 1, time.Hour).Next(ctx, true, nil); !errors.Is(err, idforge.ErrClosed) {
		t.Fatalf("closed: %v", err)
	}
	r := New("src", 2, time.Hour)
	failing := map[int]error{0: Exhausted(idforge.ErrSpaceExhausted), 1: idforge.ErrStoreFailedOver}
	take := func(_ context.Context, i int) (int64, error) {
		if err := failing[i]; err != nil {
			return 0, err
		}
		return int64(10 + i), nil
	}
	if _, err := r.Next(ctx, false, take); !errors.Is(err, idforge.ErrUnavailable) || idforge.ErrorCode(err) != idforge.CodeStoreFailedOver {
		t.Fatalf("one used up, one failed over: %v (code %s)", err, idforge.ErrorCode(err))
	}
	delete(failing, 1)
	if v, err := r.Next(ctx, false, take); err != nil || v != 11 {
		t.Fatalf("member 1 back: %d, %v", v, err)
	}
	failing[1] = Exhausted(idforge.ErrSpaceExhausted)
	if _, err := r.Next(ctx, false, take); !errors.Is(err, idforge.ErrSpaceExhausted) || errors.Is(err, idforge.ErrUnavailable) {
		t.Fatalf("every member used up: %v", err)
	}
}

// A failing member is counted as set aside once per time it is set
// aside, however many calls it fails while aside, and Status reports it.
func TestRotorStatus(t *testing.T) {
	r := New("src", 2, time.Hour)
	for range 5 {
		r.Do(context.Background(), func(_ context.Context, i int) error {
			if i == 1 {
				return errors.New("down")
			}
			return nil
		})
	}
	st := r.Status("kind", func(i int) string { return fmt.Sprint("m", i) }, nil)
	m := st.Members[1]
	if st.Health != sequence.Degraded || m.State != sequence.MemberEjected || m.Ejections != 1 || m.Failures != 1 || m.LastError != "down" {
		t.Fatalf("status %+v; want degraded, member m1 ejected once after one failure", st)
	}
	if st.Members[0].Calls < 4 || st.Members[0].State != sequence.MemberAdmitted {
		t.Fatalf("member m0 %+v; want admitted, serving the calls", st.Members[0])
	}
}

// A member that passes a call is tried no more for it but stays admitted;
// Observe sets a member aside and admits it again; DoFrom starts where
// it is told.
func TestPassObserve(t *testing.T) {
	ctx := context.Background()
	r := New("src", 3, time.Hour)
	var calls []int
	err := r.DoFrom(ctx, 4, func(_ context.Context, i int) error {
		calls = append(calls, i)
		if i < 2 {
			return Pass(idforge.ErrUnknownKey)
		}
		return nil
	})
	if err != nil || fmt.Sprint(calls) != "[1 2]" {
		t.Fatalf("DoFrom(4) = %v after calls %v, want nil after [1 2]", err, calls)
	}
	if r.Aside(1) || r.Status("src", strconv.Itoa, nil).Health != sequence.Up {
		t.Fatal("a member that passed was set aside")
	}
	r.Observe(0, errors.New("ping failed"))
	if !r.Aside(0) || r.Status("src", strconv.Itoa, nil).Members[0].State != sequence.MemberEjected {
		t.Fatal("Observe of a failure did not set the member aside")
	}
	r.Observe(0, nil)
	if r.Aside(0) {
		t.Fatal("Observe of a success did not admit the member")
	}
}
