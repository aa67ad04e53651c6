// Package tickets is Flickr-style ticket servers on MySQL and MariaDB:
// N databases, server i issuing i, i+N, i+2N, … from an auto-increment
// column, taken round robin by the clients, and Expand, which changes N
// while they issue without a ticket repeating.
//
// Each server is one database holding two tables, created by Expand:
//
//	tickets(id bigint unsigned AUTO_INCREMENT PRIMARY KEY, stub char(1) UNIQUE)
//	tickets_config(id = 1, servers, position, base, ceiling, gen, cluster)
//
// The configuration row says that the server is number position of a
// set of servers and issues tickets ≡ position (mod servers), above base
// and, while an expansion is under way, at most ceiling. Each client
// session sets auto_increment_increment and auto_increment_offset from
// it (the server variables are left alone, so the databases of one MySQL
// server can be separate ticket servers). A ticket is one REPLACE … SELECT
// that inserts only while the configuration the session was set up for is
// current and the failover fence idforge_fence names the server it runs
// on (see Source.Next); a client hands out only tickets of its
// configuration's residue, above base and within the ceiling.
//
// Importing the package registers "tickets+mysql" with sequence.Open:
//
//	tickets+mysql://user:password@host1:3306/tickets?also=host2:3306/tickets,host3:3306/tickets
//
//	also            more servers, host:port/database, with the same user,
//	                password and parameters; the URL's own server first
//	table           the ticket table (default tickets; its configuration
//	                table is <table>_config)
//	rescue          how long a failing server is left aside (default 5s)
//	max_open_conns  connections per server (default 10)
//	timeout         bound on each ticket without an earlier deadline (3s)
//
// Other parameters are go-sql-driver/mysql's; auto_increment_increment and
// auto_increment_offset are refused. Open fails when no listed server is
// configured.
//
// A server that fails (down, unconfigured, at its ceiling, or fenced) is
// left aside for the rescue time and the next one answers; when none can,
// Next returns an error wrapping idforge.ErrUnavailable with each server's
// error (idforge.ErrStoreFailedOver when they are fenced). A fenced server,
// a promoted replica that may lack the last tickets, stays refused until
// RepairFailover moves it above every ticket handed out and accepts the
// new server. A ticket is as durable as its server's commit. Clients use
// the servers they list: restart them with the longer list after Expand.
package tickets
