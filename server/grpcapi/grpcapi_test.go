package grpcapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/segment"
	"github.com/idforge/idforge/snowflake"
	"github.com/idforge/idforge/store/memstore"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fixture is a Server over memstore and a snowflake generator (worker 5),
// served over bufconn, with keys "order" (segment, step 100) and "msg"
// (snowflake), and the serials "bill", "wide" and "job" (with a
// parameter), all drawing on "order".
type fixture struct {
	store  *memstore.Store
	iss    *issuer.Issuer
	srv    *Server
	grpc   *grpc.Server
	conn   *grpc.ClientConn
	client idforgev1.IDForgeClient
}

type fixtureOptions struct {
	noSnowflake bool
	// stallClaims makes every segment claim wait until its context ends,
	// as a store slower than any timeout would.
	stallClaims bool
	opts        Options
}

// stallingStore is a memstore whose segment claims never finish: each
// waits until its context ends (the allocator's load timeout, or Close).
type stallingStore struct{ *memstore.Store }

func (s stallingStore) ClaimSegment(ctx context.Context, key string, step int64) (idforge.Segment, error) {
	<-ctx.Done()
	return idforge.Segment{}, ctx.Err()
}

func newFixture(t testing.TB, fo fixtureOptions) *fixture {
	t.Helper()
	st := memstore.New()
	ctx := context.Background()
	for _, k := range []idforge.Key{
		{Name: "order", Strategy: idforge.StrategySegment, Step: 100, MaxID: 1},
		{Name: "msg", Strategy: idforge.StrategySnowflake},
	} {
		if err := st.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	var gen *snowflake.Generator
	if !fo.noSnowflake {
		var err error
		if gen, err = snowflake.New(snowflake.Settings{Worker: 5, Logger: quiet}); err != nil {
			t.Fatal(err)
		}
	}
	var store idforge.Store = st
	if fo.stallClaims {
		store = stallingStore{st}
	}
	iss := issuer.New(store, gen, issuer.Settings{Logger: quiet, Segment: segment.Settings{
		MaxStep: 100, RetryMin: time.Millisecond, RetryMax: 2 * time.Millisecond},
		Serials: testSerials})
	if fo.opts.Logger == nil {
		fo.opts.Logger = quiet
	}
	srv := New(iss, fo.opts)
	srv.watchEvery = 5 * time.Millisecond
	g := grpc.NewServer()
	srv.Register(g)
	conn := serveBufconn(t, g)
	t.Cleanup(func() {
		conn.Close()
		g.Stop()
		iss.Close()
		if gen != nil {
			gen.Close()
		}
	})
	return &fixture{store: st, iss: iss, srv: srv, grpc: g, conn: conn, client: idforgev1.NewIDForgeClient(conn)}
}

// serveBufconn serves g over an in-memory listener and returns a client
// connection to it; the caller closes both.
func serveBufconn(t testing.TB, g *grpc.Server) *grpc.ClientConn {
	t.Helper()
	ln := bufconn.Listen(1 << 20)
	go g.Serve(ln)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// testSerials are the fixture's serial definitions.
var testSerials = []idforge.Serial{
	{Name: "bill", Template: "B@{seq:order,width=4}"},
	{Name: "wide", Template: "W@{seq:order,width=8}"},
	{Name: "job", Template: "@{param:area,chars=digits,max=4}-@{seq:order,width=4}"},
}

// addStringKey adds the uuidv7 key "trace" to the fixture's store.
func (f *fixture) addStringKey(t testing.TB) {
	t.Helper()
	if err := f.store.CreateKey(context.Background(), idforge.Key{Name: "trace", Strategy: idforge.StrategyUUIDv7}); err != nil {
		t.Fatal(err)
	}
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// reasonOf returns the gRPC code and the idforge reason of err.
func reasonOf(err error) (codes.Code, string) {
	st := status.Convert(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == ErrorDomain {
			return st.Code(), info.GetReason()
		}
	}
	return st.Code(), ""
}

func TestIssuing(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := testCtx(t)
	one, err := f.client.Next(ctx, &idforgev1.NextRequest{Key: "order"})
	if err != nil || one.GetId() != 1 {
		t.Fatalf("Next(order) = %v, %v; want 1", one, err)
	}
	batch, err := f.client.NextBatch(ctx, &idforgev1.NextBatchRequest{Key: "order", Count: 3})
	if err != nil || !slices.Equal(batch.GetIds(), []int64{2, 3, 4}) {
		t.Fatalf("NextBatch(order, 3) = %v, %v; want 2 3 4", batch, err)
	}
	snow, err := f.client.NextBatch(ctx, &idforgev1.NextBatchRequest{Key: "msg", Count: 2})
	if err != nil || len(snow.GetIds()) != 2 || snow.GetIds()[0] >= snow.GetIds()[1] || snow.GetIds()[0] < 1<<40 {
		t.Fatalf("NextBatch(msg, 2) = %v, %v; want two increasing snowflake IDs", snow, err)
	}
	max, err := f.client.NextBatch(ctx, &idforgev1.NextBatchRequest{Key: "order", Count: idforge.MaxCount})
	if err != nil || len(max.GetIds()) != idforge.MaxCount {
		t.Fatalf("NextBatch(order, idforge.MaxCount): %d IDs, %v", len(max.GetIds()), err)
	}
}

func TestNextSerial(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := testCtx(t)
	one, err := f.client.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: "bill"})
	if err != nil || !slices.Equal(one.GetValues(), []string{"B0001"}) {
		t.Fatalf("NextSerial(bill) with count 0 = %v, %v; want B0001", one, err)
	}
	three, err := f.client.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: "bill", Count: 3})
	if err != nil || !slices.Equal(three.GetValues(), []string{"B0002", "B0003", "B0004"}) {
		t.Fatalf("NextSerial(bill, 3) = %v, %v", three, err)
	}
	jobs, err := f.client.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: "job", Count: 2, Params: map[string]string{"area": "010"}})
	if err != nil || !slices.Equal(jobs.GetValues(), []string{"010-0005", "010-0006"}) {
		t.Fatalf("NextSerial(job, 2, area=010) = %v, %v", jobs, err)
	}
	max, err := f.client.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: "wide", Count: idforge.MaxCount})
	if err != nil || len(max.GetValues()) != idforge.MaxCount || max.GetValues()[idforge.MaxCount-1] != "W00010006" {
		t.Fatalf("NextSerial(wide, idforge.MaxCount): %d values, %v", len(max.GetValues()), err)
	}
}

