// Package tickets is Flickr-style ticket servers on MySQL and
// MariaDB: N databases, server i issuing i, i+N, i+2N, … from an
// auto-increment column with auto_increment_increment = N and
// auto_increment_offset = i, taken round robin by the clients, and a
// procedure, Expand, that changes N while they issue.
//
// # Servers
//
// Each server is one database holding two tables (created by Expand):
//
//	tickets(id bigint unsigned AUTO_INCREMENT PRIMARY KEY, stub char(1) UNIQUE)
//	tickets_config(id = 1, servers, position, base, ceiling, gen, cluster)
//
// tickets_config says that the server is number position of a set of
// servers, and issues tickets ≡ position (mod servers), above base and,
// while an expansion is under way, at most ceiling. The increment and the
// offset are session variables, set on every connection of a client's
// pool from this row (the server variables of the same names would apply
// to every database of the server; per session, the databases of one
// MySQL server can be separate ticket servers, as the tests use them).
// The server variables are left alone.
//
// A ticket is one statement on one connection:
//
//	REPLACE INTO tickets (stub) SELECT 'a' FROM tickets_config WHERE id = 1 AND gen = ? LOCK IN SHARE MODE
//
// whose LAST_INSERT_ID comes back in its reply. It inserts only while
// the configuration the client's sessions were set up for is current; if
// it inserts nothing, the client reloads the row, rebuilds its pool with
// the new increment and offset, and tries again. A client hands a ticket
// out only if it is ≡ position (mod servers), above base and within the
// ceiling; a ticket past the ceiling leaves the server aside until the
// expansion has switched it.
//
// # URL
//
// Importing the package registers "tickets+mysql" with sequence.Open:
//
//	tickets+mysql://user:password@host1:3306/tickets?also=host2:3306/tickets,host3:3306/tickets
//
//	also            more servers: host:port/database, same user, password
//	                and parameters; the URL's own server comes first
//	table           the ticket table (default tickets; its configuration
//	                table is <table>_config)
//	rescue          how long a failing server is left aside (default 5s)
//	max_open_conns  connections per server (default 10)
//	timeout         bound on each ticket without an earlier deadline (3s)
//
// Other parameters are go-sql-driver/mysql's; auto_increment_increment
// and auto_increment_offset are refused (they come from the servers).
// Open (and sequence.Open) fails when no listed server is configured.
//
// # Failures
//
// A server that fails (down, unconfigured, at its ceiling) is left aside
// for the rescue time and the next one answers; when none can, Next
// returns an error wrapping idforge.ErrUnavailable with each server's
// error. A client crash loses the ticket in flight at most. A ticket is
// as durable as the server's commit: with a crash that loses commits
// (innodb_flush_log_at_trx_commit ≠ 1) tickets repeat; run each server
// with durable commits.
//
// # Fail-over
//
// A replica promoted after a fail-over may lack the last tickets, and its
// auto-increment counter would hand them out again. Expand creates, in
// every server's database, the failover fence of idforge's SQL tables,
// idforge_fence (the segment store and the sqlrow and autoinc sources use
// it too), recording the server it runs on; the REPLACE ANDs
//
//	EXISTS (SELECT 1 FROM idforge_fence WHERE id = 1 AND server = <this server>)
//
// into its WHERE clause. The row is replicated with the tickets, so on a
// promoted replica it names the old primary: the REPLACE inserts nothing,
// and the Source leaves the server aside with an error wrapping
// idforge.ErrStoreFailedOver (code store_failed_over, 503) that names both
// servers, until RepairFailover (`idforge keys repair --floor N --sequence
// tickets+mysql://…`) moves the server above every ticket handed out and
// accepts the new server. The fence costs a primary-key read in the
// REPLACE (BENCHMARKS.md). A set configured before the fence existed is
// not fenced until Expand runs again over the same servers, which creates
// it; clients see it once they reload the configuration or restart.
//
// # Expansion
//
// Expand configures fresh servers, or moves a running set from N to more
// servers, while clients issue; its documentation explains the procedure
// and why no ticket can repeat. Status shows each server's configuration.
// Clients keep using the servers they list: restart them with the longer
// list to use the new servers.
package tickets
