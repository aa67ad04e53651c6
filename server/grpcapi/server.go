package grpcapi

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/idforge/idforge"
	idforgev1 "github.com/idforge/idforge/api/idforge/v1"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/quota"
	"github.com/idforge/idforge/snowflake"
)

// Defaults, the same as the HTTP API's.
const (
	// DefaultStreamBatch is the number of IDs per Stream message when the
	// request leaves batch at 0.
	DefaultStreamBatch = 1000
	// DefaultRequestTimeout bounds how long one call waits for the store.
	DefaultRequestTimeout = idforge.DefaultRequestTimeout
)

// Options configure a Server. The zero value of every field means "use
// the default".
type Options struct {
	// Logger receives a warning for every call that fails with
	// UNAVAILABLE or INTERNAL. Default slog.Default().
	Logger *slog.Logger
	// RequestTimeout bounds how long a call (for Stream: each message,
	// which may get half of it to all of it, see messageBudget) may wait
	// for the store; a shorter deadline from the client wins.
	// Default DefaultRequestTimeout (5 s).
	RequestTimeout time.Duration
	// MaxCount is the largest count of a NextBatch, NextStrings or
	// NextSerial call and the largest batch of a Stream. Default
	// idforge.MaxCount. NextSerial is bounded by idforge.MaxCount as well.
	MaxCount int
	// Quotas, when set, are administered by CreateQuota, GetQuota,
	// ListQuotas and RetireQuota; without it those answer UNIMPLEMENTED.
	Quotas *quota.Manager
}

// Server implements idforgev1.IDForgeServer over an issuer.Issuer. Create
// it with New and add it to a grpc.Server with Register. It is safe for
// concurrent use.
type Server struct {
	idforgev1.UnimplementedIDForgeServer

	iss      *issuer.Issuer
	log      *slog.Logger
	timeout  time.Duration
	maxCount int
	qm       *quota.Manager

	// watchEvery is how often a health Watch re-checks readiness.
	watchEvery time.Duration

	drainOnce sync.Once
	draining  chan struct{} // closed by Drain
}

var _ idforgev1.IDForgeServer = (*Server)(nil)