func TestNextStrings(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.addStringKey(t)
	ctx := testCtx(t)
	for _, tc := range []struct {
		count  int32
		format string
		want   []string
	}{
		{0, "", []string{"1"}},
		{3, "", []string{"2", "3", "4"}},
		{2, "hex", []string{"5", "6"}},
		{2, "hex", []string{"7", "8"}},
		{3, "hex", []string{"9", "a", "b"}},
		{1, "decimal", []string{"12"}},
	} {
		got, err := f.client.NextStrings(ctx, &idforgev1.NextStringsRequest{Key: "order", Count: tc.count, Format: tc.format})
		if err != nil || !slices.Equal(got.GetIds(), tc.want) {
			t.Fatalf("NextStrings(order, %d, %q) = %v, %v; want %v", tc.count, tc.format, got, err, tc.want)
		}
	}
	uuids, err := f.client.NextStrings(ctx, &idforgev1.NextStringsRequest{Key: "trace", Count: 3})
	if err != nil || len(uuids.GetIds()) != 3 {
		t.Fatalf("NextStrings(trace, 3) = %v, %v", uuids, err)
	}
	for i, u := range uuids.GetIds() {
		// Version 7, and time-ordered: each sorts after the one before.
		if len(u) != 36 || u[14] != '7' || (i > 0 && u <= uuids.GetIds()[i-1]) {
			t.Fatalf("NextStrings(trace, 3) = %v: not increasing version-7 UUIDs", uuids.GetIds())
		}
	}
	if _, err := f.client.NextStrings(ctx, &idforgev1.NextStringsRequest{Key: "msg", Count: idforge.MaxCount}); err != nil {
		t.Fatalf("NextStrings(msg, idforge.MaxCount): %v", err)
	}
}

func TestExplainAndMake(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := testCtx(t)
	before := time.Now().Truncate(time.Millisecond)
	id, err := f.client.Next(ctx, &idforgev1.NextRequest{Key: "msg"})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := f.client.Explain(ctx, &idforgev1.ExplainRequest{Id: id.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	twitter, _ := snowflake.Preset("twitter")
	tm := ex.GetTime().AsTime()
	if ex.GetId() != id.GetId() || ex.GetWorker() != 5 || ex.GetDatacenter() != 0 ||
		tm.Before(before) || tm.After(time.Now()) || ex.GetUnixMs() != tm.UnixMilli() ||
		ex.GetLayout() != twitter.String() || !ex.GetExpires().AsTime().Equal(twitter.Expires()) ||
		ex.GetTicks() != tm.UnixMilli()-twitter.Epoch.UnixMilli() {
		t.Fatalf("Explain(%d) = %v", id.GetId(), ex)
	}
	made, err := f.client.Make(ctx, &idforgev1.MakeRequest{
		Time: ex.GetTime(), Datacenter: ex.GetDatacenter(), Worker: ex.GetWorker(), Sequence: ex.GetSequence()})
	if err != nil || made.GetId() != id.GetId() {
		t.Fatalf("Make(Explain(%d)) = %v, %v", id.GetId(), made, err)
	}
	// The smallest ID of a moment: sequence 0, every worker.
	at := time.Date(2030, 1, 2, 3, 4, 5, 6e6, time.UTC)
	made, err = f.client.Make(ctx, &idforgev1.MakeRequest{Time: timestamppb.New(at)})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := twitter.Make(snowflake.Parts{Time: at})
	if made.GetId() != want {
		t.Fatalf("Make(%s) = %d, want %d", at, made.GetId(), want)
	}
}

// A key in global order says so, and its order cannot change.
func TestKeyOrder(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := testCtx(t)
	created, err := f.client.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "tx", Order: "global"})
	if err != nil || created.GetOrder() != "global" {
		t.Fatalf("CreateKey in global order = %v, %v", created, err)
	}
	if got, err := f.client.GetKey(ctx, &idforgev1.GetKeyRequest{Key: "tx"}); err != nil || got.GetOrder() != "global" {
		t.Fatalf("GetKey = %v, %v", got, err)
	}
	if _, err := f.client.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "invoice"}); err != nil {
		t.Fatal(err)
	}
	_, err = f.client.UpdateKey(ctx, &idforgev1.UpdateKeyRequest{Key: "invoice", Order: proto.String("global")})
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "node order") {
		t.Fatalf("UpdateKey to global order = %v, want INVALID_ARGUMENT (unsafe_change)", err)
	}
}

