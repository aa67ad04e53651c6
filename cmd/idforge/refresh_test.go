package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/idforge/idforge/internal/e2e"
	"github.com/idforge/idforge/internal/testsvc"
	"github.com/idforge/idforge/store/mongo"
)

// Keys added or changed by hand in the database take effect on a running
// node, as operators of Leaf do it: a row inserted into leaf_alloc shows
// in /v1/keys at the next refresh and issues at once, and a changed step
// is what the node claims from its next segment on.
func TestKeysEditedByHand(t *testing.T) {
	endToEnd(t, parallel)
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			storeURL := db.fresh(t)
			migrate(t, storeURL)
			edit := handEditor(t, db.name, storeURL)
			cfg := filepath.Join(t.TempDir(), "idforge.toml")
			// Segments of exactly the stored step: max_step 10 stops the
			// adaptive growth, and the stored step is the floor.
			os.WriteFile(cfg, []byte("refresh_keys = \"200ms\"\n[segment]\nmax_step = 10\n"), 0o600)
			n := e2e.StartNode(t, "--store", storeURL, "--config", cfg)
			ctx := context.Background()

			edit.insert()
			deadline := time.Now().Add(10 * time.Second)
			for {
				_, body, err := e2e.Get(ctx, n.URL("/v1/keys"))
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(body, `"key":"handmade"`) && strings.Contains(body, "inserted by hand") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the hand-inserted key never showed in /v1/keys:\n%s", body)
				}
				time.Sleep(50 * time.Millisecond)
			}
			var last int64
			for want := int64(1); want <= 25; want++ {
				id, err := e2e.FetchID(ctx, n.URL("/api/segment/get/handmade"))
				if err != nil || id != want {
					t.Fatalf("handmade ID %d = %d, %v", want, id, err)
				}
				last = id
			}

			// The step changed by hand: the node learns it with its next
			// claim and claims 40 at a time from then on.
			edit.setStep(40)
			maxID := edit.maxID
			take := func(count int) {
				t.Helper()
				for range count {
					id, err := e2e.FetchID(ctx, n.URL("/api/segment/get/handmade"))
					if err != nil || id <= last {
						t.Fatalf("after the step change: %d after %d, %v", id, last, err)
					}
					last = id
				}
			}
			take(60) // the segments claimed at the old step, and the first claim that saw the new one
			before := maxID()
			take(200)
			if grew := maxID() - before; grew%40 != 0 || grew < 160 {
				t.Fatalf("max_id grew by %d over 200 IDs: want claims of the new step 40 (at the old 10 it grows in 10s)", grew)
			}
		})
	}
}

// handEdits are an operator's edits of the key "handmade" in a database,
// by hand, with the database's own tools.
type handEdits struct {
	insert  func()           // adds it: max_id 1, step 10, "inserted by hand"
	setStep func(step int64) // changes its step
	maxID   func() int64     // reads its max_id
}

// handEditor returns the edits for the database named name (an entry of
// databases) at storeURL.
func handEditor(t *testing.T, name, storeURL string) handEdits {
	ctx := context.Background()
	if name == "mongodb" {
		keys := testsvc.MongoDB(t, storeURL).Collection(mongo.KeysCollection)
		id := bson.D{{Key: "_id", Value: "handmade"}}
		return handEdits{
			insert: func() {
				_, err := keys.InsertOne(ctx, bson.D{{Key: "_id", Value: "handmade"}, {Key: "strategy", Value: "segment"},
					{Key: "max_id", Value: int64(1)}, {Key: "step", Value: int64(10)}, {Key: "description", Value: "inserted by hand"}})
				if err != nil {
					t.Fatal(err)
				}
			},
			setStep: func(step int64) {
				if _, err := keys.UpdateOne(ctx, id, bson.D{{Key: "$set", Value: bson.D{{Key: "step", Value: step}}}}); err != nil {
					t.Fatal(err)
				}
			},
			maxID: func() int64 {
				t.Helper()
				var doc struct {
					MaxID int64 `bson:"max_id"`
				}
				if err := keys.FindOne(ctx, id).Decode(&doc); err != nil {
					t.Fatal(err)
				}
				return doc.MaxID
			},
		}
	}
	sqlDB := testsvc.MySQLDB
	if name == "postgres" {
		sqlDB = testsvc.PostgresDB
	}
	conn := sqlDB(t, storeURL)
	return handEdits{
		insert: func() {
			if _, err := conn.ExecContext(ctx, "INSERT INTO leaf_alloc(biz_tag, max_id, step, description) VALUES('handmade', 1, 10, 'inserted by hand')"); err != nil {
				t.Fatal(err)
			}
		},
		setStep: func(step int64) {
			if _, err := conn.ExecContext(ctx, "UPDATE leaf_alloc SET step = "+strconv.FormatInt(step, 10)+" WHERE biz_tag = 'handmade'"); err != nil {
				t.Fatal(err)
			}
		},
		maxID: func() int64 {
			t.Helper()
			var v int64
			if err := conn.QueryRowContext(ctx, "SELECT max_id FROM leaf_alloc WHERE biz_tag = 'handmade'").Scan(&v); err != nil {
				t.Fatal(err)
			}
			return v
		},
	}
}
