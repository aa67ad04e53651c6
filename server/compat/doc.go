// Package compat serves the HTTP APIs of two other ID issuers over an
// idforge issuer, so that their clients work unchanged against idforge.
//
// # Tinyid (Didi)
//
// Under /tinyid/id/, any method, parameters in the query string or a
// url-encoded form body, as Tinyid's Spring controller takes them:
//
//	nextId?bizType=K&batchSize=N       {"data":[1,2,3],"code":200,"message":""}
//	nextIdSimple?bizType=K&batchSize=N 1,2,3
//	nextSegmentId?bizType=K            {"data":{"maxId":2000,"loadingId":1200,"currentId":1000,"delta":1,"remainder":0},"code":200,"message":""}
//	nextSegmentIdSimple?bizType=K      1000,1200,2000,1,0
//
// bizType is the key. batchSize defaults to 1; larger than
// idforge.MaxCount it is cut to idforge.MaxCount, as Tinyid cuts it to
// batch.size.max (whose default is the same number). A segment key's IDs increase; a snowflake key also
// works for nextId.
//
// A segment handed out by nextSegmentId is a range claimed from the store
// for that one caller, exactly like Tinyid's own server does: the client
// issues the IDs in (currentId, maxId] itself, and no other client or node
// ever receives any of them. Its length is the key's stored step. delta is
// always 1 and remainder 0 (every value of the range is the client's);
// loadingId is where Tinyid's client starts fetching the next segment,
// 20% into the range, as Tinyid computes it.
//
// The token parameter is not checked here: wrap the handler with the auth
// middleware, which reads it (auth.DefaultClassify authorizes bizType).
//
// # Vesta
//
// Vesta's REST mode, any method, query parameters:
//
//	/genid                      13137514684481537 (plain text: an ID of the node's generator)
//	/expid?id=13137514684481537 {"genMethod":0,"machine":1,"seq":0,"time":12235264,"type":0,"version":0}
//	/transtime?time=12235264    Fri May 22 14:41:04 CST 2015 (Java's Date.toString, in Options.Location)
//	/makeid?time=12235264&seq=0&machine=1[&genMethod=0][&type=0][&version=0]
//	                            13137514684481537 (plain text)
//
// (With the vesta-max-peak layout, worker 1, Asia/Shanghai. Vesta's own
// REST guide decodes its example to these fields and this time, but its
// example ID predates Vesta's current bit order, machine lowest; idforge
// follows the current order.)
//
// The fields come from the node's snowflake layout: time is the raw time
// field (ticks of the layout's unit since its epoch), seq the sequence and
// machine the worker, with the datacenter above it when the layout has
// one (machine = datacenter × (max worker + 1) + worker, as Leaf shows
// it). genMethod and type are the layout's fixed fields "method" and
// "type" (the vesta-max-peak and vesta-min-granularity presets have them),
// 0 for layouts without them; version is Vesta's top bit, which is always
// 0 in idforge's 63-bit IDs. makeid defaults machine to this node's and
// genMethod and type to the layout's, and refuses values the layout
// cannot hold.
//
// # Parameters
//
// Parameters an endpoint does not read are ignored, as Tinyid's Spring
// controller and Vesta's REST servlet ignore them: Tinyid's Java client
// sends token and bizType, HTTP users add batchSize, and proxies or
// browsers add cache busters such as _=1700000000000. idforge's own /v1
// API refuses unknown parameters instead (see server/httpapi); these
// endpoints exist so that existing clients work unchanged, so they keep
// the leniency those clients were written against.
//
// # Errors
//
// Unlike Tinyid (which answers 200 with an error code, or an empty body)
// and Vesta (200 with an error text), every failure is a 4xx or 5xx with
// idforge's JSON body {"error":{"code","message"}}, statuses and codes
// from the one error vocabulary (idforge.Code), as in server/httpapi.
// Tinyid's clients treat any non-200 as a failure. The JSON Tinyid
// endpoints add Tinyid's own fields to the body, "code":6 and "message",
// for clients that read those.
package compat