func TestKeys(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := testCtx(t)
	created, err := f.client.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "invoice", Description: "invoices"})
	want := &idforgev1.Key{Key: "invoice", Strategy: idforgev1.Strategy_STRATEGY_SEGMENT, Step: 1000, MaxId: 1, Description: "invoices", Order: "node"}
	if err != nil || !proto.Equal(created, want) {
		t.Fatalf("CreateKey with defaults = %v, %v; want %v", created, err, want)
	}
	// 0 is the default, as on every path that defines a key (a TOML file
	// or a CLI flag cannot tell 0 from left out).
	created, err = f.client.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "zeros", Step: proto.Int64(0), Start: proto.Int64(0)})
	want = &idforgev1.Key{Key: "zeros", Strategy: idforgev1.Strategy_STRATEGY_SEGMENT, Step: 1000, MaxId: 1, Order: "node"}
	if err != nil || !proto.Equal(created, want) {
		t.Fatalf("CreateKey(step 0, start 0) = %v, %v; want the defaults %v", created, err, want)
	}
	created, err = f.client.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "ticket", Step: proto.Int64(10), Start: proto.Int64(500)})
	if err != nil || created.GetStep() != 10 || created.GetMaxId() != 500 {
		t.Fatalf("CreateKey(step 10, start 500) = %v, %v", created, err)
	}
	if id, err := f.client.Next(ctx, &idforgev1.NextRequest{Key: "ticket"}); err != nil || id.GetId() != 500 {
		t.Fatalf("first ticket = %v, %v; want 500", id, err)
	}
	created, err = f.client.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "event", Strategy: idforgev1.Strategy_STRATEGY_SNOWFLAKE})
	if err != nil || created.GetStrategy() != idforgev1.Strategy_STRATEGY_SNOWFLAKE || created.GetStep() != 0 {
		t.Fatalf("CreateKey(snowflake) = %v, %v", created, err)
	}

	got, err := f.client.GetKey(ctx, &idforgev1.GetKeyRequest{Key: "ticket"})
	if err != nil || got.GetSegment() == nil || got.GetSegment().GetNext() != 501 ||
		!proto.Equal(got.GetSegment().GetCurrent(), &idforgev1.Range{Start: 500, End: 510}) || got.GetMaxId() < 510 {
		t.Fatalf("GetKey(ticket) = %v, %v", got, err)
	}
	list, err := f.client.ListKeys(ctx, &idforgev1.ListKeysRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range list.GetKeys() {
		names = append(names, k.GetKey())
	}
	if !slices.Equal(names, []string{"event", "invoice", "msg", "order", "ticket", "zeros"}) {
		t.Fatalf("ListKeys names = %v", names)
	}
	if sf := list.GetSnowflake(); sf == nil || sf.GetWorker() != 5 || sf.GetLayout() == "" || sf.GetExpires() == nil {
		t.Fatalf("ListKeys snowflake = %v", sf)
	}
}

