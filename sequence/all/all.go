package all

import (
	_ "github.com/idforge/idforge/sequence/autoinc"  // autoinc+mysql, autoinc+postgres, autoinc+sqlite
	_ "github.com/idforge/idforge/sequence/memcache" // memcache
	_ "github.com/idforge/idforge/sequence/mongo"    // mongodb, mongodb+srv (sources and counters)
	_ "github.com/idforge/idforge/sequence/redis"    // redis, rediss (sources and counters)
	_ "github.com/idforge/idforge/sequence/sqlrow"   // sqlrow+mysql, sqlrow+postgres, sqlrow+sqlite; counters: mysql, postgres, sqlite
	_ "github.com/idforge/idforge/sequence/tickets"  // tickets+mysql
)
