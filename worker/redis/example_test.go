package redis_test

import (
	"context"
	"fmt"
	"log"

	goredis "github.com/redis/go-redis/v9"

	"github.com/idforge/idforge/worker"
	"github.com/idforge/idforge/worker/redis"
)

// Worker IDs on a Redis Cluster: the prefix becomes a hash tag, so every
// key of the provider is in one slot, and each acquire and renewal waits
// for a replica of that slot. (Not run: it needs the cluster.)
func ExampleNew_cluster() {
	ctx := context.Background()
	client := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"node1:6379", "node2:6379", "node3:6379"}})
	p, err := redis.New(redis.Config{Client: client, Prefix: "shop:workers", MinReplicas: 1}, worker.Options{Owner: "10.0.0.7:8080"})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	defer p.Close()
	lease, err := p.Acquire(ctx, 1023)
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release(ctx)
	fmt.Println(lease.ID())
}
