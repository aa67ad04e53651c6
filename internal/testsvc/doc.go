// Package testsvc gives tests a real database of their own on the MariaDB
// (MySQL protocol) and PostgreSQL servers of the development machine.
//
// MySQL and Postgres create a fresh, empty database with a random name
// (idforge_t_<hex>), drop it when the test ends, and return the idforge
// store URL for it. MySQLDB and PostgresDB open such a database directly,
// for tests that set up tables by hand (as Leaf or an operator would).
// Mongo does the same on the MongoDB server (FerretDB, built from
// tools/ferretdb, in development and CI), and MongoDB hands out such a
// database for documents written by hand.
//
// The servers are found through the admin URLs in the environment:
//
//	IDFORGE_TEST_MYSQL     default mysql://root@127.0.0.1:3306/
//	IDFORGE_TEST_POSTGRES  default postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
//	IDFORGE_TEST_MONGO     default mongodb://127.0.0.1:27017/
//
// For Redis, Redis gives a test a key prefix of its own on the shared
// server, while StartRedisServer, StartRedisSentinels,
// StartRedisSentinelSet and StartRedisCluster start servers, sentinels and
// clusters of the test's own on free loopback ports (Debian's
// redis-server, redis-sentinel and redis-tools), which a fail-over test
// may freeze (Stop), kill and restart.
//
// The admin user must be allowed to create and drop databases. When a
// server cannot be reached the test is skipped with a message saying how
// to start it, except under CI (CI=true), where a missing service is a
// failure.
package testsvc
