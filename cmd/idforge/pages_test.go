package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/idforge/idforge/internal/httpwire"
)

// TestRemoteReadersFollowKeyPages: keys repair --from-nodes and doctor
// read every page of a node's GET /v1/keys, not only the first.
func TestRemoteReadersFollowKeyPages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Query().Get("after") {
		case "":
			fmt.Fprint(w, `{"keys":[{"key":"a","strategy":"segment","segment":{"claimed_up_to":"10"}}],"next":"a"}`)
		case "a":
			fmt.Fprint(w, `{"keys":[{"key":"b","strategy":"segment","segment":{"claimed_up_to":"20"}}]}`)
		default:
			http.Error(w, "no such page", http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	floors := map[string]int64{}
	if err := readClaimed(context.Background(), srv.URL, "", floors); err != nil {
		t.Fatal(err)
	}
	if floors["a"] != 10 || floors["b"] != 20 {
		t.Fatalf("keys repair read %v; want a 10 and b 20 from two pages", floors)
	}
	keys, err := httpwire.AllKeys(context.Background(), srv.URL, "")
	if err != nil || len(keys.Keys) != 2 || keys.Keys[1].Key != "b" {
		t.Fatalf("doctor read %d keys (%v); want both pages", len(keys.Keys), err)
	}
}
