// Package all registers every idforge store backend with the store
// registry. The idforge binary imports it for its side effect:
//
//	import _ "github.com/idforge/idforge/store/all"
//
// after which store.Open accepts each backend's URL scheme. It has no API
// of its own. Programs that embed idforge should import only the backend
// they use and construct it directly.
//
// A new backend is added here with one blank import line.
package all

import (
	_ "github.com/idforge/idforge/store/mongo"    // schemes "mongodb", "mongodb+srv"
	_ "github.com/idforge/idforge/store/mysql"    // scheme "mysql"
	_ "github.com/idforge/idforge/store/postgres" // schemes "postgres", "postgresql"
	_ "github.com/idforge/idforge/store/redis"    // scheme "redisseg" (Redis in front of one of the others)
	_ "github.com/idforge/idforge/store/sqlite"   // scheme "sqlite"
)
