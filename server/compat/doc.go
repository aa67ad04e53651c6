// Package compat serves the HTTP APIs of Didi's Tinyid and of Vesta over
// an idforge issuer, so that their clients work unchanged.
//
// Tinyid, under /tinyid/id/, GET or POST, parameters in the query string
// or a url-encoded form body, as Tinyid's Spring controller takes them:
//
//	nextId?bizType=K&batchSize=N       {"data":[1,2,3],"code":200,"message":""}
//	nextIdSimple?bizType=K&batchSize=N 1,2,3
//	nextSegmentId?bizType=K            {"data":{"maxId":2000,"loadingId":1200,"currentId":1000,"delta":1,"remainder":0},"code":200,"message":""}
//	nextSegmentIdSimple?bizType=K      1000,1200,2000,1,0
//
// bizType is the key; batchSize defaults to 1 and is cut to
// idforge.MaxCount. A segment from nextSegmentId is a range claimed from
// the store for that one caller, of the key's stored step, whose IDs
// (currentId, maxId] the client issues itself: no other client or node
// receives any of them. delta is 1, remainder 0, and loadingId 20% into
// the range, as Tinyid computes it. The token is checked by the auth
// middleware (auth.DefaultClassify authorizes bizType); TinyidRefusal
// answers its refusals as Tinyid does.
//
// Vesta's REST mode, query parameters; /genid takes GET or POST, the
// others any method:
//
//	/genid                      an ID of the node's generator (plain text)
//	/expid?id=13137514684481537 {"genMethod":0,"machine":1,"seq":0,"time":12235264,"type":0,"version":0}
//	/transtime?time=12235264    Java's Date.toString in Options.Location
//	/makeid?time=12235264&seq=0&machine=1[&genMethod=0][&type=0][&version=0]
//
// The fields come from the node's snowflake layout: time is the raw time
// field, seq the sequence, machine the worker, with the datacenter above
// it when the layout has one (datacenter × (max worker + 1) + worker);
// genMethod and type are the layout's fixed fields "method" and "type", 0
// where it has none; version is always 0. makeid defaults machine to this
// node's and genMethod and type to the layout's, and refuses values the
// layout cannot hold.
//
// An endpoint that issues values (Tinyid's four, Vesta's /genid) answers
// HEAD, which would draw values and lose them with the answer's body, and
// any method but GET and POST with 405 method_not_allowed, drawing
// nothing.
//
// Parameters an endpoint does not read are ignored, as Tinyid and Vesta
// ignore them (clients add tokens and cache busters), unlike idforge's own
// /v1 API. Every other failure is a 4xx or 5xx with idforge's JSON error
// body, statuses and codes from idforge.Code; the JSON Tinyid endpoints
// add Tinyid's "code":6 and "message" for clients that read those.
package compat
