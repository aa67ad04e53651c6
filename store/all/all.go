// Package all registers every idforge store backend with store.Open, for
// the idforge binary (a blank import). Programs that embed idforge import
// only the backend they use and construct it directly.
package all

import (
	_ "github.com/idforge/idforge/store/mongo"    // schemes "mongodb", "mongodb+srv"
	_ "github.com/idforge/idforge/store/mysql"    // scheme "mysql"
	_ "github.com/idforge/idforge/store/postgres" // schemes "postgres", "postgresql"
	_ "github.com/idforge/idforge/store/redis"    // scheme "redisseg" (Redis in front of one of the others)
	_ "github.com/idforge/idforge/store/shards"   // schemes "shards+mysql", "shards+postgres", "shards+sqlite"
	_ "github.com/idforge/idforge/store/sqlite"   // scheme "sqlite"
)
