package grpcapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
)

// TestVocabularyGRPC walks every code of the vocabulary: its gRPC number
// is grpc-go's code of the same name, and an error carrying it is
// answered with that code and the code as the ErrorInfo reason.
func TestVocabularyGRPC(t *testing.T) {
	s := New(nil, Options{Logger: quiet})
	for _, c := range idforge.Codes() {
		var want codes.Code
		if err := want.UnmarshalJSON([]byte(strconv.Quote(c.GRPCCode().String()))); err != nil {
			t.Errorf("%s: gRPC code %s: %v", c, c.GRPCCode(), err)
			continue
		}
		if codes.Code(c.GRPCCode()) != want {
			t.Errorf("%s: gRPC code %d is named %s, which grpc-go numbers %d", c, c.GRPCCode(), c.GRPCCode(), want)
		}
		err := errors.New("a bug")
		if sentinel := c.Err(); sentinel != nil {
			err = fmt.Errorf("context: %w", sentinel)
		}
		if code, reason := reasonOf(s.toStatus("test", err)); code != want || reason != string(c) {
			t.Errorf("%s: answered %s %q, want %s %q", c, code, reason, want, c)
		}
	}
}

// A key that has used up its IDs answers OUT_OF_RANGE space_exhausted,
// never INTERNAL, on every call that issues from it.
func TestSpaceExhaustedGRPC(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := testCtx(t)
	if err := f.store.CreateKey(context.Background(), idforge.Key{Name: "full", Strategy: idforge.StrategySegment, Step: 100, MaxID: math.MaxInt64 - 150}); err != nil {
		t.Fatal(err)
	}
	var err error
	for range 1000 {
		if _, err = f.client.Next(ctx, &idforgev1.NextRequest{Key: "full"}); err != nil {
			break
		}
	}
	if code, reason := reasonOf(err); code != codes.OutOfRange || reason != "space_exhausted" {
		t.Fatalf("Next on a used-up key: %s %q (%v), want OutOfRange space_exhausted", code, reason, err)
	}
	for name, call := range map[string]func() error{
		"NextBatch": func() error {
			_, err := f.client.NextBatch(ctx, &idforgev1.NextBatchRequest{Key: "full", Count: 2})
			return err
		},
		"NextStrings": func() error {
			_, err := f.client.NextStrings(ctx, &idforgev1.NextStringsRequest{Key: "full"})
			return err
		},
	} {
		if code, reason := reasonOf(call()); code != codes.OutOfRange || reason != "space_exhausted" {
			t.Errorf("%s on a used-up key: %s %q, want OutOfRange space_exhausted", name, code, reason)
		}
	}
}

// A stream whose key runs out of space mid-way sends every ID that fits
// (a batch crossing the end failed whole, using up the IDs before the
// end), then ends with OUT_OF_RANGE space_exhausted.
func TestStreamServesWhatFits(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	// Room for exactly one segment of 100: the last ID a claim can hold
	// is idforge.MaxSegmentID.
	if err := f.store.CreateKey(context.Background(), idforge.Key{Name: "top", Strategy: idforge.StrategySegment, Step: 100, MaxID: idforge.MaxSegmentID - 99}); err != nil {
		t.Fatal(err)
	}
	stream, err := f.client.Stream(testCtx(t), &idforgev1.StreamRequest{Key: "top", Batch: 40, Count: 150})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for {
		msg, err := stream.Recv()
		if err != nil {
			if code, reason := reasonOf(err); code != codes.OutOfRange || reason != "space_exhausted" {
				t.Fatalf("after %d IDs: %s %q (%v), want OutOfRange space_exhausted", len(ids), code, reason, err)
			}
			break
		}
		ids = append(ids, msg.GetIds()...)
	}
	if len(ids) != 100 || ids[0] != idforge.MaxSegmentID-99 || ids[99] != idforge.MaxSegmentID {
		t.Fatalf("streamed %d IDs (%v…), want the 100 up to %d", len(ids), ids[:min(len(ids), 3)], int64(idforge.MaxSegmentID))
	}
}
