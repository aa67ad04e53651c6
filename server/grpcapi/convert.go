package grpcapi

import (
	"fmt"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/internal/grpcwire"
	"github.com/idforge/idforge/issuer"
)

func fromStrategy(s idforgev1.Strategy) (idforge.Strategy, error) {
	if s == idforgev1.Strategy_STRATEGY_UNSPECIFIED {
		return idforge.StrategySegment, nil
	}
	if k, ok := grpcwire.FromStrategy(s); ok {
		return k, nil
	}
	return "", fmt.Errorf("%w: strategy %d is not one this server knows", idforge.ErrInvalidArgument, s)
}

// keyFromRequest builds and checks the key of a CreateKey call, with the
// defaults of every key definition (issuer.WithDefaults): a step or start
// absent or 0 takes its default.
func keyFromRequest(req *idforgev1.CreateKeyRequest) (idforge.Key, error) {
	strategy, err := fromStrategy(req.GetStrategy())
	if err != nil {
		return idforge.Key{}, err
	}
	k := issuer.WithDefaults(idforge.Key{Name: req.GetKey(), Strategy: strategy,
		Step: req.GetStep(), MaxID: req.GetStart(), Description: req.GetDescription(), Order: idforge.Order(req.GetOrder())})
	return k, k.Validate()
}

func toRange(s idforge.Segment) *idforgev1.Range {
	if s.Len() == 0 {
		return nil
	}
	return &idforgev1.Range{Start: s.Start, End: s.End}
}

// toKey converts a key and this node's state for it.
func toKey(k issuer.KeyState) *idforgev1.Key {
	out := &idforgev1.Key{Key: k.Name, Strategy: grpcwire.ToStrategy(k.Strategy), Description: k.Description}
	if !k.Updated.IsZero() {
		out.Updated = timestamppb.New(k.Updated)
	}
	if k.Strategy == idforge.StrategySegment {
		out.Step, out.MaxId, out.Order = k.Step, k.MaxID, string(k.Order)
	}
	out.Retired, out.MinStep, out.MaxStep = k.Retired, k.Bounds.MinStep, k.Bounds.MaxStep
	if st := k.Segment; st != nil {
		seg := &idforgev1.SegmentState{
			Current: toRange(st.Current), Pending: toRange(st.Pending),
			Buffered: st.Buffered, Step: st.Step, Loads: st.Loads, Failures: int32(st.Failures),
		}
		if seg.Current != nil {
			seg.Next = st.Next
		}
		if st.LastError != nil {
			seg.LastError = st.LastError.Error()
		}
		out.Segment = seg
	}
	return out
}
