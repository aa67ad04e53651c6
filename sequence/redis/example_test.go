package redis_test

import (
	"context"
	"fmt"
	"log"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge/sequence/redis"
)

// A source on a primary that Sentinel fails over: each value is handed
// out only once a replica has it, so a promoted replica never hands it
// out again. (Not run: it needs the servers.)
func ExampleNewSource_sentinel() {
	ctx := context.Background()
	client := goredis.NewFailoverClient(&goredis.FailoverOptions{
		MasterName:    "mymaster",
		SentinelAddrs: []string{"sentinel1:26379", "sentinel2:26379", "sentinel3:26379"},
	})
	defer client.Close()
	src, err := redis.NewSource(ctx, client, redis.SourceConfig{
		Key:         "orders",
		MinReplicas: 1,                      // WAIT 1 after each INCR
		WaitTimeout: 200 * time.Millisecond, // then 503 unavailable, and the value is a gap
	})
	if err != nil {
		log.Fatal(err)
	}
	v, err := src.Next(ctx)
	if err != nil {
		log.Fatal(err) // wraps idforge.ErrUnavailable when no replica acknowledged in time
	}
	fmt.Println(v)
}
