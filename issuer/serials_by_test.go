package issuer

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/idforge/idforge"
)

// JD's serial-number platform: 010-6541-00001 ends with the counting
// unit's own job number. @{seq:jobs,by=unit} counts in the key
// jobs-UNIT, created on first use; a unit outside the template's limits
// is refused with 400 and creates no key.
func TestSerialCounterChosenByParameter(t *testing.T) {
	iss, st := newIssuer(t, false)
	ctx := context.Background()
	err := iss.CreateSerial(ctx, idforge.Serial{Name: "job",
		Template: "@{param:area,chars=digits,max=4}-@{param:unit,width=4,chars=digits}-@{seq:jobs,by=unit,width=5}"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		unit string
		n    int
		want string
	}{{"6541", 2, "010-6541-00002"}, {"6542", 1, "010-6542-00001"}, {"6541", 1, "010-6541-00003"}} {
		got, err := iss.NextSerial(ctx, "job", tc.n, map[string]string{"area": "010", "unit": tc.unit})
		if err != nil || got[len(got)-1] != tc.want {
			t.Fatalf("unit %s: %v, %v; want %s last", tc.unit, got, err, tc.want)
		}
	}
	if k, err := st.Key(ctx, "jobs-6541"); err != nil || k.Strategy != idforge.StrategySegment {
		t.Fatalf("jobs-6541: %+v, %v", k, err)
	}
	_, err = iss.NextSerial(ctx, "job", 1, map[string]string{"area": "010", "unit": "../x"})
	if !errors.Is(err, idforge.ErrInvalidArgument) || idforge.ErrorCode(err).HTTPStatus() != 400 || !strings.Contains(err.Error(), `parameter "unit"`) {
		t.Fatalf("a unit outside the limits: %v", err)
	}
	keys, err := st.Keys(ctx)
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %v, %v: want jobs-6541 and jobs-6542 only", keys, err)
	}
	// A template whose serial would not show the unit is refused.
	err = iss.CreateSerial(ctx, idforge.Serial{Name: "bad", Template: "@{param:area}@{param:unit}-@{seq:jobs,by=unit,width=5}"})
	if !errors.Is(err, idforge.ErrInvalidArgument) || !strings.Contains(err.Error(), "counts apart for each value of unit") {
		t.Fatalf("unreadable unit: %v", err)
	}
}