// New returns a Server issuing from iss. It does not take ownership of
// iss: the caller closes it after the grpc.Server has stopped.
func New(iss *issuer.Issuer, opts Options) *Server {
	s := &Server{
		iss: iss, log: opts.Logger, timeout: opts.RequestTimeout, maxCount: opts.MaxCount, qm: opts.Quotas,
		watchEvery: time.Second, draining: make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.timeout <= 0 {
		s.timeout = DefaultRequestTimeout
	}
	if s.maxCount <= 0 {
		s.maxCount = idforge.MaxCount
	}
	return s
}

// Register adds three services to g: IDForge, the standard health service
// (grpc.health.v1.Health, SERVING while the node can issue, see Drain) and
// server reflection (v1 and v1alpha), so that grpcurl and grpc-health-probe
// work without .proto files. Call it once per grpc.Server, before Serve;
// g must not have another health or reflection service.
func (s *Server) Register(g *grpc.Server) {
	idforgev1.RegisterIDForgeServer(g, s)
	healthpb.RegisterHealthServer(g, &healthServer{s: s})
	reflection.Register(g)
}

// Drain prepares a graceful stop: the health service answers NOT_SERVING
// from now on (load balancers stop sending calls), running Streams and
// health Watches end with UNAVAILABLE (reason shutting_down) at their next
// message, and new Streams are refused. Unary calls keep being served, so
// that calls already routed here succeed. Call it before
// grpc.Server.GracefulStop, which would otherwise wait for streams that
// never end. A Stream whose client stopped reading is blocked in flow
// control and notices only when the client reads on: bound GracefulStop
// with a grace period and call grpc.Server.Stop after it. Drain is
// idempotent.
func (s *Server) Drain() {
	s.drainOnce.Do(func() { close(s.draining) })
}

func (s *Server) isDraining() bool {
	select {
	case <-s.draining:
		return true
	default:
		return false
	}
}

var errDraining = fmt.Errorf("%w: the server is shutting down; use another node", idforge.ErrClosed)

// withTimeout bounds a call that may wait on the store.
func (s *Server) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// checkCount reports whether n IDs may be asked for in one call.
func (s *Server) checkCount(what string, n int64) error {
	if n < 1 || n > int64(s.maxCount) {
		return fmt.Errorf("%w: %s %d is out of range (want 1..%d)", idforge.ErrInvalidCount, what, n, s.maxCount)
	}
	return nil
}

// call runs the work of an RPC, method, bounded by the server's timeout,
// and answers a failure with its status (and a nil response), a success
// with the result as conv shows it.
func call[T, R any](s *Server, ctx context.Context, method string, work func(context.Context) (T, error), conv func(T) R) (R, error) {
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	v, err := work(ctx)
	if err != nil {
		var none R
		return none, s.toStatus(method, err)
	}
	return conv(v), nil
}

// issue runs an issuing RPC, method: it checks the key or serial name and
// the count n, then runs work as call does.
func issue[R any](s *Server, ctx context.Context, method, name string, n int64, work func(ctx context.Context, n int) (R, error)) (R, error) {
	err := idforge.ValidateKeyName(name)
	if err == nil {
		err = s.checkCount("count", n)
	}
	if err != nil {
		var none R
		return none, s.toStatus(method, err)
	}
	return call(s, ctx, method, func(ctx context.Context) (R, error) { return work(ctx, int(n)) }, func(r R) R { return r })
}

// Next returns one ID for a key of any strategy.
func (s *Server) Next(ctx context.Context, req *idforgev1.NextRequest) (*idforgev1.NextResponse, error) {
	return issue(s, ctx, "Next", req.GetKey(), 1, func(ctx context.Context, _ int) (*idforgev1.NextResponse, error) {
		id, err := s.iss.Next(ctx, req.GetKey())
		return &idforgev1.NextResponse{Id: id}, err
	})
}

// NextBatch returns count IDs, 1 to Options.MaxCount; fewer when a
// segment key runs out of space within the batch (what its format and
// plugins take, or int64), and OUT_OF_RANGE space_exhausted, using
// up nothing, once none is left.
func (s *Server) NextBatch(ctx context.Context, req *idforgev1.NextBatchRequest) (*idforgev1.NextBatchResponse, error) {
	return issue(s, ctx, "NextBatch", req.GetKey(), int64(req.GetCount()), func(ctx context.Context, n int) (*idforgev1.NextBatchResponse, error) {
		ids, err := s.iss.NextN(ctx, req.GetKey(), n)
		return &idforgev1.NextBatchResponse{Ids: ids}, err
	})
}

// countOrOne is the count of a call whose count field may be left at 0
// for one, as an HTTP request may leave out ?count=.
func countOrOne(count int32) int64 {
	if count == 0 {
		return 1
	}
	return int64(count)
}

// NextSerial returns count serials of the named definition (0 means 1, at
// most Options.MaxCount and idforge.MaxCount; fewer when the
// template's width= runs out within the batch), rendered with the
// request's template parameters.
func (s *Server) NextSerial(ctx context.Context, req *idforgev1.NextSerialRequest) (*idforgev1.NextSerialResponse, error) {
	return issue(s, ctx, "NextSerial", req.GetName(), countOrOne(req.GetCount()), func(ctx context.Context, n int) (*idforgev1.NextSerialResponse, error) {
		values, err := s.iss.NextSerial(ctx, req.GetName(), n, req.GetParams())
		return &idforgev1.NextSerialResponse{Values: values}, err
	})
}

// NextStrings returns count IDs of a key as text (0 means 1, at most
// Options.MaxCount): UUIDs or ULIDs for uuidv7, ulid and uuidv4 keys, the
// request's format or else the key's configured one for keys of integer
// IDs.
func (s *Server) NextStrings(ctx context.Context, req *idforgev1.NextStringsRequest) (*idforgev1.NextStringsResponse, error) {
	return issue(s, ctx, "NextStrings", req.GetKey(), countOrOne(req.GetCount()), func(ctx context.Context, n int) (*idforgev1.NextStringsResponse, error) {
		ids, err := s.iss.NextStrings(ctx, req.GetKey(), n, req.GetFormat())
		return &idforgev1.NextStringsResponse{Ids: ids}, err
	})
}

// Stream sends IDs in messages of req.Batch IDs until req.Count IDs were
// sent, or until the client cancels when req.Count is 0. Each message is
// issued only once the previous one was handed to the transport, so
// HTTP/2 flow control keeps the server at most a window of messages
// ahead of a slow reader. A message holds fewer IDs than the batch when
// the key runs out of space within it. A failure ends the stream with the
// failure's status; the call that failed used up no ID when the key is
// out of space, and IDs issued but never read by the client (or taken
// from a buffer before the store failed) are lost (a gap).
//
// Form IDS (the default) issues each message with issuer.NextInto into
// one buffer reused for every message. Form RANGES issues it with
// issuer.NextRanges, the answer of GET /v1/ids/{key}?form=ranges: a
// segment key's message is one range (a few when it spans segments),
// whose cost does not grow with the batch; any other key of integer IDs
// folds its IDs into runs. The batch is bounded by Options.MaxCount
// (idforge.MaxCount) in both forms: at 10,000 IDs a ranges message
// already costs the transport next to nothing, and the bound keeps what
// one message may issue, and a client expands, the same on every way in.
func (s *Server) Stream(req *idforgev1.StreamRequest, stream grpc.ServerStreamingServer[idforgev1.StreamResponse]) error {
	key, batch, count := req.GetKey(), int64(req.GetBatch()), req.GetCount()
	if err := idforge.ValidateKeyName(key); err != nil {
		return s.toStatus("Stream", err)
	}
	if batch == 0 {
		batch = min(DefaultStreamBatch, int64(s.maxCount))
	}
	if err := s.checkCount("batch", batch); err != nil {
		return s.toStatus("Stream", err)
	}
	if count < 0 {
		return s.toStatus("Stream", fmt.Errorf("%w: count %d is negative (0 streams until the client cancels)", idforge.ErrInvalidCount, count))
	}
	msg := &idforgev1.StreamResponse{}
	var issue func(ctx context.Context, n int64) (int64, error)
	switch form := req.GetForm(); form {
	case idforgev1.StreamForm_STREAM_FORM_IDS:
		issue = s.idsInto(key, msg, batch)
	case idforgev1.StreamForm_STREAM_FORM_RANGES:
		issue = s.rangesInto(key, msg)
	default:
		return s.toStatus("Stream", fmt.Errorf("%w: form %d (want STREAM_FORM_IDS or STREAM_FORM_RANGES)", idforge.ErrInvalidArgument, form))
	}
	ctx := stream.Context()
	budget := messageBudget{s: s, parent: ctx}
	defer budget.release()
	for sent := int64(0); count == 0 || sent < count; {
		if s.isDraining() {
			return s.toStatus("Stream", errDraining)
		}
		n := batch
		if count > 0 {
			n = min(n, count-sent)
		}
		got, err := issue(budget.context(), n)
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err() // the client went away; say so, not "timeout"
			}
			return s.toStatus("Stream", err)
		}
		if err := stream.Send(msg); err != nil {
			return err
		}
		// Fewer than n when the key ran out within the batch: the next
		// call says so, having used up nothing.
		sent += got
	}
	return nil
}

