// Package auth guards idforge's transports with bearer tokens.
//
// Tokens come from the config file or the environment. Each has a role,
// RoleIssue (take IDs, read keys) or RoleAdmin (everything, including
// creating keys), may be limited to a list of keys, and may carry a rate
// limit (requests per second and a burst). A request presents its token as
// "Authorization: Bearer <token>" (HTTP and gRPC metadata) or, over HTTP,
// as the token query or form parameter, which is how Tinyid's clients send
// it.
//
// Every request is classified first (see Access and DefaultClassify):
// open requests (health, readiness, metrics, the admin page's HTML) pass
// without a token; read requests need any valid token; issuing for a key
// needs a token allowed that key; admin requests need an admin token. The
// answers:
//
//	no token, or an unknown one       HTTP 401 unauthenticated  gRPC Unauthenticated
//	valid token, not allowed          HTTP 403 forbidden        gRPC PermissionDenied
//	over the token's rate             HTTP 429 rate_limited     gRPC ResourceExhausted
//
// HTTP errors use idforge's JSON body {"error":{"code","message"}}; a 401
// carries WWW-Authenticate: Bearer and a 429 Retry-After. gRPC errors
// carry the code as their ErrorInfo reason, as every idforge error does.
//
// A presented token is compared with every configured one in constant time
// (SHA-256 digests compared with crypto/subtle, without stopping at the
// first match), so neither timing nor length tells which token, if any,
// matched. Tokens never appear in errors or logs; configured tokens are
// named by their Name or their position.
//
// CheckExposure refuses a server that listens beyond the loopback
// interface without tokens, and ServerTLS builds the TLS configuration
// (TLS 1.2 or later, client certificates required when a CA is given).
//
// An Authenticator is safe for concurrent use.
package auth
