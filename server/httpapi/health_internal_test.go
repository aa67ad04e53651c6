package httpapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/sequence"
)

// A source with many members ejected and a long error stays small in
// /readyz.
func TestSummariseIsSmall(t *testing.T) {
	var members []sequence.MemberStatus
	for i := range 1024 {
		members = append(members, sequence.MemberStatus{Index: i, Name: fmt.Sprintf("redis://host-%d:6379/0?key=k", i), State: "ejected"})
	}
	st := sequence.FromMembers("balanced", members)
	st.LastError = strings.Repeat("é", 300)
	got := summarise([]issuer.SourceStatus{{Name: "ha", Status: st}})
	b, _ := json.Marshal(got)
	if len(b) > 1024 {
		t.Errorf("%d bytes: %s", len(b), b)
	}
	s := got["ha"]
	if s.Health != "down" || len(s.Ejected) != maxSummaryMembers+1 || s.Ejected[maxSummaryMembers] != "… and 1016 more" || !strings.HasSuffix(s.LastError, "é…") {
		t.Errorf("summary: %+v", s)
	}
	if summarise(nil) != nil {
		t.Error("no sources, yet a summary")
	}
}