// messageBudget hands out the context that bounds a Stream message's
// wait for the store: one with the server's timeout, reused while at
// least half of it is left, so that a stream of small messages does not
// set up and stop a timer for each (at a ranges message's cost, that
// was a third of the CPU time per ID of BenchmarkStreamSQLite/Ranges,
// server and client together). A message may wait half the timeout to
// all of it.
type messageBudget struct {
	s      *Server
	parent context.Context
	ctx    context.Context
	cancel context.CancelFunc
	renew  time.Time // when less than half the timeout is left
}

func (b *messageBudget) context() context.Context {
	if now := time.Now(); b.ctx == nil || !now.Before(b.renew) {
		b.release()
		b.ctx, b.cancel = b.s.withTimeout(b.parent)
		b.renew = now.Add(b.s.timeout / 2)
	}
	return b.ctx
}

func (b *messageBudget) release() {
	if b.cancel != nil {
		b.cancel()
	}
}

// The message buffers of a Stream: filled again for every message. Send
// encodes the message before it returns (this server registers no stats
// handler that would keep it), so filling them again is safe and costs
// no allocation.

// idsInto returns how a form IDS stream issues n IDs of key into msg.
func (s *Server) idsInto(key string, msg *idforgev1.StreamResponse, batch int64) func(ctx context.Context, n int64) (int64, error) {
	buf := make([]int64, batch)
	return func(ctx context.Context, n int64) (int64, error) {
		got, err := s.iss.NextInto(ctx, key, buf[:n])
		msg.Ids = buf[:got]
		return int64(got), err
	}
}

// rangesInto returns how a form RANGES stream issues n IDs of key into
// msg, as ranges.
func (s *Server) rangesInto(key string, msg *idforgev1.StreamResponse) func(ctx context.Context, n int64) (int64, error) {
	var segs []idforge.Segment
	var ranges []*idforgev1.Range // ranges[k] kept for reuse past len(msg.Ranges)
	return func(ctx context.Context, n int64) (int64, error) {
		var err error
		segs, err = s.iss.NextRanges(ctx, key, int(n), segs[:0])
		if err != nil {
			return 0, err
		}
		got := int64(0)
		for k, sg := range segs {
			if k == len(ranges) {
				ranges = append(ranges, &idforgev1.Range{})
			}
			ranges[k].Start, ranges[k].End = sg.Start, sg.End
			got += sg.Len()
		}
		msg.Ranges = ranges[:len(segs)]
		return got, nil
	}
}

// noSnowflake is the error of snowflake operations on a node without a
// generator.
var noSnowflake = fmt.Errorf("%w: this node runs no snowflake generator", idforge.ErrUnavailable)