// TestErrorCodes checks every failure a client can provoke: the gRPC code
// and the idforge reason in the status details.
func TestErrorCodes(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.addStringKey(t)
	ctx := testCtx(t)
	c := f.client
	stream := func(req *idforgev1.StreamRequest) error {
		s, err := c.Stream(ctx, req)
		if err != nil {
			return err
		}
		for {
			if _, err := s.Recv(); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
	}
	for _, tc := range []struct {
		name   string
		call   func() error
		code   codes.Code
		reason string
	}{
		{"Next unknown key", func() error { _, err := c.Next(ctx, &idforgev1.NextRequest{Key: "nope"}); return err }, codes.NotFound, "unknown_key"},
		{"Next empty key", func() error { _, err := c.Next(ctx, &idforgev1.NextRequest{}); return err }, codes.InvalidArgument, "invalid_key"},
		{"Next bad key", func() error { _, err := c.Next(ctx, &idforgev1.NextRequest{Key: "a/b"}); return err }, codes.InvalidArgument, "invalid_key"},
		{"NextBatch count 0", func() error { _, err := c.NextBatch(ctx, &idforgev1.NextBatchRequest{Key: "order"}); return err }, codes.InvalidArgument, "invalid_count"},
		{"NextBatch count -1", func() error {
			_, err := c.NextBatch(ctx, &idforgev1.NextBatchRequest{Key: "order", Count: -1})
			return err
		}, codes.InvalidArgument, "invalid_count"},
		{"NextBatch count 10^9", func() error {
			_, err := c.NextBatch(ctx, &idforgev1.NextBatchRequest{Key: "order", Count: 1e9})
			return err
		}, codes.InvalidArgument, "invalid_count"},
		{"NextBatch count idforge.MaxCount+1", func() error {
			_, err := c.NextBatch(ctx, &idforgev1.NextBatchRequest{Key: "order", Count: idforge.MaxCount + 1})
			return err
		}, codes.InvalidArgument, "invalid_count"},
		{"NextBatch unknown key", func() error {
			_, err := c.NextBatch(ctx, &idforgev1.NextBatchRequest{Key: "nope", Count: 2})
			return err
		}, codes.NotFound, "unknown_key"},
		{"NextSerial unknown serial", func() error {
			_, err := c.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: "nope"})
			return err
		}, codes.NotFound, "unknown_key"},
		{"NextSerial empty name", func() error { _, err := c.NextSerial(ctx, &idforgev1.NextSerialRequest{}); return err }, codes.InvalidArgument, "invalid_key"},
		{"NextSerial bad name", func() error {
			_, err := c.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: "a/b"})
			return err
		}, codes.InvalidArgument, "invalid_key"},
		{"NextSerial count -1", func() error {
			_, err := c.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: "bill", Count: -1})
			return err
		}, codes.InvalidArgument, "invalid_count"},
		{"NextSerial count idforge.MaxCount+1", func() error {
			_, err := c.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: "bill", Count: idforge.MaxCount + 1})
			return err
		}, codes.InvalidArgument, "invalid_count"},
		{"NextSerial missing parameter", func() error {
			_, err := c.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: "job"})
			return err
		}, codes.InvalidArgument, "invalid_argument"},
		{"NextSerial malformed parameter", func() error {
			_, err := c.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: "job", Params: map[string]string{"area": "01x"}})
			return err
		}, codes.InvalidArgument, "invalid_argument"},
		{"NextStrings unknown key", func() error {
			_, err := c.NextStrings(ctx, &idforgev1.NextStringsRequest{Key: "nope"})
			return err
		}, codes.NotFound, "unknown_key"},
		{"NextStrings bad key", func() error {
			_, err := c.NextStrings(ctx, &idforgev1.NextStringsRequest{Key: "a b"})
			return err
		}, codes.InvalidArgument, "invalid_key"},
		{"NextStrings count -1", func() error {
			_, err := c.NextStrings(ctx, &idforgev1.NextStringsRequest{Key: "order", Count: -1})
			return err
		}, codes.InvalidArgument, "invalid_count"},
		{"NextStrings count idforge.MaxCount+1", func() error {
			_, err := c.NextStrings(ctx, &idforgev1.NextStringsRequest{Key: "order", Count: idforge.MaxCount + 1})
			return err
		}, codes.InvalidArgument, "invalid_count"},
		{"NextStrings unknown format", func() error {
			_, err := c.NextStrings(ctx, &idforgev1.NextStringsRequest{Key: "order", Format: "base99"})
			return err
		}, codes.InvalidArgument, "invalid_argument"},
		{"NextStrings permuting format", func() error {
			_, err := c.NextStrings(ctx, &idforgev1.NextStringsRequest{Key: "order", Format: "feistel:bits=40+base62"})
			return err
		}, codes.InvalidArgument, "invalid_argument"},
		{"NextStrings format of a uuidv7 key", func() error {
			_, err := c.NextStrings(ctx, &idforgev1.NextStringsRequest{Key: "trace", Format: "hex"})
			return err
		}, codes.InvalidArgument, "wrong_strategy"},
		{"Next on a uuidv7 key", func() error { _, err := c.Next(ctx, &idforgev1.NextRequest{Key: "trace"}); return err }, codes.InvalidArgument, "wrong_strategy"},
		{"Stream unknown key", func() error { return stream(&idforgev1.StreamRequest{Key: "nope", Count: 5}) }, codes.NotFound, "unknown_key"},
		{"Stream bad key", func() error { return stream(&idforgev1.StreamRequest{Key: "", Count: 5}) }, codes.InvalidArgument, "invalid_key"},
		{"Stream batch -1", func() error { return stream(&idforgev1.StreamRequest{Key: "order", Batch: -1}) }, codes.InvalidArgument, "invalid_count"},
		{"Stream batch idforge.MaxCount+1", func() error { return stream(&idforgev1.StreamRequest{Key: "order", Batch: idforge.MaxCount + 1}) }, codes.InvalidArgument, "invalid_count"},
		{"Stream count -1", func() error { return stream(&idforgev1.StreamRequest{Key: "order", Count: -1}) }, codes.InvalidArgument, "invalid_count"},
		{"Stream ranges batch idforge.MaxCount+1", func() error {
			return stream(&idforgev1.StreamRequest{Key: "order", Batch: idforge.MaxCount + 1, Form: idforgev1.StreamForm_STREAM_FORM_RANGES})
		}, codes.InvalidArgument, "invalid_count"},
		{"Stream ranges of a uuidv7 key", func() error {
			return stream(&idforgev1.StreamRequest{Key: "trace", Count: 5, Form: idforgev1.StreamForm_STREAM_FORM_RANGES})
		}, codes.InvalidArgument, "wrong_strategy"},
		{"Stream form unknown", func() error { return stream(&idforgev1.StreamRequest{Key: "order", Count: 5, Form: 7}) }, codes.InvalidArgument, "invalid_argument"},
		{"Explain negative", func() error { _, err := c.Explain(ctx, &idforgev1.ExplainRequest{Id: -1}); return err }, codes.InvalidArgument, "invalid_argument"},
		{"Make without time", func() error { _, err := c.Make(ctx, &idforgev1.MakeRequest{}); return err }, codes.InvalidArgument, "invalid_argument"},
		{"Make before the epoch", func() error {
			_, err := c.Make(ctx, &idforgev1.MakeRequest{Time: timestamppb.New(time.Unix(0, 0))})
			return err
		}, codes.InvalidArgument, "invalid_argument"},
		{"Make worker too large", func() error {
			_, err := c.Make(ctx, &idforgev1.MakeRequest{Time: timestamppb.Now(), Worker: 32})
			return err
		}, codes.InvalidArgument, "invalid_argument"},
		{"Make unknown fixed field", func() error {
			_, err := c.Make(ctx, &idforgev1.MakeRequest{Time: timestamppb.Now(), Fixed: map[string]int64{"type": 1}})
			return err
		}, codes.InvalidArgument, "invalid_argument"},
		{"CreateKey taken", func() error {
			_, err := c.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "msg", Strategy: idforgev1.Strategy_STRATEGY_SEGMENT})
			return err
		}, codes.AlreadyExists, "key_exists"},
		{"CreateKey negative step", func() error {
			_, err := c.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "k", Step: proto.Int64(-1)})
			return err
		}, codes.InvalidArgument, "invalid_argument"},
		{"CreateKey start at the largest int64", func() error {
			_, err := c.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "k", Start: proto.Int64(math.MaxInt64)})
			return err
		}, codes.InvalidArgument, "invalid_argument"},
		{"CreateKey first segment past int64", func() error {
			_, err := c.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "k", Start: proto.Int64(idforge.MaxSegmentID - 98), Step: proto.Int64(100)})
			return err
		}, codes.InvalidArgument, "invalid_argument"},
		{"CreateKey negative start", func() error {
			_, err := c.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "k", Start: proto.Int64(-1)})
			return err
		}, codes.InvalidArgument, "invalid_argument"},
		{"CreateKey snowflake with a step", func() error {
			_, err := c.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "k", Strategy: idforgev1.Strategy_STRATEGY_SNOWFLAKE, Step: proto.Int64(5)})
			return err
		}, codes.InvalidArgument, "invalid_argument"},
		{"CreateKey unknown strategy", func() error {
			_, err := c.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "k", Strategy: 99})
			return err
		}, codes.InvalidArgument, "invalid_argument"},
		{"CreateKey bad name", func() error {
			_, err := c.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "a b"})
			return err
		}, codes.InvalidArgument, "invalid_key"},
		{"GetKey unknown", func() error { _, err := c.GetKey(ctx, &idforgev1.GetKeyRequest{Key: "nope"}); return err }, codes.NotFound, "unknown_key"},
		{"GetKey bad name", func() error { _, err := c.GetKey(ctx, &idforgev1.GetKeyRequest{Key: "?"}); return err }, codes.InvalidArgument, "invalid_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, reason := reasonOf(tc.call())
			if code != tc.code || reason != tc.reason {
				t.Fatalf("got %s %q, want %s %q", code, reason, tc.code, tc.reason)
			}
		})
	}
}

