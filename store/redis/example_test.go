package redis_test

import (
	"context"
	"fmt"
	"log"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/mysql"
	"github.com/idforge/idforge/store/redis"
)

// An embedding program puts Redis in front of a database it opened
// itself. (Not run: it needs both servers.)
func ExampleNew() {
	ctx := context.Background()
	cfg, err := mysql.ParseURL("mysql://idforge:secret@db.internal:3306/idforge")
	if err != nil {
		log.Fatal(err)
	}
	db, err := mysql.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	st, err := redis.New(redis.Config{
		Redis:  goredis.NewClient(&goredis.Options{Addr: "redis.internal:6379"}),
		DB:     db,
		Factor: 20, // one reservation in MySQL per 20 claims
	})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close() // closes the Redis client and db too

	err = st.CreateKey(ctx, idforge.Key{Name: "orders", Strategy: idforge.StrategySegment, MaxID: 1, Step: 2000})
	if err != nil {
		log.Fatal(err)
	}
	seg, err := st.ClaimSegment(ctx, "orders", 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("[%d, %d)\n", seg.Start, seg.End) // [1, 2001), from Redis; MySQL's max_id is 40000 ahead or more
}
