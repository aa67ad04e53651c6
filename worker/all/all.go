// Package all links every coordinated worker-ID provider into a program,
// so that --worker accepts etcd://, zk://, redis://, mysql://, postgres://
// and sqlite:// URLs. The idforge binary imports it; library users import
// just the providers they use.
package all

import (
	_ "github.com/idforge/idforge/worker/etcd"      // etcd://
	_ "github.com/idforge/idforge/worker/redis"     // redis://
	_ "github.com/idforge/idforge/worker/sql"       // mysql://, postgres://, sqlite://
	_ "github.com/idforge/idforge/worker/zookeeper" // zk://
)