// A key is accepted up to the last start whose first segment fits below
// the largest int64, and that segment issues in full: a key that is
// accepted can issue.
func TestCreateKeyAtTheTop(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := testCtx(t)
	start := int64(idforge.MaxSegmentID - 99)
	if _, err := f.client.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "top", Start: proto.Int64(start), Step: proto.Int64(100)}); err != nil {
		t.Fatal(err)
	}
	resp, err := f.client.NextBatch(ctx, &idforgev1.NextBatchRequest{Key: "top", Count: 100})
	if err != nil {
		t.Fatal(err)
	}
	if ids := resp.GetIds(); len(ids) != 100 || ids[0] != start || ids[99] != idforge.MaxSegmentID {
		t.Fatalf("the first segment = %d IDs from %d to %d, want 100 from %d to %d", len(ids), ids[0], ids[len(ids)-1], start, int64(idforge.MaxSegmentID))
	}
	_, err = f.client.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "over", Start: proto.Int64(start + 1), Step: proto.Int64(100)})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("one start further: %v, want INVALID_ARGUMENT", err)
	}
	if _, err := f.client.GetKey(ctx, &idforgev1.GetKeyRequest{Key: "over"}); status.Code(err) != codes.NotFound {
		t.Fatalf("a refused key was stored: %v", err)
	}
}

