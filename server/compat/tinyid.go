package compat

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/idforge/idforge"
)

// tinyidResponse is Tinyid's Response<T>: data, then code 200 and an
// empty message on success.
type tinyidResponse[T any] struct {
	Data    T      `json:"data"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// tinyidSegment is Tinyid's SegmentId as its server serializes it. The
// client hands out the IDs in (CurrentID, MaxID] that leave Remainder
// modulo Delta, and fetches the next segment once it reaches LoadingID.
type tinyidSegment struct {
	MaxID     int64 `json:"maxId"`
	LoadingID int64 `json:"loadingId"`
	CurrentID int64 `json:"currentId"`
	Delta     int   `json:"delta"`
	Remainder int   `json:"remainder"`
}

// tinyidLoadingPercent is how far into a segment Tinyid's client starts
// loading the next one (Tinyid's Constants.LOADING_PERCENT).
const tinyidLoadingPercent = 20

// tinyidKey returns the bizType of a request, exactly once: several
// different values are refused, so that the key a token was authorized
// for (see auth.TinyidKey) is the key issued for.
func tinyidKey(q url.Values) (string, error) {
	vals := q["bizType"]
	if len(vals) == 0 || vals[0] == "" {
		return "", fmt.Errorf("%w: bizType is required", idforge.ErrInvalidKey)
	}
	for _, v := range vals[1:] {
		if v != vals[0] {
			return "", fmt.Errorf("%w: bizType given with different values %q and %q", idforge.ErrInvalidArgument, vals[0], v)
		}
	}
	return vals[0], idforge.ValidateKeyName(vals[0])
}

// tinyidBatch reads batchSize: absent means 1, above idforge.MaxCount is
// cut to idforge.MaxCount (Tinyid's checkBatchSize), below 1 or not a number is an error.
func tinyidBatch(q url.Values) (int, error) {
	s := q.Get("batchSize")
	if s == "" {
		return 1, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-") {
			return idforge.MaxCount, nil
		}
		return 0, fmt.Errorf("%w: batchSize %q is not a whole number", idforge.ErrInvalidCount, s)
	}
	if n < 1 {
		return 0, fmt.Errorf("%w: batchSize %d (want at least 1)", idforge.ErrInvalidCount, n)
	}
	return int(min(n, idforge.MaxCount)), nil
}

// tinyidIDs issues the IDs a nextId request asks for.
func (h *handler) tinyidIDs(w http.ResponseWriter, r *http.Request) ([]int64, error) {
	q, err := params(w, r)
	if err != nil {
		return nil, err
	}
	key, err := tinyidKey(q)
	if err != nil {
		return nil, err
	}
	n, err := tinyidBatch(q)
	if err != nil {
		return nil, err
	}
	ctx := h.withTimeout(r)
	defer ctx.Release()
	if n == 1 {
		id, err := h.iss.Next(ctx, key)
		if err != nil {
			return nil, err
		}
		return []int64{id}, nil
	}
	return h.iss.NextN(ctx, key, n)
}

// tinyidNextID serves /tinyid/id/nextId: {"data":[ids],"code":200,"message":""}.
func (h *handler) tinyidNextID(w http.ResponseWriter, r *http.Request) {
	ids, err := h.tinyidIDs(w, r)
	if err != nil {
		h.writeTinyidError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, tinyidResponse[[]int64]{Data: ids, Code: http.StatusOK})
}

// tinyidNextIDSimple serves /tinyid/id/nextIdSimple: the IDs as plain
// text, separated by commas.
func (h *handler) tinyidNextIDSimple(w http.ResponseWriter, r *http.Request) {
	ids, err := h.tinyidIDs(w, r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	b := make([]byte, 0, len(ids)*8)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	writeText(w, string(b))
}

// tinyidClaim claims a segment for one Tinyid client: a range of the
// key's stored step that nobody else ever receives any value of.
func (h *handler) tinyidClaim(w http.ResponseWriter, r *http.Request) (tinyidSegment, error) {
	q, err := params(w, r)
	if err != nil {
		return tinyidSegment{}, err
	}
	key, err := tinyidKey(q)
	if err != nil {
		return tinyidSegment{}, err
	}
	ctx := h.withTimeout(r)
	defer ctx.Release()
	k, err := h.iss.Key(ctx, key)
	if err != nil {
		return tinyidSegment{}, err
	}
	if k.Strategy != idforge.StrategySegment {
		return tinyidSegment{}, fmt.Errorf("%w: key %q is a %s key; Tinyid segments come from segment keys", idforge.ErrWrongStrategy, key, k.Strategy)
	}
	seg, err := h.iss.ClaimRange(ctx, key, k.Step)
	if err != nil {
		return tinyidSegment{}, err
	}
	if seg.Len() < 1 {
		return tinyidSegment{}, fmt.Errorf("the store returned an empty claim [%d, %d) for key %q", seg.Start, seg.End, key)
	}
	// Tinyid's segment is (currentId, maxId]; idforge's claim is [Start, End).
	cur := seg.Start - 1
	return tinyidSegment{
		CurrentID: cur,
		MaxID:     seg.End - 1,
		LoadingID: cur + seg.Len()*tinyidLoadingPercent/100,
		Delta:     1,
		Remainder: 0,
	}, nil
}

// tinyidNextSegment serves /tinyid/id/nextSegmentId.
func (h *handler) tinyidNextSegment(w http.ResponseWriter, r *http.Request) {
	seg, err := h.tinyidClaim(w, r)
	if err != nil {
		h.writeTinyidError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, tinyidResponse[tinyidSegment]{Data: seg, Code: http.StatusOK})
}

// tinyidNextSegmentSimple serves /tinyid/id/nextSegmentIdSimple:
// "currentId,loadingId,maxId,delta,remainder", which is what Tinyid's
// Java client (HttpSegmentIdServiceImpl) asks for and parses.
func (h *handler) tinyidNextSegmentSimple(w http.ResponseWriter, r *http.Request) {
	seg, err := h.tinyidClaim(w, r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeText(w, fmt.Sprintf("%d,%d,%d,%d,%d", seg.CurrentID, seg.LoadingID, seg.MaxID, seg.Delta, seg.Remainder))
}

// Tinyid's ErrorCode.TOKEN_ERR.
const (
	tinyidTokenErrCode    = 5
	tinyidTokenErrMessage = "token is error"
)

// TinyidRefusal is an auth.Refuser for the Tinyid endpoints: a request
// with a missing or wrong token (or one not allowed this bizType) is
// answered as Tinyid does, with HTTP 200 and
// {"data":null,"code":5,"message":"token is error"}, or an empty body
// from the *Simple endpoints, so Tinyid's clients see what they were
// written for. Other refusals (a rate limit) and other paths are left to
// the middleware.
func TinyidRefusal(w http.ResponseWriter, r *http.Request, status int, code, message string) bool {
	if !strings.HasPrefix(r.URL.Path, "/tinyid/") || (status != http.StatusUnauthorized && status != http.StatusForbidden) {
		return false
	}
	if strings.HasSuffix(r.URL.Path, "Simple") {
		writeText(w, "")
		return true
	}
	writeJSON(w, http.StatusOK, tinyidResponse[any]{Code: tinyidTokenErrCode, Message: tinyidTokenErrMessage})
	return true
}
