package httpapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/issuer"
	"github.com/idforge/idforge/store/sqlite"
)

// BenchmarkBulkHTTP issues 10,000 IDs per request of a segment key on
// SQLite (default settings, the key's default step) over loopback HTTP,
// 32 requests in flight, as one string per ID (form=ids, the default)
// and as ranges (form=ranges); floor is a trivial net/http handler
// answering a fixed 50-byte JSON body on the same client and loopback,
// for the ratio. ids/s counts IDs asked for (the floor: as if each answer
// held 10,000).
//
//	go test -run '^$' -bench BulkHTTP -benchtime 3s -count 5 ./server/httpapi/
func BenchmarkBulkHTTP(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "ids.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateKey(ctx, issuer.WithDefaults(idforge.Key{Name: "bulk"})); err != nil {
		b.Fatal(err)
	}
	iss := issuer.New(st, nil, issuer.Settings{Logger: quiet})
	defer iss.Close()
	api := httptest.NewServer(New(iss, Options{Logger: quiet}))
	defer api.Close()
	floor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"key":"bulk","ranges":[{"start":"1","count":10000}]}`)
	}))
	defer floor.Close()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	hc := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()

	for _, c := range []struct{ name, url string }{
		{"floor", floor.URL + "/"},
		{"ids", api.URL + "/v1/ids/bulk?count=10000"},
		{"ranges", api.URL + "/v1/ids/bulk?count=10000&form=ranges"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(16)
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := hc.Get(c.url)
					if err != nil {
						panic(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						panic(resp.Status)
					}
				}
			})
			b.ReportMetric(float64(b.N)*10_000/time.Since(start).Seconds(), "ids/s")
		})
	}
}