func TestUnavailable(t *testing.T) {
	t.Run("store down, nothing buffered", func(t *testing.T) {
		f := newFixture(t, fixtureOptions{})
		f.store.Fail(errors.New("connection refused"))
		_, err := f.client.Next(testCtx(t), &idforgev1.NextRequest{Key: "order"})
		if code, reason := reasonOf(err); code != codes.Unavailable || reason != "unavailable" {
			t.Fatalf("got %s %q (%v), want Unavailable unavailable", code, reason, err)
		}
	})
	t.Run("no snowflake generator", func(t *testing.T) {
		f := newFixture(t, fixtureOptions{noSnowflake: true})
		ctx := testCtx(t)
		_, err := f.client.Explain(ctx, &idforgev1.ExplainRequest{Id: 1})
		if code, reason := reasonOf(err); code != codes.Unavailable || reason != "unavailable" {
			t.Fatalf("Explain: %s %q", code, reason)
		}
		_, err = f.client.Make(ctx, &idforgev1.MakeRequest{Time: timestamppb.Now()})
		if code, reason := reasonOf(err); code != codes.Unavailable || reason != "unavailable" {
			t.Fatalf("Make: %s %q", code, reason)
		}
		list, err := f.client.ListKeys(ctx, &idforgev1.ListKeysRequest{})
		if err != nil || list.GetSnowflake() != nil {
			t.Fatalf("ListKeys without a generator = %v, %v", list, err)
		}
	})
	// The serial's template is compiled (its seq source found) while the
	// store is up; then the store fails and the buffered IDs run dry.
	t.Run("store down, serials and strings", func(t *testing.T) {
		f := newFixture(t, fixtureOptions{})
		ctx := testCtx(t)
		if _, err := f.client.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: "bill"}); err != nil {
			t.Fatal(err)
		}
		f.store.Fail(errors.New("connection refused"))
		for name, call := range map[string]func() error{
			"NextSerial": func() error {
				_, err := f.client.NextSerial(ctx, &idforgev1.NextSerialRequest{Name: "bill", Count: 50})
				return err
			},
			"NextStrings": func() error {
				_, err := f.client.NextStrings(ctx, &idforgev1.NextStringsRequest{Key: "order", Count: 50})
				return err
			},
		} {
			var err error
			for range 1000 {
				if err = call(); err != nil {
					break
				}
			}
			if code, reason := reasonOf(err); code != codes.Unavailable || reason != "unavailable" {
				t.Fatalf("%s: got %s %q (%v), want Unavailable unavailable", name, code, reason, err)
			}
		}
	})
	t.Run("store slower than the request timeout", func(t *testing.T) {
		// A fresh node per call: a segment one call left loading would
		// serve the next. Claims never finish, so every call waits for
		// one until its own timeout ends it, however loaded the machine.
		for name, call := range map[string]func(*fixture) error{
			"Next": func(f *fixture) error {
				_, err := f.client.Next(testCtx(t), &idforgev1.NextRequest{Key: "order"})
				return err
			},
			"NextSerial": func(f *fixture) error {
				_, err := f.client.NextSerial(testCtx(t), &idforgev1.NextSerialRequest{Name: "bill"})
				return err
			},
			"NextStrings": func(f *fixture) error {
				_, err := f.client.NextStrings(testCtx(t), &idforgev1.NextStringsRequest{Key: "order"})
				return err
			},
		} {
			f := newFixture(t, fixtureOptions{stallClaims: true, opts: Options{RequestTimeout: 50 * time.Millisecond}})
			if code, reason := reasonOf(call(f)); code != codes.Unavailable || reason != "timeout" {
				t.Fatalf("%s: got %s %q, want Unavailable timeout", name, code, reason)
			}
		}
	})
}

// TestErrorTable checks the table itself, wrapped errors included.
func TestErrorTable(t *testing.T) {
	for _, tc := range []struct {
		err    error
		code   codes.Code
		reason string
	}{
		{idforge.ErrInvalidKey, codes.InvalidArgument, "invalid_key"},
		{idforge.ErrInvalidCount, codes.InvalidArgument, "invalid_count"},
		{idforge.ErrInvalidArgument, codes.InvalidArgument, "invalid_argument"},
		{idforge.ErrWrongStrategy, codes.InvalidArgument, "wrong_strategy"},
		{idforge.ErrUnknownKey, codes.NotFound, "unknown_key"},
		{idforge.ErrKeyExists, codes.AlreadyExists, "key_exists"},
		{idforge.ErrUnavailable, codes.Unavailable, "unavailable"},
		{idforge.ErrClockMovedBackwards, codes.Unavailable, "clock_moved_backwards"},
		{idforge.ErrLeaseLost, codes.Unavailable, "lease_lost"},
		{idforge.ErrStoreFailedOver, codes.Unavailable, "store_failed_over"},
		{idforge.ErrLayoutExpired, codes.Unavailable, "layout_expired"},
		{idforge.ErrClosed, codes.Unavailable, "shutting_down"},
		{context.DeadlineExceeded, codes.Unavailable, "timeout"},
		{context.Canceled, codes.Canceled, "canceled"},
		{idforge.ErrSpaceExhausted, codes.OutOfRange, "space_exhausted"},
		{idforge.ErrRejected, codes.FailedPrecondition, "rejected"},
		{errors.New("something broke"), codes.Internal, "internal"},
		{idforge.ErrInvalidLayout, codes.InvalidArgument, "invalid_layout"},
		{errors.New("boom"), codes.Internal, "internal"},
	} {
		wrapped := errors.Join(errors.New("context"), tc.err)
		st := New(nil, Options{Logger: quiet}).toStatus("test", wrapped)
		if code, reason := reasonOf(st); code != tc.code || reason != tc.reason {
			t.Errorf("status of %v: %s %q", tc.err, code, reason)
		}
	}
}

// recvAll reads a stream of ids to its end (see recvForm).
func recvAll(t testing.TB, s grpc.ServerStreamingClient[idforgev1.StreamResponse]) (msgs [][]int64, err error) {
	t.Helper()
	msgs, _, err = recvForm(t, s, idforgev1.StreamForm_STREAM_FORM_IDS)
	return msgs, err
}