// layout returns the node's snowflake layout.
func (s *Server) layout() (snowflake.Layout, error) {
	g := s.iss.Snowflake()
	if g == nil {
		return snowflake.Layout{}, noSnowflake
	}
	return g.Layout(), nil
}

// Explain decodes a snowflake ID with the node's layout, or a number of
// the date-packed source req names.
func (s *Server) Explain(ctx context.Context, req *idforgev1.ExplainRequest) (*idforgev1.ExplainResponse, error) {
	if req.GetSource() != "" {
		u, err := s.iss.ExplainPacked(ctx, req.GetSource(), req.GetId())
		if err != nil {
			return nil, s.toStatus("Explain", err)
		}
		return &idforgev1.ExplainResponse{Id: u.ID, Time: timestamppb.New(u.Time), UnixMs: u.Time.UnixMilli(), DatePacked: &idforgev1.DatePacked{
			Source: u.Source, Period: u.Period, Zone: u.Zone, Count: u.Count, Bits: int32(u.Bits)}}, nil
	}
	l, err := s.layout()
	if err != nil {
		return nil, s.toStatus("Explain", err)
	}
	p, err := l.Explain(req.GetId())
	if err != nil {
		return nil, s.toStatus("Explain", err)
	}
	return &idforgev1.ExplainResponse{
		Id: req.GetId(), Time: timestamppb.New(p.Time), UnixMs: p.Time.UnixMilli(), Ticks: p.Ticks,
		Datacenter: p.Datacenter, Worker: p.Worker, Sequence: p.Sequence, Fixed: p.Fixed,
		Layout: l.String(), Expires: timestamppb.New(l.Expires()),
	}, nil
}

// Make forges the ID of the given fields with the node's layout.
func (s *Server) Make(ctx context.Context, req *idforgev1.MakeRequest) (*idforgev1.MakeResponse, error) {
	l, err := s.layout()
	if err != nil {
		return nil, s.toStatus("Make", err)
	}
	if req.GetTime() == nil {
		return nil, s.toStatus("Make", fmt.Errorf("%w: time is required", idforge.ErrInvalidArgument))
	}
	if err := req.GetTime().CheckValid(); err != nil {
		return nil, s.toStatus("Make", fmt.Errorf("%w: time: %v", idforge.ErrInvalidArgument, err))
	}
	id, err := l.Make(snowflake.Parts{
		Time: req.GetTime().AsTime(), Datacenter: req.GetDatacenter(), Worker: req.GetWorker(),
		Sequence: req.GetSequence(), Fixed: req.GetFixed(),
	})
	if err != nil {
		return nil, s.toStatus("Make", err)
	}
	return &idforgev1.MakeResponse{Id: id}, nil
}

// CreateKey adds a key. As on every path (issuer.WithDefaults), the
// strategy defaults to segment and a segment key's step, absent or 0, to
// issuer.DefaultStep, its start to issuer.DefaultStart; a snowflake key
// takes neither.
func (s *Server) CreateKey(ctx context.Context, req *idforgev1.CreateKeyRequest) (*idforgev1.Key, error) {
	return call(s, ctx, "CreateKey", func(ctx context.Context) (issuer.KeyState, error) {
		k, err := keyFromRequest(req)
		if err == nil {
			err = s.iss.CreateKey(ctx, k)
		}
		return issuer.KeyState{Key: k}, err
	}, toKey)
}

// GetKey returns one key with this node's state for it.
func (s *Server) GetKey(ctx context.Context, req *idforgev1.GetKeyRequest) (*idforgev1.Key, error) {
	return call(s, ctx, "GetKey", func(ctx context.Context) (issuer.KeyState, error) {
		return s.iss.Key(ctx, req.GetKey())
	}, toKey)
}

// ListKeys returns every key, sorted by name, and the node's snowflake
// generator.
func (s *Server) ListKeys(ctx context.Context, req *idforgev1.ListKeysRequest) (*idforgev1.ListKeysResponse, error) {
	return call(s, ctx, "ListKeys", s.iss.Keys, func(states []issuer.KeyState) *idforgev1.ListKeysResponse {
		resp := &idforgev1.ListKeysResponse{Keys: make([]*idforgev1.Key, len(states))}
		for i, k := range states {
			resp.Keys[i] = toKey(k)
		}
		if g := s.iss.Snowflake(); g != nil {
			l := g.Layout()
			resp.Snowflake = &idforgev1.SnowflakeInfo{
				Layout: l.String(), Worker: g.Worker(), Datacenter: g.Datacenter(), Expires: timestamppb.New(l.Expires()),
			}
		}
		return resp
	})
}