// Stream sends count IDs in messages of batch, strictly increasing for
// a segment key, in either form: a ranges stream carries the same
// messages as ranges, a segment key's as few ranges as it spans
// segments.
func TestStream(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := testCtx(t)
	for _, form := range []idforgev1.StreamForm{idforgev1.StreamForm_STREAM_FORM_IDS, idforgev1.StreamForm_STREAM_FORM_RANGES} {
		for _, tc := range []struct {
			key          string
			batch, count int64
			sizes        []int
		}{
			{"order", 1000, 2500, []int{1000, 1000, 500}},
			{"order", 0, 1000, []int{1000}},
			{"order", 7, 20, []int{7, 7, 6}},
			{"order", idforge.MaxCount, 25_000, []int{10_000, 10_000, 5000}},
			{"msg", 3000, 5000, []int{3000, 2000}},
		} {
			s, err := f.client.Stream(ctx, &idforgev1.StreamRequest{Key: tc.key, Batch: int32(tc.batch), Count: tc.count, Form: form})
			if err != nil {
				t.Fatal(err)
			}
			msgs, ranges, err := recvForm(t, s, form)
			if err != nil {
				t.Fatalf("%v %s batch %d count %d: %v", form, tc.key, tc.batch, tc.count, err)
			}
			var sizes []int
			var all []int64
			for _, m := range msgs {
				sizes = append(sizes, len(m))
				all = append(all, m...)
			}
			if !slices.Equal(sizes, tc.sizes) {
				t.Errorf("%v %s batch %d count %d: message sizes %v, want %v", form, tc.key, tc.batch, tc.count, sizes, tc.sizes)
			}
			for i := 1; i < len(all); i++ {
				if all[i] <= all[i-1] {
					t.Fatalf("%v %s: ID %d at %d follows %d: not strictly increasing (so not unique)", form, tc.key, all[i], i, all[i-1])
				}
			}
			// The segments are of 100 IDs (MaxStep): a message of 1000
			// spans about ten, each one range.
			if tc.key == "order" && ranges > 2*len(msgs)+int(tc.count)/100 {
				t.Errorf("%v %s: %d ranges for %d IDs: ranges are not folded", form, tc.key, ranges, tc.count)
			}
		}
	}
}

// segmentIssued returns how many IDs the node issued for key.
func segmentIssued(t *testing.T, iss *issuer.Issuer, key string) int64 {
	t.Helper()
	for _, k := range iss.Active() {
		if k.Name == key && k.Segment != nil {
			return k.Segment.Issued
		}
	}
	return 0
}

// An endless stream stops issuing once the client cancels it.
func TestStreamCancel(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx, cancel := context.WithCancel(testCtx(t))
	s, err := f.client.Stream(ctx, &idforgev1.StreamRequest{Key: "order", Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for range 50 {
		m, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if m.GetIds()[0] <= last {
			t.Fatalf("IDs go back: %d after %d", m.GetIds()[0], last)
		}
		last = m.GetIds()[len(m.GetIds())-1]
	}
	cancel()
	if _, err := recvAll(t, s); status.Code(err) != codes.Canceled {
		t.Fatalf("after cancel: %v, want Canceled", err)
	}
	// The server notices within a message; after that nothing is issued.
	deadline := time.Now().Add(5 * time.Second)
	for {
		a := segmentIssued(t, f.iss, "order")
		time.Sleep(50 * time.Millisecond)
		if b := segmentIssued(t, f.iss, "order"); a == b {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server keeps issuing after the client cancelled")
		}
	}
}

// A failure mid-stream ends the stream with its status; what was sent
// before stays valid.
func TestStreamFailsMidway(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := testCtx(t)
	s, err := f.client.Stream(ctx, &idforgev1.StreamRequest{Key: "order", Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	f.store.Fail(errors.New("disk on fire"))
	// The messages already in flight (a flow-control window) arrive, the
	// node's buffers (at most a few segments of 100) run dry, then the
	// stream ends.
	for i := 0; ; i++ {
		_, err := s.Recv()
		if err == nil {
			if i > 100_000 {
				t.Fatal("the stream goes on long after the store failed")
			}
			continue
		}
		if code, reason := reasonOf(err); code != codes.Unavailable || reason != "unavailable" {
			t.Fatalf("stream ended with %s %q (%v), want Unavailable unavailable", code, reason, err)
		}
		break
	}
}

func TestDrain(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := testCtx(t)
	health := healthpb.NewHealthClient(f.conn)
	watch, err := health.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := watch.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("first Watch message = %v, %v", m, err)
	}
	s, err := f.client.Stream(ctx, &idforgev1.StreamRequest{Key: "order", Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}

	f.srv.Drain()
	f.srv.Drain() // idempotent
	// Messages already in flight (up to a flow-control window of them)
	// still arrive; then the stream ends.
	var streamErr error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if _, streamErr = s.Recv(); streamErr != nil {
			break
		}
	}
	if code, reason := reasonOf(streamErr); code != codes.Unavailable || reason != "shutting_down" {
		t.Fatalf("stream after Drain: %s %q", code, reason)
	}
	if m, err := watch.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("Watch after Drain = %v, %v; want NOT_SERVING", m, err)
	}
	if _, err := watch.Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("Watch after Drain ends with %v, want Unavailable", err)
	}
	if r, err := health.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("Check after Drain = %v, %v", r, err)
	}
	late, err := f.client.Stream(ctx, &idforgev1.StreamRequest{Key: "order"})
	if err != nil {
		t.Fatal(err)
	}
	if msgs, err := recvAll(t, late); len(msgs) != 0 || status.Code(err) != codes.Unavailable {
		t.Fatalf("new stream after Drain: %d messages, %v", len(msgs), err)
	}
	// Unary calls still work, and a graceful stop finishes at once.
	if _, err := f.client.Next(ctx, &idforgev1.NextRequest{Key: "order"}); err != nil {
		t.Fatalf("Next after Drain: %v", err)
	}
	done := make(chan struct{})
	go func() { f.grpc.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("GracefulStop is stuck after Drain")
	}
}

func TestHealth(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := testCtx(t)
	health := healthpb.NewHealthClient(f.conn)
	for _, svc := range []string{"", "idforge.v1.IDForge"} {
		r, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("Check(%q) = %v, %v", svc, r, err)
		}
	}
	if _, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: "nope"}); status.Code(err) != codes.NotFound {
		t.Fatalf("Check(unknown service): %v", err)
	}
	list, err := health.List(ctx, &healthpb.HealthListRequest{})
	if err != nil || len(list.GetStatuses()) != 2 {
		t.Fatalf("List = %v, %v", list, err)
	}

	// The store fails while a segment key still has IDs buffered:
	// degraded, still serving. Once they are gone: not serving.
	if _, err := f.client.Next(ctx, &idforgev1.NextRequest{Key: "order"}); err != nil {
		t.Fatal(err)
	}
	watch, err := health.Watch(ctx, &healthpb.HealthCheckRequest{Service: "idforge.v1.IDForge"})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := watch.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Watch = %v, %v", m, err)
	}
	f.store.Fail(errors.New("down"))
	if r, err := health.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check while degraded = %v, %v", r, err)
	}
	for {
		if _, err := f.client.NextBatch(ctx, &idforgev1.NextBatchRequest{Key: "order", Count: 50}); err != nil {
			break
		}
	}
	if m, err := watch.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("Watch after the buffers ran dry = %v, %v", m, err)
	}
	f.store.Fail(nil)
	if m, err := watch.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Watch after the store came back = %v, %v", m, err)
	}
	unknown, err := health.Watch(ctx, &healthpb.HealthCheckRequest{Service: "nope"})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := unknown.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_SERVICE_UNKNOWN {
		t.Fatalf("Watch(unknown) = %v, %v", m, err)
	}
}

func TestReflection(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := testCtx(t)
	rc, err := reflectionpb.NewServerReflectionClient(f.conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := rc.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	for _, want := range []string{"idforge.v1.IDForge", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"} {
		if !slices.Contains(names, want) {
			t.Errorf("reflection lists %v, missing %s", names, want)
		}
	}
	// The descriptor of the service is there too, for grpcurl.
	if err := rc.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "idforge.v1.IDForge"}}); err != nil {
		t.Fatal(err)
	}
	if resp, err := rc.Recv(); err != nil || len(resp.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
		t.Fatalf("file containing idforge.v1.IDForge: %v, %v", resp, err)
	}
}

// Interceptors given to grpc.NewServer run for the IDForge calls: the
// hook authentication will use.
func TestInterceptors(t *testing.T) {
	st := memstore.New()
	st.CreateKey(context.Background(), idforge.Key{Name: "order", Strategy: idforge.StrategySegment, Step: 10, MaxID: 1})
	iss := issuer.New(st, nil, issuer.Settings{Logger: quiet})
	defer iss.Close()
	deny := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if info.FullMethod == idforgev1.IDForge_CreateKey_FullMethodName {
			return nil, status.Error(codes.PermissionDenied, "read-only token")
		}
		return next(ctx, req)
	}
	g := grpc.NewServer(grpc.ChainUnaryInterceptor(deny))
	New(iss, Options{Logger: quiet}).Register(g)
	ln := bufconn.Listen(1 << 16)
	go g.Serve(ln)
	defer g.Stop()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := idforgev1.NewIDForgeClient(conn)
	ctx := testCtx(t)
	if _, err := c.Next(ctx, &idforgev1.NextRequest{Key: "order"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "x"}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("CreateKey through a denying interceptor: %v", err)
	}
}

// Keys of string strategies are listed as such, and can be created over
// gRPC; their IDs come from NextStrings.
func TestStringStrategiesInKeys(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.addStringKey(t)
	ctx := testCtx(t)
	k, err := f.client.GetKey(ctx, &idforgev1.GetKeyRequest{Key: "trace"})
	if err != nil || k.GetStrategy() != idforgev1.Strategy_STRATEGY_UUIDV7 {
		t.Fatalf("GetKey(trace) = %v, %v; want STRATEGY_UUIDV7", k.GetStrategy(), err)
	}
	if _, err := f.client.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "evt", Strategy: idforgev1.Strategy_STRATEGY_ULID}); err != nil {
		t.Fatal(err)
	}
	resp, err := f.client.NextStrings(ctx, &idforgev1.NextStringsRequest{Key: "evt", Count: 2})
	if err != nil || len(resp.GetIds()) != 2 || len(resp.GetIds()[0]) != 26 || resp.GetIds()[0] >= resp.GetIds()[1] {
		t.Fatalf("NextStrings(evt) = %v, %v; want 2 increasing ULIDs", resp.GetIds(), err)
	}
	if _, err := f.client.CreateKey(ctx, &idforgev1.CreateKeyRequest{Key: "src", Strategy: idforgev1.Strategy_STRATEGY_SOURCE}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("CreateKey of a source: %v, want InvalidArgument (sources come from the configuration)", err)
	}
}
